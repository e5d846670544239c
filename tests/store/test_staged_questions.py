"""``lsqa ingest-narrativeqa`` reads its question files in SQL (``lsqa.store.importers.questions``): fast
(``stage``) when it reads them exactly, else by the table reader with the values checked in SQL
(``restage``); the row reader (tests/support/narrativeqa_oracle.py) is the oracle.

Question files are made by category — each rule of the row reader (the set filter, ``q_index`` given
or counted per document, repeats across files, the stored questions), each way a file can be unusual
— in CSV and JSONL. Both importers run on copies of one workspace: the same InputError (message,
line, hint) with the workspace untouched, or the same documents and questions and the same summary.
Whether the fast stage takes the files is asked too, so that each category tests the way it means to.
"""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
from pathlib import Path

import pytest

from lsqa import store
from lsqa.corpus import ingest
from lsqa.errors import InputError
from lsqa.store import db
from lsqa.store.importers import questions as staged_questions
from lsqa.store.importers.lines import drop
from tests.conftest import TEST_DATA
from tests.support.bad_input import snapshot
from tests.support.narrativeqa_oracle import ingest_narrativeqa_rows

SLICE = TEST_DATA / "narrativeqa_slice"
ARCTURUS, TOM, THIRD = ("014de1a8802c05ff64efa047e9290fb7fccea2b4", "2c5f448df18172babaac38806e1fb699a8baf65b",
                        "2dd593d19e201c9cf4edb0703cad0f525c1038a2")
VALID = "f" * 40  # a document of the valid set, added to the slice's documents.csv
UNKNOWN = "e" * 40  # in no documents.csv


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    """An empty workspace, and one holding the slice's questions (read by the oracle)."""
    folder = tmp_path_factory.mktemp("bases")
    empty, filled = folder / "empty.duckdb", folder / "filled.duckdb"
    with store.connect(empty):
        pass
    ingest_narrativeqa_rows(filled, SLICE)
    return {"empty": empty, "filled": filled}


def _q(doc: str = TOM, q_index=None, question: str = "Who is Tom?", a1: str = "A kitten", a2: str = "a cat",
       **more) -> dict:
    row = {"document_id": doc, "set": "test", "question": question, "answer1": a1, "answer2": a2, **more}
    if q_index is not None:
        row["q_index"] = q_index
    return row


def _jsonl(rows: list[dict | str], end: str = "\n") -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + end for r in rows)


def _csv(rows: list[dict], header: list[str] | None = None, end: str = "\n") -> str:
    header = header or list(dict.fromkeys(k for r in rows for k in r))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=end)
    writer.writerow(header)
    writer.writerows([[r.get(c, "") for c in header] for r in rows])
    return out.getvalue()


