"""An errata file (``lsqa ingest-narrativeqa --errata``) is read and checked in SQL
(``lsqa.store.importers.errata``), with the row reader (tests/support/narrativeqa_oracle.py) as the oracle:
files made by category — each rule of the row reader, each kind of cell, CSV, JSONL and a JSON array —
and at random give the same corrections, or the same InputError (message, line, hint)."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

from lsqa.corpus.ingest import read_errata
from lsqa.errors import InputError
from tests.support.narrativeqa_oracle import read_errata_rows

Q1, Q2 = "nqa:abc:0", "nqa:abc:1"


def _e(qid=Q1, reference="1", correction="Three", **more) -> dict:
    return {"question_id": qid, "reference": reference, "correction": correction, **more}


def _jsonl(rows: list) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def _csv(rows: list[dict], header: list[str] | None = None) -> str:
    header = header or list(dict.fromkeys(k for r in rows for k in r))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([[r.get(c, "") for c in header] for r in rows])
    return out.getvalue()


# category -> (file name, its text, 'read' or words its error holds)
CASES = {
    "csv as lsqa writes it": ("errata.csv", _csv([_e(annotators="ana; ben"), _e(Q2, "2", "'-1 kittens", annotators="'=x"),
                                                 _e(Q2, "1", "'-3"), _e(Q2, "1", "'-3")]), 'read'),
    "csv: formula-like cells without the quote, a lone quote": ("errata.csv", _csv(
        [_e(correction="=SUM(1)"), _e(Q2, correction="'"), _e(Q2, "2", "'@x", annotators="'")]), 'read'),
    "csv: empty corrections passed over, repeats of one text": ("errata.csv", _csv(
        [_e(correction=""), _e(), _e(correction=" Three "), _e(Q2, correction="")]), 'read'),
    "csv: a repeat with another text": ("errata.csv", _csv([_e(), _e(Q2), _e(correction="Four")]), 'corrected twice'),
    "csv: a repeat after an empty one": ("errata.csv", _csv([_e(correction=""), _e(), _e(correction="Four")]), 'corrected twice'),
    "csv: a reference 3": ("errata.csv", _csv([_e(), _e(reference="3")]), 'is not 1 or 2'),
    "csv: a reference 01": ("errata.csv", _csv([_e(reference="01")]), 'is not 1 or 2'),
    "csv: no correction column": ("errata.csv", "question_id,reference\n" + f"{Q1},1\n", 'no correction column'),
    "csv: no question_id column": ("errata.csv", "reference,correction\n1,x\n", 'missing column(s) question_id'),
    "csv: every correction empty": ("errata.csv", _csv([_e(correction=""), _e(Q2, correction="")]), 'every correction cell is empty'),
    "csv: an empty question id": ("errata.csv", _csv([_e(qid="")]), 'empty value in column question_id'),
    "jsonl: numbers": ("errata.jsonl", _jsonl([_e(correction=3), _e(Q2, correction=3.5), _e(Q2, "2", 1e2),
                                               '{"question_id": "x", "reference": "1", "correction": 123456789012345678901234}',
                                               '{"question_id": "y", "reference": "1", "correction": 1.0E+2}',
                                               '{"question_id": "z", "reference": "1", "correction": -0}']), 'read'),
    "jsonl: a reference as a number": ("errata.jsonl", _jsonl([_e(reference=1), _e(Q2, reference=2)]), 'read'),
    "jsonl: a reference 1.0": ("errata.jsonl", _jsonl([_e(reference=1.0)]), "reference '1.0' is not"),
    "jsonl: a question id as a number": ("errata.jsonl", _jsonl([_e(qid=12)]), 'read'),
    "jsonl: spaces only": ("errata.jsonl", _jsonl([_e(), _e(Q2, correction="   ")]), 'only spaces'),
    "jsonl: a list correction": ("errata.jsonl", _jsonl([_e(correction=["Three"])]), 'correction must be text, not list'),
    "jsonl: an object correction": ("errata.jsonl", _jsonl([_e(correction={"a": 1})]), 'correction must be text, not dict'),
    "jsonl: a true correction": ("errata.jsonl", _jsonl([_e(correction=True)]), 'correction must be text, not bool'),
    "jsonl: a null correction": ("errata.jsonl", _jsonl([_e(correction=None), _e(Q2)]), 'read'),
    "jsonl: no correction key on a row": ("errata.jsonl", _jsonl([{"question_id": Q1, "reference": "1"}, _e(Q2)]), 'read'),
    "jsonl: no correction key at all": ("errata.jsonl", _jsonl([{"question_id": Q1, "reference": "1"}]), 'no correction column'),
    "jsonl: annotators as a list": ("errata.jsonl", _jsonl([_e(annotators=["ana", "ben"]), _e(Q2, annotators=[])]), 'read'),
    "jsonl: annotators as a list with a number": ("errata.jsonl", _jsonl([_e(annotators=["ana", 3])]), 'annotators must be text, not list'),
    "jsonl: annotators as a number": ("errata.jsonl", _jsonl([_e(annotators=3)]), 'annotators must be text, not int'),
    "jsonl: annotators as a float": ("errata.jsonl", _jsonl([_e(annotators=2.5)]), 'annotators must be text, not float'),
    "jsonl: annotators as an object": ("errata.jsonl", _jsonl([_e(annotators={})]), 'annotators must be text, not dict'),
    "jsonl: bad annotators on an empty correction": ("errata.jsonl", _jsonl([_e(correction="", annotators=3), _e(Q2)]), 'read'),
    "jsonl: bad annotators on a repeat": ("errata.jsonl", _jsonl([_e(), _e(annotators=True)]), 'read'),
    "jsonl: a quote kept (not a CSV)": ("errata.jsonl", _jsonl([_e(correction="'=x", annotators="'@y")]), 'read'),
    "jsonl: other scripts and escapes": ("errata.jsonl", _jsonl([_e(correction="Mêlée 誰 \t tab", annotators="ànа")]), 'read'),
    "jsonl: the first error of two": ("errata.jsonl", _jsonl([_e(), _e(Q2, reference="9", correction=[1])]), "reference '9'"),
    "jsonl: a correction error before a reference error": ("errata.jsonl", _jsonl([_e(Q2, correction=True), _e(reference="x")]), 'correction must be text, not bool'),
    "json array: a repeat with another text": ("errata.json", json.dumps([_e(), _e(correction="Four")]), 'first at line None'),
    "json array: good": ("errata.json", json.dumps([_e(annotators=["a"]), _e(Q2, "2", "x")]), 'read'),
    "invalid json": ("errata.jsonl", _jsonl([_e(), '{"question_id": "x",']), 'invalid JSON'),
}


def _result(fn, path):
    try:
        return ("read", fn(path))
    except InputError as exc:
        return ("refused", str(exc), exc.line, exc.hint)


def _compare(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    sql, rows = _result(read_errata, path), _result(read_errata_rows, path)
    assert sql == rows
    return sql


# The fast lane's sample (each rule, each format); the other categories run in the slow lane.
FAST_CASES = ("csv as lsqa writes it", "csv: a repeat with another text", "csv: a reference 3", "csv: no correction column",
              "csv: every correction empty", "jsonl: numbers", "jsonl: spaces only", "jsonl: a list correction",
              "jsonl: annotators as a number", "jsonl: bad annotators on a repeat", "json array: a repeat with another text")


@pytest.mark.parametrize("case", [pytest.param(c, marks=() if c in FAST_CASES else pytest.mark.slow) for c in CASES])
def test_an_errata_file_gives_the_same_result_in_sql(tmp_path, case):
    name, text, expected = CASES[case]
    result = _compare(tmp_path, name, text)
    assert result[0] == "read" if expected == "read" else expected in result[1]


def _random_file(rng: random.Random) -> tuple[str, str]:
    rows = []
    for _ in range(rng.randint(1, 8)):
        row = _e(rng.choice([Q1, Q2, "nqa:x:2"]), rng.choice(["1", "2"]) if rng.random() > 0.03 else "3",
                 rng.choice(["Three", "Four", "", "", "  ", "'-1 x", "'=y", "'-2"]))
        if rng.random() < 0.5:
            row["annotators"] = rng.choice(["ana", "", "'=b", "ana; ben"])
        rows.append(row)
    if rng.random() < 0.5:
        return "errata.csv", _csv(rows)
    for row in rows:
        if rng.random() < 0.15:
            row["correction"] = rng.choice([3, 2.5, None, True, ["x"], "   "])
        if rng.random() < 0.1:
            row["annotators"] = rng.choice([["a", "b"], ["a", 1], 4, None])
        if rng.random() < 0.1:
            row["reference"] = rng.choice([1, 2, 2, 1, 1.0])
    return "errata.jsonl", _jsonl(rows)


SEEDS = range(60)
FAST_SEEDS = range(5)


@pytest.mark.parametrize("seed", [pytest.param(s, marks=() if s in FAST_SEEDS else pytest.mark.slow) for s in SEEDS])
def test_random_errata_files_give_the_same_result(tmp_path, seed):
    _compare(tmp_path, *_random_file(random.Random(seed)))


def test_ingest_errata_words_the_workspace_checks_as_before(tmp_path):
    # The record's check and insert in the ingest's write: the first unknown question in file order (a JSON
    # array's rows have no line), a correction equal to its reference not kept, one standing not added again.
    from lsqa import store
    from lsqa.corpus.ingest import ingest_errata, ingest_narrativeqa
    from tests.conftest import TEST_DATA

    ws = tmp_path / "ws.duckdb"
    ingest_narrativeqa(ws, TEST_DATA / "narrativeqa_slice")
    with store.connect(ws) as con:
        (q, ref_1), (r, _) = con.execute("SELECT id, reference_1 FROM questions ORDER BY id LIMIT 2").fetchall()
    array = tmp_path / "errata.json"
    array.write_text(json.dumps([_e(q), _e("nqa:zzz"), _e("nqa:aaa")]), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        ingest_errata(ws, array)
    assert (refused.value.path, refused.value.line, refused.value.problem, refused.value.hint) == (
        str(array), None, "no question 'nqa:zzz' in this workspace", "ingest its NarrativeQA set first, or remove the row")
    path = tmp_path / "errata.jsonl"
    path.write_text(_jsonl([_e(q, "1", ref_1), _e(r, "2", "Four", annotators=["ana", "ben"]), _e(q, "2", "Five")]),
                    encoding="utf-8")
    kept = "kept beside the original references (reference_1, reference_2 unchanged); " \
           "`lsqa export` writes them as corrected_reference_1/2"
    first = ingest_errata(ws, path).to_dict()
    assert (first["added"], first["notes"]) == (
        {"corrected references": 2}, ["1 corrections equal to the reference they correct: not kept", kept])
    again = ingest_errata(ws, path).to_dict()
    assert (again["added"], again["notes"]) == ({"corrected references": 0}, [
        "1 corrections equal to the reference they correct: not kept",
        "2 corrections already standing: not added again", kept])
    with store.connect(ws) as con:
        assert con.execute("SELECT question_id, reference, text, source, proposed_by FROM reference_corrections "
                           "ORDER BY id").fetchall() == [(r, "2", "Four", "errata.jsonl:2", "ana; ben"),
                                                         (q, "2", "Five", "errata.jsonl:3", "")]
