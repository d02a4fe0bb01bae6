"""codeflare-sdk's Ray image constants, as upstream Ray images for the Ray installed here.

codeflare-sdk pins Red Hat's CUDA Ray images by digest (``quay.io/modh/ray@sha256:...``), for the Ray
version it tests. Here the CUDA images are the upstream ``rayproject/ray:<ray>-py3XX-gpu`` for the Ray
version installed locally, the same version rule as the default (CPU) image
(:func:`rayqueue_sdk.manifests.ray_image.default_image`), so a cluster and the notebook that drives it
run the same Ray.

Example:
    >>> CUDA_PY312_RUNTIME_IMAGE.startswith("rayproject/ray:")
    True
    >>> CUDA_PY312_RUNTIME_IMAGE.endswith("-py312-gpu")
    True
    >>> sorted(SUPPORTED_PYTHON_VERSIONS)
    ['3.10', '3.11', '3.12']
"""

from __future__ import annotations

from rayqueue_sdk.manifests.ray_image import ray_version

__all__ = [
    "CUDA_PY310_RUNTIME_IMAGE",
    "CUDA_PY311_RUNTIME_IMAGE",
    "CUDA_PY312_RUNTIME_IMAGE",
    "RAY_VERSION",
    "SUPPORTED_PYTHON_VERSIONS",
]

#: The Ray version the images carry: the installed ``ray`` distribution's (``"latest"`` without Ray).
RAY_VERSION: str = ray_version() or "latest"
#: Upstream Ray's CUDA image for Python 3.10.
CUDA_PY310_RUNTIME_IMAGE = f"rayproject/ray:{RAY_VERSION}-py310-gpu"
#: Upstream Ray's CUDA image for Python 3.11.
CUDA_PY311_RUNTIME_IMAGE = f"rayproject/ray:{RAY_VERSION}-py311-gpu"
#: Upstream Ray's CUDA image for Python 3.12 (codeflare-sdk's fallback when a Python has no image).
CUDA_PY312_RUNTIME_IMAGE = f"rayproject/ray:{RAY_VERSION}-py312-gpu"
#: Python version (``"3.12"``) -> its CUDA Ray image.
SUPPORTED_PYTHON_VERSIONS: dict[str, str] = {
    "3.10": CUDA_PY310_RUNTIME_IMAGE,
    "3.11": CUDA_PY311_RUNTIME_IMAGE,
    "3.12": CUDA_PY312_RUNTIME_IMAGE,
}
