"""The default container image: the upstream Ray image for the locally installed Ray and Python.

The Ray version comes from the installed ``ray`` distribution's metadata; Ray itself is never imported.
:func:`ray_version` fills a RayCluster's ``spec.rayVersion``; :mod:`rayqueue_sdk.config.models` uses
:func:`default_image` as the models' default ``image``.

Example:
    >>> py = f"py{sys.version_info.major}{sys.version_info.minor}"
    >>> default_image() == f"rayproject/ray:{ray_version() or 'latest'}-{py}"
    True
"""

from __future__ import annotations

import functools
import sys

__all__ = ["default_image", "ray_version"]


@functools.lru_cache(maxsize=1)
def default_image() -> str:
    """The upstream Ray image for the local Ray and Python versions, e.g. ``rayproject/ray:2.60.0-py311``.

    Reads the installed ``ray`` distribution's version from its metadata (Ray is not imported). Without Ray
    installed it falls back to ``rayproject/ray:latest-py3XX``.

    Example:
        >>> default_image().startswith("rayproject/ray:")
        True
    """
    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    version = ray_version()
    return f"rayproject/ray:{version or 'latest'}-{py}"


@functools.lru_cache(maxsize=1)
def ray_version() -> str | None:
    """The installed Ray version (from package metadata, without importing Ray), or ``None``.

    Example:
        >>> isinstance(ray_version(), (str, type(None)))
        True
    """
    # lazy: importlib.metadata costs ~13 ms (email, zipfile, csv) and is needed only once a default image
    # is asked for, not at `import rayqueue_sdk`
    import importlib.metadata

    try:
        return importlib.metadata.version("ray")
    except importlib.metadata.PackageNotFoundError:
        return None