def _dataset(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    """A NarrativeQA folder: the slice's documents.csv with a valid-set document, and ``files``."""
    folder = tmp_path / "nqa"
    folder.mkdir(parents=True)
    docs = (SLICE / "documents.csv").read_text(encoding="utf-8")
    first = docs.splitlines()[1].split(",")
    docs += ",".join([VALID, "valid"] + first[2:]) + "\n"
    (folder / "documents.csv").write_text(docs, encoding="utf-8")
    for name, text in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_bytes(text.encode("utf-8", "surrogatepass"))
    return folder


def _run(workspace: Path, folder: Path, in_sql: bool):
    before = snapshot(workspace)
    try:
        summary = (ingest.ingest_narrativeqa if in_sql else ingest_narrativeqa_rows)(workspace, folder)
    except InputError as exc:
        assert snapshot(workspace) == before, "a refused ingest changed the workspace"
        return ("refused", str(exc), exc.line, exc.hint)
    with store.connect(workspace) as con:
        tables = [con.execute(f"SELECT * EXCLUDE (created_at) FROM {t} ORDER BY id").fetchall()
                  for t in ("documents", "questions")]
    return ("ingested", summary.to_dict(), tables)


def _taken(workspace: Path, folder: Path) -> bool:
    """Whether the fast stage reads the folder's question files itself (a refusal it words counts as taken)."""
    _, qa_files, _ = ingest._nqa_files(folder)
    with open(folder / "documents.csv", encoding="utf-8", newline="") as f:
        docs = sorted(r["document_id"] for r in csv.DictReader(f) if r["set"] == "test")
    with db.scratch() as con:
        try:
            staged_questions.stage(con, qa_files, set_name="test", document_ids=docs)
        except staged_questions.Declined:
            return False
        except InputError:
            return True
        finally:
            drop(con, staged_questions.DOCUMENTS, staged_questions.STAGED, staged_questions.FILE_ROWS)
    return True


def _compare(bases, tmp_path: Path, files: dict, *, base: str = "empty", staged: bool | None = None):
    folder = _dataset(tmp_path, files)
    results = []
    for name, in_sql in (("sql", True), ("rows", False)):
        ws = tmp_path / f"{name}.duckdb"
        shutil.copy(bases[base], ws)
        results.append(_run(ws, folder, in_sql))
    assert results[0] == results[1]
    if staged is not None:
        ws = tmp_path / "staged-only.duckdb"
        shutil.copy(bases[base], ws)
        assert _taken(ws, folder) == staged, f"the SQL {'declined' if staged else 'took'} the files"
    return results[0]


# ------------------------------------------------------------------------- files the SQL reads itself

MIXED = [_q(TOM, question="Who is Tom?"), _q(ARCTURUS, question="Who is Maskull?"), _q(TOM, question="Where?"),
         _q(THIRD, question="When?"), _q(ARCTURUS, question="Why?", a2="Because.")]

GOOD = {
    "jsonl, q_index as numbers": {"a_qaps.jsonl": _jsonl([_q(TOM, 7), _q(ARCTURUS, 0), _q(TOM, 1_000_000_000)])},
    "jsonl, q_index as texts": {"a_qaps.jsonl": _jsonl([_q(TOM, "7"), _q(ARCTURUS, "0"), _q(THIRD, "012")])},
    "jsonl, q_index empty: counted": {"a_qaps.jsonl": _jsonl([{**r, "q_index": ""} for r in MIXED])},
    "jsonl, no q_index: counted": {"a_qaps.jsonl": _jsonl(MIXED)},
    "csv, no q_index: counted per document": {"qaps.csv": _csv(MIXED)},
    "csv with q_index": {"qaps.csv": _csv([{**r, "q_index": i * 3} for i, r in enumerate(MIXED)])},
    "csv as published (tokenised columns)": {"qaps.csv": _csv(
        [{**r, "question_tokenized": r["question"].lower(), "answer1_tokenized": "a , b"} for r in MIXED])},
    "csv and two jsonl files": {"qaps.csv": _csv(MIXED), "b_qaps.jsonl": _jsonl([_q(TOM, 0), _q(TOM, 50)]),
                                "c_qaps.jsonl": _jsonl([_q(TOM, 50), _q(THIRD, 9, question="Other?")])},
    "the same question twice": {"a_qaps.jsonl": _jsonl([_q(TOM, 3), _q(ARCTURUS, 3), _q(TOM, 3)])},
    "rows of other sets and without a set": {"a_qaps.jsonl": _jsonl(
        [_q(TOM, 0), {**_q(TOM, 1), "set": "valid"}, {k: v for k, v in _q(TOM, 2).items() if k != "set"},
         {**_q(VALID, 0), "set": "valid"}, {**_q(UNKNOWN, 0), "set": "train"}, {**_q(TOM, 3), "set": ""}])},
    "csv sets, counted within the set": {"qaps.csv": _csv(
        [_q(TOM), {**_q(TOM, question="V?"), "set": "valid"}, _q(TOM, question="Again?"),
         {**_q(UNKNOWN), "set": "train"}, {**_q(TOM, question="Spaced"), "set": " test "}])},
    "quoted csv: commas, quotes, newlines, spaces": {"qaps.csv": _csv(
        [_q(TOM, question='Who said "no, never"?', a1="  Tom, the kitten  "),
         _q(ARCTURUS, question="Two\nlines?", a2="a,b,c"), _q(TOM, question=" padded ")])},
    "crlf csv": {"qaps.csv": _csv(MIXED, end="\r\n")},
    "crlf jsonl": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), _q(THIRD, 2)], end="\r\n")},
    "keys in other cases and spaces": {"a_qaps.jsonl": _jsonl(
        ['{"Document_ID": "%s", " Q_Index ": 4, "QUESTION": "Q?", "answer1": "a", "Answer2": "b"}' % TOM])},
    "other scripts and escapes": {"a_qaps.jsonl": _jsonl(
        [_q(TOM, 1, question="Qui est Mêlée? 誰ですか"), '{"document_id": "%s", "q_index": 2, "question": '
         '"caf\\u00e9 \\ud83d\\ude00 \\"x\\"", "answer1": "a\\tb", "answer2": "c"}' % TOM])},
    "blank lines and a byte order mark": {"a_qaps.jsonl": "\ufeff" + _jsonl([_q(TOM, 101), "", "   ", _q(TOM, 102)]),
                                          "qaps.csv": "\ufeff" + _csv(MIXED).replace("\n", "\n\n", 2)},
    "a question of a document of another set, in that set": {"qaps.csv": _csv(
        [_q(TOM), {**_q(VALID), "set": "valid"}])},
    "blank lines of other spaces": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), "\u3000 \t\u00a0", "\u2003", _q(TOM, 2)])},
}


