"""`make run` serves the dashboard: the same streamlit command, on a free 127.0.0.1 port, answers."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from lsqa import ingest

from .conftest import PROJECT_ROOT, TEST_DATA


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streamlit_serves_app(workspace):
    ingest.ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    port = free_port()
    env = {**os.environ, "LSQA_WORKSPACE": str(workspace)}
    streamlit = Path(sys.executable).parent / "streamlit"
    proc = subprocess.Popen(
        [str(streamlit), "run", "app.py", "--server.address", "127.0.0.1", "--server.port", str(port),
         "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 60
        health = None
        while time.time() < deadline and proc.poll() is None:  # a crashed server fails at once
            try:
                health = urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read()
                break
            except OSError:
                time.sleep(0.3)
        assert health == b"ok", f"streamlit did not answer within 60 s (exit code {proc.poll()})"
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
        assert "<title>" in page.lower() or "streamlit" in page.lower()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
