"""Ray jobs, on an existing cluster or on a job-owned one.

:class:`~rayqueue_sdk.job.rayjob.RayJob` is the facade.
"""