@pytest.mark.parametrize("name", list(GOOD))
@pytest.mark.sampled(5)
def test_a_good_question_file_gives_the_same_rows_in_sql(bases, tmp_path, name):
    result = _compare(bases, tmp_path, GOOD[name], staged=True)
    assert result[0] == "ingested" and result[1]["added"]["questions"] > 0


def test_the_slice_itself_with_its_stories_gives_the_same_rows(bases, tmp_path):
    results = []
    for in_sql in (True, False):
        ws = tmp_path / f"{in_sql}.duckdb"
        shutil.copy(bases["empty"], ws)
        results.append(_run(ws, SLICE, in_sql))
    assert results[0] == results[1] and results[0][1]["added"]["passages"] > 0
    assert _taken(tmp_path / "True.duckdb", SLICE)


def test_ingesting_the_slice_again_adds_nothing(bases, tmp_path):
    ws = tmp_path / "again.duckdb"
    shutil.copy(bases["filled"], ws)
    again = _run(ws, SLICE, True)
    assert again[0] == "ingested" and again[1]["added"]["questions"] == 0 and again[1]["skipped"]["questions"] > 0


def test_a_stored_question_with_another_text_is_refused_by_the_sql(bases, tmp_path):
    # The slice stores question 0 of Tom Kitten; the file gives it another text on its line 3.
    files = {"a_qaps.jsonl": _jsonl([_q(TOM, 900), "", _q(TOM, 0, question="A changed question?")])}
    result = _compare(bases, tmp_path, files, base="filled", staged=True)
    assert result[0] == "refused" and result[2] == 3 and "already in the workspace with another text" in result[1]


def test_a_stored_question_with_another_text_is_worded_as_before(bases, tmp_path):
    # The record's check words the stored text as the ingest did in Python (``old_text[:60]!r``): 60 code points
    # of a text with combining marks, a character beyond the BMP and a quote, in the second of two files.
    stored = "Who is Tom\u0301 \U0001F431 'Kitten' " + "really, " * 9
    ws = tmp_path / "stored.duckdb"
    shutil.copy(bases["empty"], ws)
    first = ingest.ingest_narrativeqa(ws, _dataset(tmp_path / "first",
                                                   {"a_qaps.jsonl": _jsonl([_q(TOM, 7, question=stored)])}))
    assert first.added["questions"] == 1
    folder = _dataset(tmp_path / "second", {"a_qaps.jsonl": _jsonl([_q(TOM, 8)]),
                                            "b_qaps.jsonl": _jsonl([_q(TOM, 9), _q(TOM, 7, question="Changed?")])})
    before = snapshot(ws)
    with pytest.raises(InputError) as refused:
        ingest.ingest_narrativeqa(ws, folder)
    assert snapshot(ws) == before
    assert (refused.value.path, refused.value.line, refused.value.problem, refused.value.hint) == (
        str(folder / "b_qaps.jsonl"), 2,
        f"question 7 of document {TOM} is already in the workspace with another text ({stored[:60]!r})",
        "keep the published text, or import the changed set into a new workspace")


