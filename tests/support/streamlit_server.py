"""`streamlit run dashboard.py` (app.py behind its sign-in front) on a free 127.0.0.1 port, as `make run` starts
it, for tests that need a live server."""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(workspace: Path, *, timeout_s: float = 60, app: Path | None = None, root: Path | None = None,
          env: dict[str, str] | None = None) -> Iterator[str]:
    """Yield the base URL once ``/_stcore/health`` answers; stop (or kill) the server afterwards.

    ``app``: another Streamlit script instead of the dashboard's dashboard.py (the browser bench's baseline;
    ``"app.py"``: the dashboard without its sign-in front). A ``root`` without dashboard.py (a checkout from
    before the front) serves its app.py.
    ``root``: another checkout of the project to serve (``bench/bench_browser_ab.py``).
    ``env``: variables set for the server on top of this process's environment.

    A server that exits or stays silent for ``timeout_s`` raises AssertionError at once.
    """
    port = free_port()
    env = {**os.environ, **(env or {}), "LSQA_WORKSPACE": str(workspace)}
    streamlit = Path(sys.executable).parent / "streamlit"
    if app is None:
        app = Path("dashboard.py") if ((root or PROJECT_ROOT) / "dashboard.py").exists() else Path("app.py")
    proc = subprocess.Popen(
        [str(streamlit), "run", str(app), "--server.address", "127.0.0.1", "--server.port", str(port),
         "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=root or PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # Health is asked each time the server prints a line (its "You can now view" banner comes once it
        # listens) and after each second of silence: no fixed sleep before the first page.
        deadline = time.time() + timeout_s
        output = selectors.DefaultSelector()
        output.register(proc.stdout, selectors.EVENT_READ)
        while True:
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                pass
            if time.time() > deadline or proc.poll() is not None:
                raise AssertionError(f"streamlit did not answer within {timeout_s:.0f} s (exit code {proc.poll()})")
            if output.select(timeout=min(1.0, max(0.0, deadline - time.time()))):
                proc.stdout.readline()
        output.close()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
