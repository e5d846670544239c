"""Bad errata files for `lsqa ingest-narrativeqa --errata FILE`, made by category: each is refused with
exit code 2 and one line naming the file, the line and what to do, and the workspace is left as it was
(a correction is never half read)."""

from __future__ import annotations

import json

import pytest

from lsqa import store
from lsqa.corpus.ingest import ingest_errata
from lsqa.errors import InputError
from tests.support.bad_input import assert_library_refuses, assert_refused

HEADER = "question_id,title,question,reference,reference_text,correction,other_reference,reasons,annotators\n"


def _question(ws) -> str:
    with store.connect(ws) as con:
        return con.execute("SELECT id FROM questions WHERE reference_1 <> '' ORDER BY id LIMIT 1").fetchone()[0]


def _csv_row(qid: str, reference: str = "1", correction: str = "Three") -> str:
    return f'{qid},T,Q,{reference},ref,"{correction}",other,wrong,ana\n'


# category -> (file name, its text given a real question id, what the line must name)
CASES = {
    "malformed CSV (an unterminated quote)": (
        "errata.csv", lambda q: HEADER + f'{q},T,Q,1,ref,"Three,other,wrong,ana\n', ("errata.csv", "quote")),
    "a row with too many fields": (
        "errata.csv", lambda q: HEADER + f"{q},T,Q,1,ref,Three,other,wrong,ana,extra\n", ("errata.csv:2", "fields")),
    "no correction column": (
        "errata.csv", lambda q: "question_id,reference,reference_text\n" + f"{q},1,ref\n", ("errata.csv:1", "correction")),
    "no question_id column": (
        "errata.csv", lambda q: "reference,correction\n1,Three\n", ("errata.csv", "question_id")),
    "an unknown question id": (
        "errata.csv", lambda q: HEADER + _csv_row(q) + _csv_row("nqa:no-such-question"),
        ("errata.csv:3", "nqa:no-such-question")),
    "every correction empty": (
        "errata.csv", lambda q: HEADER + _csv_row(q, correction="") + _csv_row(q, "2", ""), ("errata.csv", "correction")),
    "a correction of spaces only (JSONL)": (
        "errata.jsonl", lambda q: json.dumps({"question_id": q, "reference": "1", "correction": "   "}) + "\n",
        ("errata.jsonl:1", "spaces")),
    "a correction that is not text (JSONL)": (
        "errata.jsonl", lambda q: json.dumps({"question_id": q, "reference": "1", "correction": ["Three"]}) + "\n",
        ("errata.jsonl:1", "correction")),
    "duplicate rows with different text": (
        "errata.csv", lambda q: HEADER + _csv_row(q, correction="Three") + _csv_row(q, correction="Four"),
        ("errata.csv:3", "line 2")),
    "a reference other than 1 or 2": (
        "errata.csv", lambda q: HEADER + _csv_row(q, reference="3"), ("errata.csv:2", "reference")),
    "an empty question id": (
        "errata.csv", lambda q: HEADER + _csv_row(""), ("errata.csv:2", "question_id")),
    "invalid JSON": (
        "errata.jsonl", lambda q: '{"question_id": "' + q + '", "reference": "1", "correction": "Three"\n',
        ("errata.jsonl:1", "json")),
    "an empty file": ("errata.csv", lambda q: "", ("errata.csv",)),
}


@pytest.fixture(scope="module")
def ws_template(tmp_path_factory, demo_workspace_template):
    import shutil

    path = tmp_path_factory.mktemp("errata") / "ws.duckdb"
    shutil.copy(demo_workspace_template, path)
    return path


@pytest.mark.parametrize("category", list(CASES))
def test_a_bad_errata_file_is_refused_with_its_line(ws_template, tmp_path, category):
    import shutil

    ws = shutil.copy(ws_template, tmp_path / "ws.duckdb")
    name, text, must_name = CASES[category]
    path = tmp_path / name
    path.write_text(text(_question(ws)), encoding="utf-8")
    assert_refused(f"errata: {category}", ["ingest-narrativeqa", "--errata", path, "--workspace", ws],
                   workspace=ws, must_name=must_name)
    assert_library_refuses(f"ingest_errata: {category}", lambda: ingest_errata(ws, path), InputError,
                           workspace=ws, must_name=must_name)


def test_neither_a_folder_nor_errata_is_refused(ws_template, tmp_path):
    import shutil

    ws = shutil.copy(ws_template, tmp_path / "ws.duckdb")
    assert_refused("ingest-narrativeqa without anything", ["ingest-narrativeqa", "--workspace", ws], workspace=ws,
                   must_name=("--errata",))
