"""Which kubectl commands work against the local control plane: a table for the notes and the docs.

Starts a plane (Kueue and KubeRay on, real Ray heads, no KEDA/Prometheus), points the machine's real
kubectl at it through the plane's kubeconfig, runs a list of everyday commands in order and prints one
row per command: OK, or FAIL with kubectl's first error line. The kubectl tests under
tests/local/server/kubectl/ assert these behaviours; this script only reports them.

    python3 scripts/kubectl_matrix.py [--markdown]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rayqueue_local import LocalControlPlane

NS = "matrix"
RAYCLUSTER = f"""
apiVersion: ray.io/v1
kind: RayCluster
metadata: {{name: rc, namespace: {NS}}}
spec:
  rayVersion: "2.41.0"
  headGroupSpec:
    rayStartParams: {{}}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.41.0
          resources: {{limits: {{cpu: "1", memory: 2Gi}}, requests: {{cpu: "1", memory: 2Gi}}}}
"""
POD = f"""
apiVersion: v1
kind: Pod
metadata: {{name: hello, namespace: {NS}}}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: python:3.11
    command: ["python", "-c", "import time; print('hello from the pod', flush=True); time.sleep(600)"]
"""
EDITOR = "sed -i 's/a: b/a: edited/'"

#: (label, kubectl arguments as one shell-quoted line, stdin)
COMMANDS: list[tuple[str, str, str | None]] = [
    ("version", "version", None),
    ("api-resources", "api-resources", None),
    ("create namespace", f"create namespace {NS}", None),
    ("create configmap", f"create configmap cm --from-literal=a=b -n {NS}", None),
    ("create secret generic", f"create secret generic s --from-literal=a=b -n {NS}", None),
    ("edit (KUBE_EDITOR)", f"edit configmap cm -n {NS}", None),
    ("apply -f raycluster", "apply -f -", RAYCLUSTER),
    ("diff -f raycluster", "diff -f -", RAYCLUSTER),
    ("get rayclusters (columns)", f"get rayclusters -n {NS}", None),
    ("get rayclusters -o wide", f"get rayclusters -n {NS} -o wide", None),
    ("get --show-labels", f"get rayclusters -n {NS} --show-labels", None),
    ("explain rayclusters.spec", "explain rayclusters.spec", None),
    ("describe raycluster", f"describe raycluster rc -n {NS}", None),
    ("wait raycluster", f"wait --for=condition=HeadPodReady raycluster/rc -n {NS} --timeout=240s", None),
    ("auth whoami", "auth whoami", None),
    ("auth can-i", f"auth can-i create rayclusters -n {NS}", None),
    ("auth can-i --list", f"auth can-i --list -n {NS}", None),
    ("create serviceaccount", f"create serviceaccount robot -n {NS}", None),
    ("create token", f"create token robot -n {NS}", None),
    (
        "create rolebinding",
        f"create rolebinding rv --clusterrole=view --serviceaccount={NS}:robot -n {NS}",
        None,
    ),
    ("auth can-i --as=SA", f"auth can-i list pods -n {NS} --as=system:serviceaccount:{NS}:robot", None),
    ("create -f pod (command)", "create -f -", POD),
    ("wait pod Ready", f"wait --for=condition=Ready pod/hello -n {NS} --timeout=120s", None),
    ("logs pod", f"logs hello -n {NS}", None),
    ("logs --tail --timestamps", f"logs hello -n {NS} --tail=1 --timestamps", None),
    ("exec", f"exec hello -n {NS} -- python -c 'print(1)'", None),
    ("create job", f"create job once -n {NS} --image=python:3.11 -- python -c 'print(42)'", None),
    ("wait job complete", f"wait --for=condition=complete job/once -n {NS} --timeout=120s", None),
    ("logs job/NAME", f"logs job/once -n {NS}", None),
    ("create deployment", f"create deployment d -n {NS} --image=python:3.11 -- sleep 600", None),
    ("rollout status", f"rollout status deployment/d -n {NS} --timeout=120s", None),
    ("scale deployment", f"scale deployment/d --replicas=0 -n {NS}", None),
    ("logs head pod", f"logs -l ray.io/node-type=head -n {NS} --tail=3", None),
    ("port-forward svc head", f"port-forward svc/rc-head-svc 18265:8265 -n {NS}", None),
    ("get nodes", "get nodes", None),
    ("get crd", "get crd", None),
    ("delete namespace", f"delete namespace {NS} --wait=false", None),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        print("no kubectl on PATH (apt-get install kubernetes-client)", file=sys.stderr)
        return 2
    crds = Path(os.environ.get("RAYQUEUE_CRDS_DIR", Path(__file__).resolve().parents[2] / "shared" / "crds"))
    rows: list[tuple[str, bool, str]] = []
    with LocalControlPlane(crd_dir=crds, keda_enabled=False, prometheus_enabled=False) as cp:
        cache = tempfile.mkdtemp(prefix="kubectl-cache-")
        base = [kubectl, "--kubeconfig", str(cp.kubeconfig_path), "--cache-dir", cache]
        env = {**os.environ, "KUBE_EDITOR": EDITOR}
        for label, line, stdin in COMMANDS:
            argv = shlex.split(line)
            started = time.monotonic()
            try:
                if label.startswith("port-forward"):
                    ok, text = _port_forward(base + argv, env)
                else:
                    proc = subprocess.run(
                        base + argv,
                        input=stdin,
                        capture_output=True,
                        text=True,
                        env=env,
                        timeout=300,
                        check=False,
                    )
                    ok = proc.returncode == 0
                    text = (proc.stdout if ok else proc.stderr or proc.stdout).strip().splitlines()
                    text = text[0] if text else ""
            except subprocess.TimeoutExpired:
                ok, text = False, "timed out"
            rows.append((label, ok, f"{text[:90]} ({time.monotonic() - started:.1f} s)"))
    for label, ok, text in rows:
        if args.markdown:
            print(f"| `kubectl {label}` | {'OK' if ok else 'FAIL'} | {text.replace('|', '/')} |")
        else:
            print(f"{'OK  ' if ok else 'FAIL'} {label:28} {text}")
    print(f"{sum(ok for _, ok, _ in rows)} of {len(rows)} commands work", file=sys.stderr)
    return 0


def _port_forward(argv: list[str], env: dict[str, str]) -> tuple[bool, str]:
    """Run port-forward for a few seconds; OK if it says it is forwarding and the port answers."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = proc.communicate(timeout=8)
    except subprocess.TimeoutExpired:
        proc.terminate()
        out, err = proc.communicate()
    text = (out + err).strip().splitlines()
    ok = any("Forwarding from" in line for line in text)
    return ok, text[0] if text else ""


if __name__ == "__main__":
    sys.exit(main())
