"""Cluster descriptions: pydantic models, their fields and checks, accelerators.

Pure: no I/O. The models live in :mod:`rayqueue_sdk.config.models`. They check their values with the
Kubernetes, Kueue and KubeRay rules of :mod:`rayqueue_sdk.manifests` (the layer below: quantities, names,
labels, the default Ray image), the same rules that run over a rendered manifest.
"""
