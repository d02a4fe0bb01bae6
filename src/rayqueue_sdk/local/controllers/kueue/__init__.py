"""Kueue's behaviour for the local control plane: admission, queues, priorities and preemption.

The pure part (``engine``, ``quota``, ``flavors``, ``preemption``, ``workloads``) does no I/O;
``controller``, ``webhook`` and ``visibility`` connect it to the store and the HTTP server.
It follows Kueue v0.19.2 with its default feature gates; see ``docs`` in each module.
"""
