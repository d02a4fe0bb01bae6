"""The local control plane: a loopback Kubernetes API with Kueue, KubeRay and KEDA behaviour.

A test double and a learning tool (DESIGN §5), not a production scheduler.
"""
