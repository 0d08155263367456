#!/usr/bin/env bash
# `make run`, part two: the embedded cluster. Starts `kubesched serve`, applies an example
# with the real kubectl, shows where the pods landed and why one is Pending, and ends with
# the address of the web UI (in a terminal the cluster keeps running until Enter).
set -euo pipefail
BIN=${BIN:-.venv/bin}
if ! command -v kubectl >/dev/null; then
  echo "(kubectl not found: skipping the kubesched serve demo)"; exit 0
fi
DIR=$(mktemp -d)
PORT=${DEMO_PORT:-16443}
"$BIN/kubesched" serve --data-dir "$DIR" --port "$PORT" > "$DIR/serve.log" 2>&1 &
PID=$!
trap 'kill -INT $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DIR"' EXIT
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
if [ -t 0 ] && [ -t 1 ]; then
  echo "(the demo cluster keeps running for the web UI: press Enter to stop it)"
  echo "web UI of the demo cluster: $URL"
  read -r _ || true
else
  echo "web UI of the demo cluster: $URL"
fi
