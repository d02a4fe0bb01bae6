"""Ray's own KubeRay autoscaler for one local RayCluster, pointed at the local control plane's API server.

On Kubernetes, KubeRay runs the autoscaler as a sidecar of the head Pod
(``ray kuberay-autoscaler --cluster-name NAME --cluster-namespace NS``, i.e.
``ray.autoscaler._private.kuberay.run_autoscaler.run_kuberay_autoscaler``): Ray's monitor reads the
cluster's demand from the head's GCS and, through the KubeRay node provider
(``ray.autoscaler._private.kuberay.node_provider``), lists the cluster's Pods and patches the
RayCluster's ``workerGroupSpecs[i].replicas`` and ``scaleStrategy.workersToDelete``. Its policy
(bin packing, ``upscalingMode``, ``idleTimeoutSeconds``) is Ray's, untouched here.

The node provider finds the API server at ``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT_HTTPS``,
verifies it with ``$RAY_KUBERAY_CA_CERT_PATH`` and authenticates with the Pod's service-account token
file, a fixed path (``/var/run/secrets/kubernetes.io/serviceaccount/token``) that a local process does
not have. This wrapper (``python -m rayqueue_local.runtime.rayautoscaler --token-file F --cluster NAME
--namespace NS --gcs-address ADDR``) points that one path at ``F`` (a file only its owner reads) and
runs Ray's entry point; everything else comes from the environment, as in the sidecar.

Example:
    >>> parse_args(["--token-file", "/t", "--cluster", "c", "--namespace", "n", "--gcs-address", "a:1"])
    Namespace(token_file='/t', cluster='c', namespace='n', gcs_address='a:1')
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main", "parse_args"]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The wrapper's options."""
    parser = argparse.ArgumentParser(prog="python -m rayqueue_local.runtime.rayautoscaler")
    parser.add_argument("--token-file", required=True)
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--gcs-address", required=True)
    return parser.parse_args(list(argv))


def main(argv: Sequence[str] | None = None) -> None:
    """Run Ray's KubeRay autoscaler with the token at ``--token-file``."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # lazy: ray is heavy; only this process runs it
    from ray.autoscaler._private.kuberay import node_provider
    from ray.autoscaler._private.kuberay.run_autoscaler import run_kuberay_autoscaler

    node_provider.IN_CLUSTER_TOKEN_PATH = args.token_file
    run_kuberay_autoscaler(args.cluster, args.namespace, args.gcs_address)


if __name__ == "__main__":  # pragma: no cover - run as a process by the KubeRay controller
    main()
