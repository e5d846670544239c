"""Two processes on one workspace file: short-lived connections with retry lose nothing."""

import subprocess
import sys
import textwrap
import time

import pytest

from lsqa import store
from lsqa.store import reviews

WRITER = textwrap.dedent("""
    import sys, time
    from lsqa import store
    from lsqa.store import reviews
    ws, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print("ready", flush=True)  # imports done
    sys.stdin.readline()  # the test has written once: write now, while it goes on writing
    for i in range(n):
        with store.write(ws) as con:
            reviews.add_review(con, annotator=who, judgment_id=f"j{i}", action="confirm")
            time.sleep(0.002)  # hold the lock a little, as a real write does
    print("done", who)
""")


@pytest.mark.slow
def test_two_processes_write_and_read_without_loss(workspace):
    with store.connect(workspace):
        pass  # create and migrate first, so both processes start from the same schema
    n = 40
    other = subprocess.Popen([sys.executable, "-c", WRITER, str(workspace), "cli", str(n)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert other.stdout.readline().strip() == "ready", other.stderr.read()
    seen_reads = 0
    for i in range(n):
        with store.write(workspace) as con:
            reviews.add_review(con, annotator="dashboard", judgment_id=f"j{i}", action="override", label="A")
        with store.connect(workspace) as con:
            seen_reads += con.execute("SELECT count(*) FROM human_reviews").fetchone()[0] > 0
        if i == 0:
            # Let the other process start, and go on only once it has written: from here on both
            # write at the same time, whichever way the OS schedules them.
            other.stdin.write("go\n")
            other.stdin.flush()
            deadline = time.time() + 60
            while not any(r["annotator"] == "cli" for r in _reviews(workspace)):
                assert time.time() < deadline and other.poll() is None, other.stderr.read()
                time.sleep(0.005)
        time.sleep(0.001)
    out, err = other.communicate(timeout=120)
    assert other.returncode == 0, err
    assert out.strip() == "done cli"
    with store.connect(workspace) as con:
        rows = reviews.reviews(con)
    by_who = {}
    for r in rows:
        by_who.setdefault(r["annotator"], set()).add(r["judgment_id"])
    assert by_who["cli"] == {f"j{i}" for i in range(n)}
    assert by_who["dashboard"] == {f"j{i}" for i in range(n)}
    assert len(rows) == 2 * n and seen_reads == n
    # The two writers really wrote at the same time (ids interleave), so "nothing lost" was under contention.
    ids = {who: [r["id"] for r in rows if r["annotator"] == who] for who in ("cli", "dashboard")}
    assert min(ids["dashboard"]) < min(ids["cli"]) < max(ids["dashboard"])


def _reviews(workspace):
    with store.connect(workspace) as con:
        return reviews.reviews(con)
