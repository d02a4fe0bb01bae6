"""The only SDK code that talks to the Kubernetes API server.

Its modules, bottom-up (each imports only those above it in this list):

- :mod:`~rayqueue_sdk.kube.errors`: ``kubernetes``/``urllib3`` exceptions → the error tree;
- :mod:`~rayqueue_sdk.kube.retry`: bounded retries with jitter (429 ``Retry-After``, 5xx, drops);
- :mod:`~rayqueue_sdk.kube.connection`: the ``ApiClient`` factory, one ``ClientState`` per client (its info
  and discovery cache) and the process-wide current client;
- :mod:`~rayqueue_sdk.kube.rest`: the one HTTP request builder (``send``) and the credential check's GET;
- :mod:`~rayqueue_sdk.kube.auth`: token, kubeconfig and in-cluster login, auto-detection;
- :mod:`~rayqueue_sdk.kube.client`: ``get_client()``: the given client, the login, or detected credentials;
- :mod:`~rayqueue_sdk.kube.kinds`: the resource types (``Kind``) and their REST paths;
- :mod:`~rayqueue_sdk.kube.normalize`: Kueue ``v1beta1`` objects read with ``v1beta2`` field names;
- :mod:`~rayqueue_sdk.kube.session`: ``KubeSession``: the client, the default namespace, discovery, and
  get/list/create/apply/patch/delete by kind over one REST path;
- :mod:`~rayqueue_sdk.kube.lookups`: reads over a session that take a choice (a Workload by owner, the
  visibility API's pending workloads, a RayCluster that may be misnamed);
- :mod:`~rayqueue_sdk.kube.access`: may the caller do this (``kubectl auth can-i``);
- :mod:`~rayqueue_sdk.kube.watch`: a list-then-watch loop that resumes, relists and backs off.

The kube layer does not import :mod:`rayqueue_sdk.admission`: what an object's state means is decided
above it. ``kubernetes`` is imported inside functions only (lazily), so importing this package is cheap.
"""
