#!/usr/bin/env bash
# `make run` from a clean checkout: builds the demo workspace, serves the dashboard on
# 127.0.0.1:8501, and this script checks that app.py runs there, then stops the server. The index
# page and /_stcore/health answer whatever app.py does, so once the server is up a session is
# opened as a browser opens it (scripts/app_renders.py) and must draw the Overview's heading
# without an exception.
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
    if .venv/bin/python scripts/app_renders.py http://127.0.0.1:8501 --expect "lsqa — long-span question answering"; then
      echo "make run: the dashboard runs app.py on http://127.0.0.1:8501"; exit 0
    fi
    echo "make run: the server answers but app.py does not render:"; tail -50 "$log"; exit 1
  fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "make run exited early:"; cat "$log"; exit 1; fi
  sleep 1
done
echo "make run: no answer on 127.0.0.1:8501 after 10 minutes"; tail -50 "$log"; exit 1
