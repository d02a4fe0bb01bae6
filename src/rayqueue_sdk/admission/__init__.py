"""The admission state machines: what Kueue and KubeRay say about a RayCluster or a RayJob, as a phase.

Pure: dicts in, verdicts out, no I/O
(:mod:`~rayqueue_sdk.admission.cluster`, :mod:`~rayqueue_sdk.admission.job`).
"""