def test_a_changed_question_given_twice_is_named_at_its_first_line(bases, tmp_path):
    changed = _q(TOM, 0, question="A changed question?")
    files = {"a_qaps.jsonl": _jsonl([_q(TOM, 900), changed]), "b_qaps.jsonl": _jsonl([changed])}
    result = _compare(bases, tmp_path, files, base="filled", staged=True)
    assert result[0] == "refused" and result[2] == 2 and "a_qaps.jsonl" in result[1]


def test_a_stored_question_with_other_references_is_refused_too(bases, tmp_path):
    with store.connect(bases["filled"]) as con:
        text, r1 = con.execute(f"SELECT text, reference_1 FROM questions WHERE id = 'nqa:{TOM}:0'").fetchone()
    files = {"qaps.csv": _csv([_q(TOM, 0, question=text, a1=r1, a2="another second reference")])}
    result = _compare(bases, tmp_path, files, base="filled", staged=True)
    assert result[0] == "refused" and result[2] == 2


# ----------------------------------------------------------- files left to the row reader, same result

ROW_READER = {
    "q_index given on some rows only": {"a_qaps.jsonl": _jsonl([_q(TOM, 5), _q(TOM), _q(ARCTURUS)])},
    "q_index with spaces": {"a_qaps.jsonl": _jsonl([_q(TOM, " 3")])},
    "q_index as 1e2": {"a_qaps.jsonl": _jsonl([_q(TOM, "1e2")])},
    "q_index as 1_000": {"a_qaps.jsonl": _jsonl([_q(TOM, "1_000")])},
    "q_index 1.0 as a number": {"a_qaps.jsonl": _jsonl(['{"document_id": "%s", "q_index": 1.0, "question": "q", '
                                                        '"answer1": "a", "answer2": "b"}' % TOM])},
    "q_index -0 as a number": {"a_qaps.jsonl": _jsonl(['{"document_id": "%s", "q_index": -0, "question": "q", '
                                                       '"answer1": "a", "answer2": "b"}' % TOM])},
    "q_index true": {"a_qaps.jsonl": _jsonl([_q(TOM, True)])},
    "q_index null": {"a_qaps.jsonl": _jsonl([_q(TOM, None) | {"q_index": None}])},
    "q_index negative": {"qaps.csv": _csv([_q(TOM, -1)])},
    "q_index above the limit": {"a_qaps.jsonl": _jsonl([_q(TOM, 1_000_000_001)])},
    "q_index of eleven digits": {"a_qaps.jsonl": _jsonl([_q(TOM, 12_345_678_901)])},
    "q_index a word": {"qaps.csv": _csv([_q(TOM, "third")])},
    "q_index twice in one object": {"a_qaps.jsonl": _jsonl(['{"document_id": "%s", "q_index": 1, "Q_INDEX": 2, '
                                                            '"question": "q", "answer1": "a", "answer2": "b"}' % TOM])},
    "an unknown document": {"qaps.csv": _csv([_q(TOM), _q(UNKNOWN)])},
    "a document of another set in this set": {"qaps.csv": _csv([_q(VALID)])},
    "a repeat with another text": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), _q(TOM, 1, question="Other?")])},
    "a repeat with another text across files": {"qaps.csv": _csv([_q(TOM), _q(TOM)]),
                                                "z_qaps.jsonl": _jsonl([_q(TOM, 1, question="Other?")])},
    "a repeat with another reference": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), _q(TOM, 1, a2="other")])},
    "a column missing": {"qaps.csv": _csv([_q(TOM)], header=["document_id", "set", "question", "answer1"])},
    "a key missing on one line": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), {"document_id": TOM, "question": "q",
                                                                      "answer1": "a"}])},
    "an empty answer in another set": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), {**_q(TOM, 2, a1=""), "set": "train"}])},
    "a blank question": {"qaps.csv": _csv([_q(TOM, question=" \t ")])},
    "a question as a number": {"a_qaps.jsonl": _jsonl([_q(TOM, 1, question=42)])},
    "a set as null": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), {**_q(TOM, 2), "set": None}])},
    "a list as a value of another column": {"a_qaps.jsonl": _jsonl([{**_q(TOM, 1), "tokens": ["a", "b"]}])},
    "invalid json": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), '{"document_id": "x",'])},
    "a json array line": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), "[1, 2]"])},
    "a key twice": {"a_qaps.jsonl": _jsonl(['{"document_id": "%s", "document_id": "%s", "question": "q", '
                                            '"answer1": "a", "answer2": "b"}' % (TOM, ARCTURUS)])},
    "a lone surrogate escape": {"a_qaps.jsonl": _jsonl(['{"document_id": "%s", "question": "\\ud800", '
                                                        '"answer1": "a", "answer2": "b"}' % TOM])},
    "deep nesting": {"a_qaps.jsonl": _jsonl([{**_q(TOM, 1), "x": json.loads("[" * 40 + "]" * 40)}])},
    "an unterminated csv quote": {"qaps.csv": _csv([_q(TOM)]) + f'{TOM},test,"open,a,b\n'},
    "a csv row of another length": {"qaps.csv": _csv([_q(TOM)]) + f"{TOM},test,q\n"},
    "a quote inside a bare csv field": {"qaps.csv": _csv([_q(TOM)]) + f'{TOM},test,say "hi",a,b\n'},
    "a value over the limit": {"a_qaps.jsonl": _jsonl([_q(TOM, 1, question="x" * 100_001)])},
    "a line separator in a jsonl line": {"a_qaps.jsonl": _jsonl([_q(TOM, 1, question="a\u2028b")]).replace(
        "\\u2028", "\u2028")},
    "a blank line of a form feed": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), "\x0c", _q(TOM, 2)])},
    "a blank line of a unit separator": {"a_qaps.jsonl": _jsonl([_q(TOM, 1), " \x1f ", _q(TOM, 2)])},
    "a next-line character after an object": {"a_qaps.jsonl": _jsonl([_q(TOM, 1)]).replace("}\n", "}\u0085\n")},
    "a cr alone": {"qaps.csv": _csv([_q(TOM), _q(ARCTURUS)]).replace("\n", "\r", 2)},
    "a header only": {"qaps.csv": "document_id,set,question,answer1,answer2\n"},
    "an empty file": {"qaps.csv": ""},
    "not utf-8": {"a_qaps.jsonl": _jsonl([_q(TOM, 1)]).encode() + b'{"document_id": "\xff"}\n'},
    "a NUL byte": {"a_qaps.jsonl": _jsonl([_q(TOM, 1)]).encode() + b"\x00\n"},
    "a good file and a bad one": {"a_qaps.jsonl": _jsonl([_q(TOM, 1)]), "b_qaps.jsonl": _jsonl([_q(TOM, "x")])},
}


