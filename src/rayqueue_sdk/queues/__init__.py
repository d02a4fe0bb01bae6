"""The queues and their usage, read from the API server: the LocalQueues and a cluster's place in them
(:mod:`~rayqueue_sdk.queues.local_queues`), the one read of a namespace's queues
(:mod:`~rayqueue_sdk.queues.reads`) behind the overview, ``will_it_fit()`` and ``view_queues()``
(:mod:`~rayqueue_sdk.queues.overview`), the admission estimate (:mod:`~rayqueue_sdk.queues.eta`), the
queue timeline (:mod:`~rayqueue_sdk.queues.timeline`) and GPU-hours per cluster
(:mod:`~rayqueue_sdk.queues.usage`). The decisions are :mod:`rayqueue_sdk.admission`'s (pure); this package
is their I/O shell.
"""
