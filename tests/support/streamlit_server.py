"""`streamlit run dashboard.py` (app.py behind its sign-in front) on a free 127.0.0.1 port, as `make run` starts
it, for tests that need a live server. The server process is forked from one that has imported Streamlit and
the dashboard already (``SERVER_IMPORTS``), as ``streamlit run`` would be started, without their import."""

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

from . import forkserver

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# What a served dashboard imports, at its start and on its first pages (``python -X importtime``: ~5 s
# of a server's first seconds), imported once by the fork server its servers are forked from
# (tests/support/forkserver.py, a server of their own: the other tests' children never see Streamlit).
SERVER_IMPORTS = ("streamlit.web.cli", "streamlit.web.bootstrap", "streamlit.emojis", "uvicorn", "pandas", "pyarrow",
                  "lsqa.dashboard.sign_in_front", "lsqa.dashboard.common", "lsqa.dashboard.headline",
                  "lsqa.dashboard.audit_view", "lsqa.dashboard.audit_actions", "lsqa.dashboard.leaderboard_view",
                  "lsqa.dashboard.agreement_view", "lsqa.dashboard.corpus_view", "lsqa.dashboard.reference_view",
                  "lsqa.dashboard.adjudication_view", "lsqa.dashboard.run_view", "lsqa.dashboard.overview_view",
                  "lsqa.dashboard.report", "lsqa.study.plan", "lsqa.llm.embedded")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(workspace: Path, *, timeout_s: float = 60, app: Path | None = None, root: Path | None = None,
          env: dict[str, str] | None = None, fresh: bool = False) -> Iterator[str]:
    """Yield the base URL once ``/_stcore/health`` answers; stop (or kill) the server afterwards.

    ``app``: another Streamlit script instead of the dashboard's dashboard.py (the browser bench's baseline;
    ``"app.py"``: the dashboard without its sign-in front). A ``root`` without dashboard.py (a checkout from
    before the front) serves its app.py.
    ``root``: another checkout of the project to serve (``bench/bench_browser_ab.py``).
    ``env``: variables set for the server on top of this process's environment.
    ``fresh``: a new interpreter, exactly as `make run` starts one, instead of a fork of the pre-imported
    process (``root`` is always served by a new interpreter).

    A server that exits or stays silent for ``timeout_s`` raises AssertionError at once.
    """
    port = free_port()
    env = {**os.environ, **(env or {}), "LSQA_WORKSPACE": str(workspace)}
    if app is None:
        app = Path("dashboard.py") if ((root or PROJECT_ROOT) / "dashboard.py").exists() else Path("app.py")
    args = ["run", str(app), "--server.address", "127.0.0.1", "--server.port", str(port),
            "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    if root is None and not fresh:  # forked from a process that has imported Streamlit and the dashboard
        proc = forkserver.start(None, *args, module="streamlit", cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, base=SERVER_IMPORTS)
    else:  # a new interpreter (another checkout's code runs in its own)
        proc = subprocess.Popen([str(Path(sys.executable).parent / "streamlit"), *args], cwd=root or PROJECT_ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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
