#!/usr/bin/env bash
# Submit a job-owned nightly Ray job through a Kueue queue, stream its logs, and exit with rayqueue's
# exit code so the pipeline can branch on it (docs/ci.md; `rayqueue --help` lists the codes):
#   0 succeeded   3 queue/priority class not found   4 still queued or starting at the deadline
#   5 preempted   6 credentials refused   7 API server unreachable   8 the job failed (log tail printed)
#
# Settings (environment): KUBECONFIG (a kubeconfig the pipeline writes from its secret store; or
# RAYQUEUE_SERVER + RAYQUEUE_TOKEN [+ RAYQUEUE_CA_CERT], from which this script writes one, mode 0600),
# NAMESPACE, LOCAL_QUEUE, PRIORITY_CLASS (optional), JOB_NAME, ENTRYPOINT, CLUSTER_CONFIG (JSON),
# TIMEOUT (seconds), RAYQUEUE (the command; default `rayqueue`).
set -uo pipefail

read -r -a RQ <<< "${RAYQUEUE:-rayqueue}"   # the command, possibly several words
NAMESPACE=${NAMESPACE:-default}
LOCAL_QUEUE=${LOCAL_QUEUE:-batch-jobs-queue}
JOB_NAME=${JOB_NAME:-nightly-$(date -u +%Y%m%d-%H%M)}
ENTRYPOINT=${ENTRYPOINT:-python train.py}
CLUSTER_CONFIG=${CLUSTER_CONFIG:-'{"num_workers": 1}'}
TIMEOUT=${TIMEOUT:-3600}

if [ -z "${KUBECONFIG:-}" ] && [ -n "${RAYQUEUE_SERVER:-}" ]; then
  # a kubeconfig from the token, readable by this user only; the token is never echoed
  umask 077
  KUBECONFIG=$(mktemp)
  export KUBECONFIG
  trap 'rm -f "$KUBECONFIG"' EXIT
  {
    echo "apiVersion: v1"
    echo "kind: Config"
    echo "clusters: [{name: ci, cluster: {server: \"$RAYQUEUE_SERVER\"${RAYQUEUE_CA_CERT:+, certificate-authority: \"$RAYQUEUE_CA_CERT\"}}}]"
    echo "users: [{name: ci, user: {token: \"$RAYQUEUE_TOKEN\"}}]"
    echo "contexts: [{name: ci, context: {cluster: ci, user: ci, namespace: \"$NAMESPACE\"}}]"
    echo "current-context: ci"
  } > "$KUBECONFIG"
fi

common=(-n "$NAMESPACE")
[ -n "${KUBECONFIG:-}" ] && common+=(--kubeconfig "$KUBECONFIG")

submit=("${RQ[@]}" job submit "$JOB_NAME" "${common[@]}" --queue "$LOCAL_QUEUE"
        --cluster-config "$CLUSTER_CONFIG" --ttl 300 -e "$ENTRYPOINT")
[ -n "${PRIORITY_CLASS:-}" ] && submit+=(--priority "$PRIORITY_CLASS")

echo "::group::submit $JOB_NAME to LocalQueue $LOCAL_QUEUE"
"${submit[@]}"
code=$?
echo "::endgroup::"
if [ "$code" -ne 0 ]; then
  echo "submit failed with exit code $code" >&2
  exit "$code"
fi

# While Kueue holds the job in the queue and KubeRay starts its cluster there are no logs yet:
# `job status` says why it waits (its exit code is 0 until the job ends).
deadline=$((SECONDS + TIMEOUT))
while phase=$("${RQ[@]}" job status "$JOB_NAME" "${common[@]}" --json | sed -n 's/.*"phase": "\([a-z]*\)".*/\1/p');
      [ "$phase" = queued ] || [ "$phase" = starting ] || [ "$phase" = requeued ] || [ -z "$phase" ]; do
  [ "$SECONDS" -ge "$deadline" ] && break
  sleep 5
done

echo "::group::logs of $JOB_NAME"
# Streams each line as the job prints it, until the job ends.
"${RQ[@]}" job logs "$JOB_NAME" "${common[@]}" --follow || echo "(log stream ended early; waiting)" >&2
echo "::endgroup::"

"${RQ[@]}" job wait "$JOB_NAME" "${common[@]}" --timeout "$TIMEOUT"
code=$?
case "$code" in
  0) echo "job $JOB_NAME succeeded" ;;
  4) echo "job $JOB_NAME still queued or starting after ${TIMEOUT}s: try again later" >&2 ;;
  5) echo "job $JOB_NAME was preempted: Kueue requeues it; rerun the pipeline to follow it" >&2 ;;
  8) echo "job $JOB_NAME failed (log tail above)" >&2 ;;
  *) echo "job $JOB_NAME: exit code $code (rayqueue --help lists them)" >&2 ;;
esac
exit "$code"
