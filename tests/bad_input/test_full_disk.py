"""Full disks and broken files in one line: every command that writes, on a workspace whose disk is
full (a small tmpfs mounted here when the machine allows it, as root), exits 2 with "no space left on
the disk holding WORKSPACE: nothing was written" and leaves every table as it was; every command on a
truncated workspace says so in one line (exit 2), the file untouched (tests/support/bad_input.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from lsqa.corpus.ingest import ingest_narrativeqa
from tests.conftest import TEST_DATA
from tests.support.bad_input import assert_refused, snapshot

SLICE = TEST_DATA / "narrativeqa_slice"
STORY = sorted((SLICE / "stories").glob("*.txt"))[0]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("full-disk") / "ws.duckdb"
    ingest_narrativeqa(path, SLICE)
    return path


@pytest.fixture
def full_disk(ingested, tmp_path):
    """A copy of the ingested workspace on a 64 MB tmpfs, the rest of it filled up; freed at the end."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        ws = mount / "ws.duckdb"
        shutil.copy(ingested, ws)
        for name, chunk in (("filler", 1 << 16), ("crumbs", 1)):  # the last few bytes too
            fd = os.open(mount / name, os.O_WRONLY | os.O_CREAT)
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                pass
            finally:
                os.close(fd)
        yield ws
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _import_file(tmp_path: Path) -> Path:
    path = tmp_path / "answers.jsonl"
    with open(SLICE / "nqa_test_slice_qaps.jsonl") as f:
        first = json.loads(f.readline())
    qid = f"nqa:{first['document_id']}:{first.get('q_index', 0)}"
    path.write_text(json.dumps({"question_id": qid, "system": "imported-x", "answer": "a cat"}) + "\n")
    return path


def _new_book(tmp_path: Path) -> Path:
    path = tmp_path / "another.txt"
    path.write_text(STORY.read_text(encoding="utf-8").replace("Tom", "Tam") * 3, encoding="utf-8")
    return path


WRITERS = {
    "users add": lambda ws, tmp: ["users", "add", "ann", "--role", "annotator", "--workspace", str(ws)],
    "ingest-book": lambda ws, tmp: ["ingest-book", str(_new_book(tmp)), "--title", "Another", "--workspace", str(ws)],
    "import-answers": lambda ws, tmp: ["import-answers", str(_import_file(tmp)), "--workspace", str(ws)],
    "status": lambda ws, tmp: ["status", "--workspace", str(ws)],
}


@pytest.mark.parametrize("command", list(WRITERS))
def test_a_full_disk_is_one_line_and_nothing_written(full_disk, tmp_path, command):
    before = snapshot(full_disk)
    args = WRITERS[command](full_disk, tmp_path)
    from tests.support.bad_input import invoke

    result = invoke(*args)
    if command == "status" and result.exit_code == 0:   # a read that needs no space is fine
        assert snapshot(full_disk) == before
        return
    line = assert_refused(f"full disk: {command}", args, workspace=full_disk,
                          must_name=(f"no space left on the disk holding {full_disk}: nothing was written",))
    assert line.startswith("error: no space left")
    (full_disk.parent / "filler").unlink()                  # room again: the workspace is as it was
    assert snapshot(full_disk) == before


def test_an_export_onto_a_full_disk_is_one_line(full_disk, tmp_path):
    out = full_disk.parent / f"export-{uuid.uuid4().hex[:6]}"
    assert_refused("full disk: export", ["export", "--out", str(out), "--workspace", str(full_disk)],
                   workspace=full_disk, must_name=("no space left on the disk holding",))


READERS_AND_WRITERS = [
    ["status"], ["rank", "--judge", "x"], ["users", "list"], ["users", "add", "ann", "--role", "viewer"],
    ["export", "--out", "{tmp}/export"], ["report", "--judge", "x", "--out", "{tmp}/r.html"],
    ["certify", "--judge", "x"], ["suspects"], ["disagreements"], ["ledger", "settle", "--study", "s"],
    ["import-answers", "{answers}"], ["ingest-book", str(STORY)],
]


@pytest.mark.parametrize("args", READERS_AND_WRITERS, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("keep", [0.3, 0.6])
def test_every_command_on_a_truncated_workspace_says_so_in_one_line(ingested, tmp_path, args, keep):
    ws = tmp_path / "cut.duckdb"
    shutil.copy(ingested, ws)
    with open(ws, "r+b") as f:
        f.truncate(int(ws.stat().st_size * keep))
    args = [a.format(tmp=tmp_path, answers=_import_file(tmp_path)) for a in args]
    line = assert_refused(f"truncated workspace ({keep:.0%}): {' '.join(args[:2])}", [*args, "--workspace", str(ws)],
                          workspace=ws, must_name=(str(ws),))
    # A command whose reads miss the lost blocks may refuse for its own reason first (an unknown judge):
    # one line all the same. Those that read the tables say what is wrong with the file.
    if args[0] in ("status", "users", "export", "ingest-book", "import-answers"):
        assert "truncated or damaged" in line or "cannot open it" in line, line