@pytest.mark.parametrize("name", list(ROW_READER))
@pytest.mark.sampled(10)
def test_a_file_the_sql_leaves_to_the_row_reader_gives_the_same_result(bases, tmp_path, name):
    _compare(bases, tmp_path, ROW_READER[name], staged=False)


def test_a_question_file_that_is_a_folder_gives_the_same_error(bases, tmp_path):
    folder = _dataset(tmp_path / "d", {"qaps.csv": _csv(MIXED)})
    (folder / "x_qaps.jsonl").mkdir()
    results = []
    for in_sql in (True, False):
        ws = tmp_path / f"{in_sql}.duckdb"
        shutil.copy(bases["empty"], ws)
        results.append(_run(ws, folder, in_sql))
    assert results[0] == results[1] and results[0][0] == "refused"


# ------------------------------------------------------------------------- documents.csv and summaries

def _with_documents(tmp_path: Path, change, files: dict | None = None) -> Path:
    """A dataset of the slice's questions whose documents.csv is ``change(text)``."""
    files = files or {"a_qaps.jsonl": _jsonl([_q(TOM, 1), _q(ARCTURUS, 2)])}
    folder = _dataset(tmp_path, files)
    docs = folder / "documents.csv"
    docs.write_text(change(docs.read_text(encoding="utf-8")), encoding="utf-8")
    return folder


def _row_of(text: str, doc: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(doc))


def _cell(text: str, doc: str, column: int, value: str) -> str:
    """``text`` with one cell of ``doc``'s row replaced (``column``: its place in the header)."""
    row = _row_of(text, doc)
    cells = row.split(",")
    cells[column] = value
    return text.replace(row, ",".join(cells))


