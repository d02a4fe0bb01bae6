"""``get_ray_image_for_python_version``: codeflare-sdk's helper, over :mod:`.constants`.

Example:
    >>> get_ray_image_for_python_version("3.11").endswith("-py311-gpu")
    True
"""

from __future__ import annotations

import sys
import warnings

from rayqueue_sdk.common.utils.constants import CUDA_PY312_RUNTIME_IMAGE, SUPPORTED_PYTHON_VERSIONS

__all__ = ["get_ray_image_for_python_version"]


def get_ray_image_for_python_version(
    python_version: str | None = None, warn_on_unsupported: bool = True
) -> str | None:
    """The CUDA Ray image for ``python_version`` (``"3.12"``; default: this interpreter's).

    A version without an image warns and returns ``None`` (``warn_on_unsupported=True``, as codeflare-sdk)
    or silently returns the Python 3.12 image.

    Example:
        >>> get_ray_image_for_python_version("3.12") == CUDA_PY312_RUNTIME_IMAGE
        True
        >>> get_ray_image_for_python_version("3.9", warn_on_unsupported=False) == CUDA_PY312_RUNTIME_IMAGE
        True
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     get_ray_image_for_python_version("3.9"), len(caught)
        (None, 1)
    """
    version = python_version or f"{sys.version_info.major}.{sys.version_info.minor}"
    image = SUPPORTED_PYTHON_VERSIONS.get(version)
    if image is not None:
        return image
    if warn_on_unsupported:
        warnings.warn(
            f"No default Ray image defined for Python {version}: give your own image, or use one of "
            f"Python {', '.join(SUPPORTED_PYTHON_VERSIONS)}",
            stacklevel=2,
        )
        return None
    return CUDA_PY312_RUNTIME_IMAGE
