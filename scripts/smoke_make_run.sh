#!/usr/bin/env bash
# `make run` from a clean checkout: builds the demo workspace, serves the dashboard on
# 127.0.0.1:8501, and this script checks that the page answers, then stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
# Its own process group, so that make, its shell and streamlit stop together.
setsid make run >"$log" 2>&1 &
pid=$!
cleanup() {
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
  kill -KILL -- "-$pid" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 600); do
  if curl -sf http://127.0.0.1:8501/_stcore/health >/dev/null 2>&1; then
    curl -sf http://127.0.0.1:8501/ | grep -qi "<title>" && { echo "make run: dashboard answers on http://127.0.0.1:8501"; exit 0; }
  fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "make run exited early:"; cat "$log"; exit 1; fi
  sleep 1
done
echo "make run: no answer on 127.0.0.1:8501 after 10 minutes"; tail -50 "$log"; exit 1