# category -> ('ingested' or words its error holds, the change to documents.csv), whose columns are
# document_id,set,kind,story_url,story_file_size,wiki_url,wiki_title,story_word_count,...
DOCUMENTS = {
    "an exact repeat of a document of the set": ("ingested", lambda t: t + _row_of(t, TOM) + "\n"),
    "a repeat with other values": ("repeats line 3 with other values",
                                   lambda t: t + _cell(_row_of(t, TOM), TOM, 7, "12") + "\n"),
    "a repeat of another set's document with other values": (
        "repeats line 5 with other values", lambda t: t + _cell(_row_of(t, VALID), VALID, 2, "x") + "\n"),
    "an exact repeat of another set's document": ("ingested", lambda t: t + _row_of(t, VALID) + "\n"),
    "a word count with an exponent": ("ingested", lambda t: _cell(t, TOM, 7, "1e3")),
    "a word count 3.0": ("ingested", lambda t: _cell(t, TOM, 7, "3.0")),
    "a word count with underscores": ("ingested", lambda t: _cell(t, TOM, 7, "4_274")),
    "an empty word count": ("ingested", lambda t: _cell(t, TOM, 7, "")),
    "a word count that is a word": ("not 'many'", lambda t: _cell(t, TOM, 7, "many")),
    "a negative word count": ("not '-4'", lambda t: _cell(t, TOM, 7, "-4")),
    "a word count above the limit": ("not '2000000000'", lambda t: _cell(t, TOM, 7, "2000000000")),
    "a bad word count in another set": ("ingested", lambda t: _cell(t, VALID, 7, "many")),
    "a title with a control character": ("wiki_title 'Tom", lambda t: _cell(t, TOM, 6, "Tom\x07Kitten")),
    "a title with a bidi override": ("OVERRIDE", lambda t: _cell(t, ARCTURUS, 6, "A \u202eVoyage")),
    "a title of other scripts": ("ingested", lambda t: _cell(t, TOM, 6, "Мышонок Tom 誰")),
    "a bad title in another set": ("ingested", lambda t: _cell(t, VALID, 6, "x\x07")),
    "a title too long": ("above the 200 allowed", lambda t: _cell(t, TOM, 6, "t" * 300)),
    "a bad title after a bad word count": ("documents.csv:2: wiki_title",
                                           lambda t: _cell(_cell(t, TOM, 7, "x"), ARCTURUS, 6, "\x07")),
    "no story columns": ("ingested", lambda t: "\n".join(",".join(line.split(",")[:3] + [line.split(",")[6]])
                                                        for line in t.splitlines()) + "\n"),
    "a column missing": ("missing column(s) wiki_title", lambda t: t.replace("wiki_title", "title", 1)),
    "an empty kind": ("empty value in column kind", lambda t: _cell(t, TOM, 2, "")),
}


# The fast lane's sample of the categories (one per rule); the others run in the slow lane.
FAST_DOCUMENTS = ("an exact repeat of a document of the set", "a repeat with other values", "a word count with an exponent",
                  "a word count that is a word", "a title with a control character")


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST_DOCUMENTS else pytest.mark.slow)
                                  for n in DOCUMENTS])
def test_a_documents_file_gives_the_same_result(bases, tmp_path, name):
    expected, change = DOCUMENTS[name]
    folder = _with_documents(tmp_path / "d", change)
    results = []
    for in_sql in (True, False):
        ws = tmp_path / f"{in_sql}.duckdb"
        shutil.copy(bases["empty"], ws)
        results.append(_run(ws, folder, in_sql))
    assert results[0] == results[1]
    assert results[0][0] == "ingested" if expected == "ingested" else expected in results[0][1]


