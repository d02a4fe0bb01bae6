"""The ``rayqueue`` command, one module per command group.

:mod:`~rayqueue_sdk.cli.main` is the entry point.
"""
