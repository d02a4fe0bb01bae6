"""``codeflare_sdk.common.utils``'s helpers that have a meaning here: :mod:`.constants` (Ray images) and
:mod:`.utils` (``get_ray_image_for_python_version``).

Example:
    >>> from rayqueue_sdk.common.utils.utils import get_ray_image_for_python_version
    >>> get_ray_image_for_python_version("3.12").endswith("-py312-gpu")
    True
"""
