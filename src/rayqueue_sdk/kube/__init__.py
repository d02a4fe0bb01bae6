"""The only SDK code that talks to the Kubernetes API server.

- :mod:`~rayqueue_sdk.kube.client`: the ``ApiClient`` factory and the process-wide current client;
- :mod:`~rayqueue_sdk.kube.auth`: token, kubeconfig and in-cluster login, auto-detection;
- :mod:`~rayqueue_sdk.kube.errors`: ``kubernetes``/``urllib3`` exceptions → the error tree;
- :mod:`~rayqueue_sdk.kube.retry`: bounded retries with jitter (429 ``Retry-After``, 5xx, drops);
- :mod:`~rayqueue_sdk.kube.resources`: typed helpers for RayClusters, RayJobs and Kueue objects;
- :mod:`~rayqueue_sdk.kube.watch`: a list-then-watch loop that resumes, relists and backs off.

``kubernetes`` is imported inside functions only, so importing this package is cheap.
"""
