"""Idle scale-to-zero (DESIGN §6): give an idle cluster's quota back to the queue.

:mod:`~rayqueue_sdk.scaling.policy` is the I/O shell (discovery, apply/remove of the objects, resume,
status, dry run) over the pure builders of :mod:`rayqueue_sdk.manifests.scaling`;
:mod:`~rayqueue_sdk.scaling.agent` is the in-cluster reaper, one standard-library-only file shipped in a
ConfigMap; :mod:`~rayqueue_sdk.scaling.seeds` renders seed 000's objects for the docs.
"""
