"""Cluster descriptions: pydantic models, their fields and checks, quantities, accelerators, the Ray image.

Pure: no I/O. The models live in :mod:`rayqueue_sdk.config.models`.
"""
