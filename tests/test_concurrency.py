"""Two processes on one workspace file: short-lived connections with retry lose nothing."""

import subprocess
import sys
import textwrap
import time

from lsqa import store
from lsqa.store import reviews

WRITER = textwrap.dedent("""
    import sys, time
    from lsqa import store
    from lsqa.store import reviews
    ws, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print("ready", flush=True)  # imports done: the writes start now, together with the test's
    for i in range(n):
        with store.write(ws) as con:
            reviews.add_review(con, annotator=who, judgment_id=f"j{i}", action="confirm")
            time.sleep(0.002)  # hold the lock a little, as a real write does
    print("done", who)
""")


def test_two_processes_write_and_read_without_loss(workspace):
    with store.connect(workspace):
        pass  # create and migrate first, so both processes start from the same schema
    n = 40
    other = subprocess.Popen([sys.executable, "-c", WRITER, str(workspace), "cli", str(n)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Start only when the other process is about to write, so that the two really overlap
    # (otherwise its ~1 s of imports would let this loop run mostly alone).
    assert other.stdout.readline().strip() == "ready", other.stderr.read()
    seen_reads = 0
    for i in range(n):
        with store.write(workspace) as con:
            reviews.add_review(con, annotator="dashboard", judgment_id=f"j{i}", action="override", label="A")
        with store.connect(workspace) as con:
            seen_reads += con.execute("SELECT count(*) FROM human_reviews").fetchone()[0] > 0
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
    # The two writers really took turns on the file (ids interleave), so "nothing lost" was under contention.
    ids = {who: [r["id"] for r in rows if r["annotator"] == who] for who in ("cli", "dashboard")}
    assert min(ids["cli"]) < max(ids["dashboard"]) and min(ids["dashboard"]) < max(ids["cli"])