SUMMARIES = {
    "the last row of a document wins, across files": {
        "a_summaries.jsonl": _jsonl([{"document_id": TOM, "summary": "one"}, {"document_id": TOM, "summary": "two"}]),
        "b_summaries.jsonl": _jsonl([{"document_id": ARCTURUS, "summary": " three "}, {"document_id": UNKNOWN, "summary": "x"}])},
    "a summary as a number": {"a_summaries.jsonl": _jsonl([{"document_id": TOM, "summary": 1e2}])},
    "an empty summary": {"a_summaries.jsonl": _jsonl([{"document_id": TOM, "summary": " "}])},
    "a summary missing": {"a_summaries.jsonl": _jsonl([{"document_id": TOM}])},
    "a summary of another set's document": {"a_summaries.jsonl": _jsonl([{"document_id": VALID, "summary": "v"}])},
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n.startswith("the last") else pytest.mark.slow)
                                  for n in SUMMARIES])
def test_a_summaries_file_gives_the_same_result(bases, tmp_path, name):
    _compare(bases, tmp_path, {"a_qaps.jsonl": _jsonl([_q(TOM, 1)]), **SUMMARIES[name]})


# ----------------------------------------------------------------------------------- random files

def _random_files(rng: random.Random) -> dict[str, str]:
    docs = [TOM, TOM, ARCTURUS, THIRD, VALID, UNKNOWN]
    files = {}
    for name in rng.sample(["qaps.csv", "a_qaps.jsonl", "b_qaps.jsonl"], rng.randint(1, 3)):
        numbered = rng.random() < 0.6
        rows = []
        for _ in range(rng.randint(1, 12)):
            doc = rng.choice(docs)
            row = _q(doc, rng.choice([0, 1, 2, 3, 7]) if numbered else None,
                     question=rng.choice(["Who?", "Who?", "Where?", " Why? "]), a1=rng.choice(["a", "b"]))
            if doc in (VALID, UNKNOWN) or rng.random() < 0.1:
                row["set"] = rng.choice(["valid", "train", "test"])
            if numbered and rng.random() < 0.05:
                row["q_index"] = rng.choice(["4", " 4", "x", 4.0, None])
            rows.append(row)
        files[name] = _csv(rows, header=["document_id", "set", "question", "answer1", "answer2"]
                           + (["q_index"] if numbered else [])) if name.endswith(".csv") else _jsonl(rows)
    return files


def _random_cases(seed: int = 35, n: int = 30) -> list[tuple[dict[str, str], str]]:
    """``n`` random datasets (question files, base workspace), drawn in turn from one generator."""
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        files = _random_files(rng)
        cases.append((files, rng.choice(["empty", "filled"])))
    return cases


RANDOM_CASES = _random_cases()
# The fast lane's sample and what each gives (a stored question changed, an ingest, a repeat with another
# text); the other cases run in the slow lane.
FAST_CASES = {2: "refused", 3: "ingested", 4: "refused"}


@pytest.mark.parametrize("i", [pytest.param(i, marks=() if i in FAST_CASES else pytest.mark.slow)
                               for i in range(len(RANDOM_CASES))])
def test_random_question_files_give_the_same_result(bases, tmp_path, i):
    files, base = RANDOM_CASES[i]
    result = _compare(bases, tmp_path, files, base=base)
    if i in FAST_CASES:
        assert result[0] == FAST_CASES[i], "the fast sample covers both outcomes"


def _orders(n: int) -> list[str]:
    """``n`` question lines, each with the same keys in another order (a file of many key lists)."""
    import itertools

    keys = ["document_id", "set", "question", "answer1", "answer2", "q_index", "kind"]
    lines = []
    for i, order in enumerate(itertools.islice(itertools.permutations(keys), n)):
        row = {**_q(TOM, 2000 + i, question=f"Q{i}?"), "kind": "gutenberg"}
        lines.append(json.dumps({k: row[k] for k in order}))
    return lines


@pytest.mark.parametrize("twice", [False, True])
def test_a_file_of_more_key_orders_than_checked_at_once_gives_the_same_result(bases, tmp_path, twice):
    """The reader checks each distinct list of keys once (``MAX_KEY_LISTS`` of them), else every line in SQL."""
    from lsqa.store.importers.rows import MAX_KEY_LISTS

    lines = _orders(MAX_KEY_LISTS + 5)
    if twice:  # one line names a column twice (as "question" and " Question")
        lines[700] = lines[700][:-1] + ', " Question": "again?"}'
    result = _compare(bases, tmp_path, {"a_qaps.jsonl": _jsonl(lines)}, staged=not twice)
    assert result[0] == ("refused" if twice else "ingested")

