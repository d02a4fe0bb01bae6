"""Kubernetes API machinery, pure: object metadata, selectors, patches, Status bodies, field errors."""
