#!/usr/bin/env bash
# `make run`, part two: the embedded cluster. Starts `kubesched serve`, applies an example
# with the real kubectl, shows where the pods landed and why one is Pending, and ends with
# the address of the web UI. In a terminal the cluster and its web UI stay up until Ctrl-C;
# otherwise (CI, a pipe) the script says that the cluster stops, and stops it.
set -euo pipefail
BIN=${BIN:-.venv/bin}
if ! command -v kubectl >/dev/null; then
  echo "(kubectl not found: skipping the kubesched serve demo)"; exit 0
fi
DIR=$(mktemp -d)
PORT=${DEMO_PORT:-16443}
"$BIN/kubesched" serve --data-dir "$DIR" --port "$PORT" > "$DIR/serve.log" 2>&1 &
PID=$!
trap 'kill -TERM $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DIR"' EXIT
trap 'echo; echo "stopping the demo cluster"; exit 0' INT TERM
for _ in $(seq 1 100); do grep -q "scheduler running" "$DIR/serve.log" 2>/dev/null && break; sleep 0.2; done
cat "$DIR/serve.log"
export KUBECONFIG="$DIR/kubeconfig"
echo "+ kubectl apply -f examples/mixed-cluster.yaml"
kubectl apply -f examples/mixed-cluster.yaml >/dev/null
sleep 3
echo "+ kubectl get pods -A -o wide"
kubectl get pods -A -o wide
echo "+ kubectl get events -n ml --field-selector reason=FailedScheduling"
kubectl get events -n ml --field-selector reason=FailedScheduling
URL=$(sed -n 's/^web UI: //p' "$DIR/serve.log" | head -1)
if [ -t 1 ]; then
  echo "web UI of the demo cluster: $URL"
  echo "(the demo cluster and its web UI stay up until you press Ctrl-C; kubectl: export KUBECONFIG=$DIR/kubeconfig)"
  wait $PID
else
  echo "the demo cluster stops now (not a terminal): run \`make run\` in a terminal to keep its web UI up,"
  echo "or start one yourself: kubesched serve --nodes 3   (then open the web UI address it prints)"
fi
