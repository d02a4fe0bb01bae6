"""pytest fixtures for the local control plane (registered as the ``rayqueue_local`` plugin)."""
