"""Long-running clusters: the Cluster facade, the read path and the wait.

:class:`~rayqueue_sdk.cluster.cluster.Cluster` is the facade.
"""
