"""codeflare-sdk's module paths, for notebooks that import from them: a thin facade over the SDK.

``rayqueue_sdk.common.kubernetes_cluster`` (``get_api_client``, ``set_api_client``, the authentication
classes), ``rayqueue_sdk.common.utils.constants`` (the Ray image constants),
``rayqueue_sdk.common.utils.utils`` (``get_ray_image_for_python_version``) and
``rayqueue_sdk.common.codeflare`` (``Codeflare``, ``SDKConfig``, ``JobOptions``; also at the package root).
Nothing else in the SDK imports this package.

Example:
    >>> from rayqueue_sdk.common.kubernetes_cluster import get_api_client
    >>> callable(get_api_client)
    True
"""
