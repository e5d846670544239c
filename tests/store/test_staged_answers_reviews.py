"""Issue 35: ``lsqa import-answers`` and ``lsqa import-reviews`` in SQL against their row importers
(``import_answers_rows``, ``import_reviews_rows``: the importers as they were) as the oracle.

Inputs are made by category — each check of the row importer, each way a file can be unusual — in
CSV and in JSONL. For every one both importers run on copies of one workspace: the same InputError
(message, line and hint) and the workspace untouched, or the same rows in the same tables (whole
tables, ``created_at`` aside) and the same summary. The cases the SQL must take itself (good files,
quoted CSV, the checks over the whole file it words) are also run through the staged importer
alone, so a silent fall back to rows cannot pass.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from lsqa import store
from lsqa.audit.review_import import import_reviews, import_reviews_staged
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.errors import InputError
from lsqa.store import reviews as reviews_store
from lsqa.study.imports import import_answers, import_answers_staged
from tests.conftest import TEST_DATA
from tests.support.bad_input import snapshot
from tests.support.import_oracle import import_answers_rows, import_judgments_rows, import_reviews_rows

TOM = "2c5f448df18172babaac38806e1fb699a8baf65b"
Q0, Q1, Q2 = f"nqa:{TOM}:0", f"nqa:{TOM}:1", f"nqa:{TOM}:2"
FMTS = ["csv", "jsonl"]


def _write(path: Path, rows: list[dict], fmt: str, *, quote_all: bool = False) -> Path:
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        header = list(dict.fromkeys(k for r in rows for k in r))
        out = io.StringIO(newline="")
        writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
        writer.writerow(header)
        writer.writerows([[r.get(c, "") for c in header] for r in rows])
        path.write_text(out.getvalue(), encoding="utf-8")
    return path


def _verdict(**changes) -> dict:
    return {"question_id": Q1, "rater": "j", "kind": "pairwise", "system_a": "s1", "system_b": "s2",
            "shown_order": "ab", "reference": "", "label": "A", **changes}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """Questions, answers of an imported system, a system of a run, verdicts of three kinds, and
    reviews: one from the Audit page, one imported before."""
    folder = tmp_path_factory.mktemp("staged-ar")
    path = folder / "ws.duckdb"
    ingest_narrativeqa(path, TEST_DATA / "narrativeqa_slice")
    import_answers_rows(path, _write(folder / "a0.jsonl", [{"question_id": Q0, "system": "old", "answer": "Ten."}],
                                     "jsonl"))
    verdicts = [_verdict(), _verdict(shown_order="ba", label="B"), _verdict(system_a="s2", system_b="s3", label="tie"),
                _verdict(question_id=Q0, label="B"),
                _verdict(rater="g", kind="groundtruth", system_b="", reference="1", label="yes"),
                _verdict(rater="g", kind="groundtruth", system_b="", reference="2", label="no"),
                _verdict(rater="y", kind="absolute", system_b="", label="no")]
    import_judgments_rows(path, _write(folder / "v.jsonl", verdicts, "jsonl"))
    with store.write(path) as con:
        con.execute("INSERT INTO systems (name, model, context) VALUES ('run-sys', 'openai/gpt-4o', 'none')")
        judgment = con.execute("SELECT id FROM judgments WHERE judge = 'y'").fetchone()[0]
        reviews_store.add_review(con, annotator="ann", judgment_id=judgment, action="override", label="yes")
    import_reviews_rows(path, _write(folder / "r0.jsonl", [_review(annotator="early"),
                                                          _review(question_id=Q0, annotator="early", pi="0.2")],
                                     "jsonl"))
    return path


TABLES = {"answers": "SELECT * EXCLUDE (created_at) FROM answers ORDER BY ALL",
          "systems": "SELECT * EXCLUDE (created_at) FROM systems ORDER BY ALL",
          "reviews": "SELECT * EXCLUDE (created_at) FROM human_reviews ORDER BY id",
          "draws": "SELECT * EXCLUDE (created_at) FROM audit_draws ORDER BY id"}


def _run(importer, workspace: Path, source: Path, tables: tuple[str, ...]):
    before = snapshot(workspace)
    try:
        summary = importer(workspace, source)
    except InputError as exc:
        assert snapshot(workspace) == before, "a refused import changed the workspace"
        return ("refused", str(exc), exc.line, exc.hint)
    with store.connect(workspace) as con:
        rows = {t: _same_json(con.execute(TABLES[t])) for t in tables}
    return ("imported", summary.to_dict(), rows)


def _same_json(cursor) -> list[tuple]:
    """The rows, ``extra`` as its JSON in one spelling: a file the staged SQL declines keeps DuckDB's
    spelling of it (compact, text unescaped), the oracle ``json.dumps``'s; the JSON is the same."""
    at = [d[0] for d in cursor.description].index("extra") if "extra" in [d[0] for d in cursor.description] else None
    rows = cursor.fetchall()
    if at is None:
        return rows
    return sorted(r[:at] + (json.dumps(json.loads(r[at]), sort_keys=True),) + r[at + 1:] for r in rows)


def _compare(base: Path, tmp_path: Path, source: Path, importers, tables, *, staged: bool | None = None):
    """Both importers on copies of ``base``; ``staged``: whether the SQL must take the file itself."""
    results = []
    for name, importer in (("sql", importers[0]), ("rows", importers[1])):
        ws = tmp_path / f"{name}.duckdb"
        shutil.copy(base, ws)
        results.append(_run(importer, ws, source, tables))
    assert results[0] == results[1]
    if staged is not None:
        ws = tmp_path / "staged-only.duckdb"
        shutil.copy(base, ws)
        try:
            taken = importers[2](ws, source) is not None
        except InputError:
            taken = True
        assert taken == staged, f"the SQL path {'declined' if staged else 'took'} {source.name}"
    return results[0]


# ------------------------------------------------------------------------------------------ answers

ANSWERS = (import_answers, import_answers_rows, import_answers_staged)


def _a(**changes) -> dict:
    return {"question_id": Q1, "system": "imp", "answer": "He is a cat.", **changes}


def _answers(base, tmp_path, source, staged=None):
    return _compare(base, tmp_path, source, ANSWERS, ("answers", "systems"), staged=staged)


LONG_TEXT = ('She said "no", then left,\nand the letter — «fin» — was burnt 🔥.\n\n  Ends here.  ')
GOOD_ANSWERS = [_a(), _a(question_id=Q0, answer="Café, naïve; 北京"), _a(system="imp2", answer=LONG_TEXT),
                _a(question_id=Q2, system="imp2", answer="  \u3000padded\u00a0 "),
                _a(question_id=Q0, system="old", answer="Ten.")]


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("quote_all", [False, True])
def test_good_answers_give_the_same_rows(base, tmp_path, fmt, quote_all):
    rows = [{**r, "model": f"m{i}", "note": 'a "b", c\\d'} for i, r in enumerate(GOOD_ANSWERS)]
    source = _write(tmp_path / f"a.{fmt}", rows, fmt, quote_all=quote_all)
    result = _answers(base, tmp_path, source, staged=True)
    assert result[0] == "imported" and result[1]["added"] == {"systems": 2, "answers": 4}
    assert result[1]["skipped"] == {"answers": 1}


@pytest.mark.parametrize("fmt", FMTS)
def test_answer_aliases_and_repeats_give_the_same_rows(base, tmp_path, fmt):
    rows = [{"item_id": Q1, "system_name": "al", "answer_text": "x", "Text": "not this one"},
            {"item_id": Q0, "system_name": "al", "answer_text": "", "Text": "the text column"},
            {"item_id": Q1, "system_name": "al", "answer_text": "x", "Text": "exact repeat"},
            # the same answer again with another extra column: the first line's row is kept
            {"item_id": Q0, "system_name": "al2", "answer_text": "y", "model": "first"},
            {"item_id": Q0, "system_name": "al2", "answer_text": " y ", "model": "second"}]
    source = _write(tmp_path / f"a.{fmt}", rows, fmt)
    result = _answers(base, tmp_path, source, staged=True)
    assert result[0] == "imported" and result[1]["skipped"] == {"answers": 2}
    assert any('"model": "first"' in row[-1] for row in result[2]["answers"])


@pytest.mark.parametrize("fmt", FMTS)
def test_answers_twice_add_nothing(base, tmp_path, fmt):
    source = _write(tmp_path / f"a.{fmt}", GOOD_ANSWERS, fmt)
    ws = tmp_path / "ws.duckdb"
    shutil.copy(base, ws)
    import_answers(ws, source)
    again = _answers(ws, tmp_path, source, staged=True)
    assert again[1]["added"] == {"systems": 0, "answers": 0}


BAD_ANSWERS = {
    "empty question_id": [_a(question_id="")], "empty system": [_a(system="")], "empty answer": [_a(answer="")],
    "blank answer": [_a(answer="  \u3000 ")], "system over the name limit": [_a(system="s" * 201)],
    "question id over the name limit": [_a(question_id="q" * 201)],
    "non-ASCII system": [_a(system="gрt")], "bidi in a system": [_a(system="s\u202e1")],
    "tab in a system": [_a(system="a\tb")], "answer over the limit": [_a(answer="x" * 100_001)],
    "repeat with another answer": [_a(), _a(system="z"), _a(answer="He is a dog.")],
    "unknown question": [_a(), _a(question_id="nqa:nope:0")],
    "system of a run": [_a(), _a(system="run-sys")],
    "stored with another text": [_a(), _a(question_id=Q0, system="old", answer="Eleven.")],
    "look-alike system": [_a(system="оld")],
    "non-ASCII extra": [_a(model="modèle")],
    "multi-line answer with a quote": [_a(answer='line one\n"two"\n')],
}
# Good files the SQL leaves to the row importer, and the checks it words itself.
ROW_PATH_GOOD = {"look-alike system", "non-ASCII extra", "non-ASCII system"}
SQL_WORDED = {"repeat with another answer", "unknown question", "system of a run", "stored with another text"}
SQL_GOOD = {"multi-line answer with a quote"}


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("name", list(BAD_ANSWERS))
@pytest.mark.sampled(5)
def test_a_bad_answer_gives_the_same_error(base, tmp_path, fmt, name):
    rows = [_a(question_id=Q2, system="first")] + BAD_ANSWERS[name]
    source = _write(tmp_path / f"a.{fmt}", rows, fmt)
    staged = True if name in SQL_WORDED | SQL_GOOD else (False if name in ROW_PATH_GOOD else None)
    result = _answers(base, tmp_path, source, staged=staged)
    assert result[0] == ("imported" if name in ROW_PATH_GOOD | SQL_GOOD else "refused"), result


def _file(text) -> callable:
    return lambda path: path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)


_AH = "question_id,system,answer"
_AROW = f"{Q1},imp,He is a cat."
UNUSUAL_ANSWER_CSV = {
    "too many fields": f"{_AH}\n{_AROW}\n{_AROW},x\n", "too few fields": f"{_AH}\n{_AROW}\n{Q1},imp\n",
    "blank lines": f"\n{_AH}\n\n{_AROW}\n,,\n   \n", "blank records": f'{_AH}\n"",,\n{_AROW}\n" ",""," \n "\n',
    "duplicate column": f"{_AH},answer\n{_AROW},B\n", "header only": f"{_AH}\n", "empty": "", "blank": "  \n\n",
    "missing column": "question_id,system\nq,s\n", "quoted header": f'"question_id",system,answer\n{_AROW}\n',
    "quote inside a bare field": f'{_AH}\n{Q1},imp,He said "hi"\n', "text after a quote": f'{_AH}\n{Q1},imp,"a"b\n',
    "space before a quote": f'{_AH}\n{Q1},imp, "a"\n', "unterminated quote": f'{_AH}\n{Q1},imp,"He is\n',
    "quoted newline at the end": f'{_AH}\n{Q1},imp,"He is\n"\n{Q0},imp,"x"\n',
    "CRLF": f"{_AH}\r\n{_AROW}\r\n", "CR inside a quote": f'{_AH}\n{Q1},imp,"a\rb"\n',
    "CRLF inside a quote": f'{_AH}\r\n{Q1},imp,"one\r\n\r\ntwo"\r\n{Q0},imp,x\r\n',
    "mixed line ends": f"{_AH}\r\n{_AROW}\n\r\n{Q0},imp,y\r\n", "CR at the very end": f"{_AH}\r\n{_AROW}\r",
    "CRLF and a BOM": f"\ufeff{_AH}\r\n{_AROW}\r\n", "CRLF repeat": f"{_AH}\r\n{_AROW}\r\n\r\n{Q1},imp,other\r\n",
    # Old Mac line ends: a lone CR ends each line (Python's csv module reads them so).
    "CR line ends": f"{_AH}\r{_AROW}\r\r{Q0},imp,y\r", "CR line ends, no last one": f"{_AH}\r{_AROW}",
    "CR line ends, a CR inside a quote": f'{_AH}\r{Q1},imp,"one\rtwo"\r{Q0},imp,x\r',
    "CR line ends, an unterminated quote": f'{_AH}\r{_AROW}\r{Q0},imp,"open\r',
    "CR line ends, a repeat": f"{_AH}\r{_AROW}\r{Q1},imp,other\r",
    "CR line ends and a BOM": f"\ufeff{_AH}\r{_AROW}\r",
    # A lone CR among LF lines ends a line too; inside quotes it stays, as the CR it is.
    "a lone CR between two LF lines": f"{_AH}\n{_AROW}\r{Q0},imp,y\n",
    "a lone CR in a bare field": f"{_AH}\n{Q1},imp,a\rb\n",
    "a lone CR and an LF in one quote": f'{_AH}\n{Q1},imp,"one\rtwo\nthree"\n{Q0},imp,"x\ry"\r{Q2},imp,z\n',
    "a CR before a CRLF": f"{_AH}\r\n{_AROW}\r\r\n{Q0},imp,y\r\n",
    "BOM": f"\ufeff{_AH}\n{_AROW}\n", "upper-case header": f"{_AH.upper()}\n{_AROW}\n",
    "NUL byte": f"{_AH}\n{_AROW}\x00\n", "latin-1": f"{_AH}\n{Q1},imp,caf\xe9\n".encode("latin-1"),
    "line separator": f"{_AH}\n{Q1},imp,a\u2028b\n{Q0},imp,c\n", "vertical tab": f"{_AH}\n{Q1},imp,\x0ba\x0b\n",
    "cell over the limit": f"{_AH}\n{Q1},imp,{'A' * 100_001}\n", "spaces in the header": f" {_AH.replace(',', ' , ')}\n{_AROW}\n",
    "extra columns": f"{_AH},Model, note \n{_AROW},m1,\"a,b\"\n", "numbers": f"{_AH}\n12,imp,3.50\n",
}
UNUSUAL_ANSWER_JSONL = {
    "not JSON": f'{json.dumps(_a())}\n{{"question_id": \n', "array": f'{json.dumps(_a())}\n[1, 2]\n',
    "duplicate key": f'{json.dumps(_a())[:-1]}, "answer": "B"}}\n',
    "keys differing by case": f'{json.dumps(_a())[:-1]}, "ANSWER": "B"}}\n',
    "a number": json.dumps(_a(answer=3.5)) + "\n", "a whole number": json.dumps(_a(question_id=12)) + "\n",
    "null": json.dumps(_a(answer=None)) + "\n", "a list": json.dumps(_a(answer=["x"])) + "\n",
    "escapes": json.dumps(_a(answer="caf\u00e9 \"q\" \\ \t\n \U0001f525 /")) + "\n",
    "escaped key": '{"question_\\u0069d": "' + Q1 + '", "system": "imp", "answer": "x"}\n',
    "raw non-ASCII": json.dumps(_a(answer="café 🔥"), ensure_ascii=False) + "\n",
    "NUL escape": json.dumps(_a(answer="a\u0000b")) + "\n",
    "NaN": json.dumps(_a()).replace('"He is a cat."', "NaN") + "\n",
    "extra columns": json.dumps({**_a(), "Model": "m", "score": "0.5"}) + "\n" + json.dumps({**_a(question_id=Q0), "n": 1}) + "\n",
    "extra column of another case": json.dumps({**_a(), "Model": "m"}) + "\n" + json.dumps({**_a(question_id=Q0), "model": "n"}) + "\n",
    "blank lines": f"\n{json.dumps(_a())}\n   \n\u3000\n{json.dumps(_a(question_id=Q0))}\n",
    "trailing comma": json.dumps(_a())[:-1] + ", }\n", "trailing text": json.dumps(_a()) + " x\n",
    "raw line separator": json.dumps(_a(answer="a\u2028b"), ensure_ascii=False) + "\n",
    "raw tab in a string": json.dumps(_a()).replace("He is", "He\tis") + "\n",
    "CRLF": json.dumps(_a()) + "\r\n" + json.dumps(_a(question_id=Q0)) + "\r\n",
    "missing column": json.dumps({k: v for k, v in _a().items() if k != "answer"}) + "\n",
    "spaces around keys": '{" Question_ID ": "' + Q1 + '" , "system":"imp",\t"answer" : "x"}\n',
}


@pytest.mark.parametrize("name", list(UNUSUAL_ANSWER_CSV))
@pytest.mark.sampled(5)
def test_an_unusual_answer_csv_gives_the_same_result(base, tmp_path, name):
    source = tmp_path / "a.csv"
    _file(UNUSUAL_ANSWER_CSV[name])(source)
    _answers(base, tmp_path, source)


@pytest.mark.parametrize("name", list(UNUSUAL_ANSWER_JSONL))
@pytest.mark.sampled(5)
def test_an_unusual_answer_jsonl_gives_the_same_result(base, tmp_path, name):
    source = tmp_path / "a.jsonl"
    _file(UNUSUAL_ANSWER_JSONL[name])(source)
    _answers(base, tmp_path, source)


# Files the SQL must take itself (the others of the two lists above are compared only).
STAGED_CSV = {"CRLF", "CRLF inside a quote", "mixed line ends", "CR at the very end", "CRLF and a BOM", "CRLF repeat",
              "blank records", "quoted header", "quoted newline at the end", "BOM",
              "upper-case header", "vertical tab", "line separator", "spaces in the header", "extra columns", "numbers"}
STAGED_JSONL = {"CRLF", "escapes", "raw non-ASCII", "extra column of another case", "blank lines",
                "spaces around keys"}


@pytest.mark.parametrize("fmt", FMTS)
def test_the_sql_takes_the_files_it_should(base, tmp_path, fmt):
    """A silent fall back to rows would pass the comparisons above: these files the SQL must take
    (an import, or an error it words itself)."""
    cases, names = (UNUSUAL_ANSWER_CSV, STAGED_CSV) if fmt == "csv" else (UNUSUAL_ANSWER_JSONL, STAGED_JSONL)
    for name in sorted(names):
        source = tmp_path / f"a-{len(name)}.{fmt}"
        _file(cases[name])(source)
        ws = tmp_path / "taken.duckdb"
        shutil.copy(base, ws)
        try:
            taken = import_answers_staged(ws, source) is not None
        except InputError:
            taken = True
        assert taken, name


def test_answer_lines_are_numbered_as_the_csv_module_does(base, tmp_path):
    """A quoted answer over three lines: the next row's line is the csv module's ``line_num``."""
    source = tmp_path / "a.csv"
    source.write_text(f'{_AH}\n\n{Q1},imp,"one\n\ntwo"\n{Q1},imp,other\n')
    result = _answers(base, tmp_path, source, staged=True)
    assert result[0] == "refused" and result[2] == 6 and "repeats line 5" in result[1]


# ------------------------------------------------------------------------------------------ reviews

REVIEWS = (import_reviews, import_reviews_rows, import_reviews_staged)


def _review(**changes) -> dict:
    return {"judge": "j", "question_id": Q1, "system_a": "s1", "system_b": "s2", "label": "A", "annotator": "amy",
            **changes}


def _reviews(base, tmp_path, source, staged=None):
    return _compare(base, tmp_path, source, REVIEWS, ("reviews", "draws"), staged=staged)


GOOD_REVIEWS = [
    _review(), _review(label="b", annotator="bo"),                          # confirm; override
    _review(system_a="s2", system_b="s1", label="B", annotator="cy"),        # reversed pair: B is A
    _review(system_a="s3", system_b="s2", label="tie", inclusion_probability="0.25", stratum="x"),
    _review(question_id=Q0, label="'A'", pi="1e-3"),                         # drawn before: no draw
    _review(system_a="s2", system_b="s3", label="A", annotator="dee", pi="0.5"),  # drawn by an earlier line
    {"rater": "g", "item_id": Q1, "system": "s1", "reference": "2", "label": "Correct", "annotator": "amy"},
    {"rater": "g", "item_id": Q1, "system": "s1", "label": "no", "annotator": "amy", "inclusion_prob": "1"},
    _review(judge="y", system_a="s1", system_b="", label="YES", annotator="ann"),
    _review(annotator="early"),                                              # imported before: skipped
    _review(),                                                               # a repeat in the file: skipped
]


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("gold", [False, True])
def test_good_reviews_give_the_same_rows(base, tmp_path, fmt, gold):
    source = _write(tmp_path / f"r.{fmt}", GOOD_REVIEWS, fmt)
    results = []
    for name, importer in (("sql", import_reviews), ("rows", import_reviews_rows)):
        ws = tmp_path / f"{name}-{gold}.duckdb"
        shutil.copy(base, ws)
        results.append(_run(lambda w, s, i=importer: i(w, s, gold=gold), ws, source, ("reviews", "draws")))
    assert results[0] == results[1]
    assert results[0][1]["added"] == {"reviews": 10 if gold else 9}  # "early" was imported (not gold)
    # Migration 0023: the first line of a verdict with a probability draws it, unless it was drawn before.
    draws = [(d[2], d[3], d[4]) for d in results[0][2]["draws"]]
    assert draws == [("import", 0.2, "all"), ("import", 0.25, "x"), ("import", 1.0, "all")]
    ws = tmp_path / "staged-only.duckdb"
    shutil.copy(base, ws)
    assert import_reviews_staged(ws, source, gold=gold) is not None


@pytest.mark.parametrize("fmt", FMTS)
def test_reviews_twice_add_nothing(base, tmp_path, fmt):
    source = _write(tmp_path / f"r.{fmt}", GOOD_REVIEWS, fmt)
    ws = tmp_path / "ws.duckdb"
    shutil.copy(base, ws)
    import_reviews(ws, source)
    again = _reviews(ws, tmp_path, source, staged=True)
    assert again[1]["added"] == {"reviews": 0}


BAD_REVIEWS = {
    "empty judge": [_review(judge="")], "empty annotator": [_review(annotator="")], "empty label": [_review(label="")],
    "blank annotator": [_review(annotator="   ")], "blank judge": [_review(judge="  ")],
    "unknown judge": [_review(judge="nobody")], "unknown question": [_review(question_id="nqa:nope:0")],
    "unknown pair": [_review(system_b="s9")], "no verdict with this reference": [_review(judge="g", system_b="",
                                                                                           reference="3")],
    "label of the other family": [_review(label="yes")], "label of no kind": [_review(label="maybe")],
    "probability not a number": [_review(pi="half")], "probability 0": [_review(pi="0")],
    "probability above 1": [_review(inclusion_probability="1.5")], "probability NaN": [_review(pi="nan")],
    "probability with underscores": [_review(pi="0_5")], "probability with spaces": [_review(pi=" 0.5 ")],
    "annotator over the limit": [_review(annotator="a" * 101)], "non-ASCII annotator": [_review(annotator="Zoë")],
    "bidi annotator": [_review(annotator="a\u202eb")], "look-alike annotator": [_review(annotator="аnn")],
    "non-ASCII stratum": [_review(pi="0.5", stratum="été")],
}
ROW_PATH_GOOD_REVIEWS = {"non-ASCII annotator", "look-alike annotator", "probability with spaces",
                         "non-ASCII stratum"}


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("name", list(BAD_REVIEWS))
@pytest.mark.sampled(10)
def test_a_bad_review_gives_the_same_error(base, tmp_path, fmt, name):
    rows = [_review(annotator="zed")] + BAD_REVIEWS[name]
    source = _write(tmp_path / f"r.{fmt}", rows, fmt)
    result = _reviews(base, tmp_path, source)
    assert result[0] == ("imported" if name in ROW_PATH_GOOD_REVIEWS else "refused"), result


_RH = "judge,question_id,system_a,system_b,label,annotator"
_RROW = f"j,{Q1},s1,s2,A,amy"
UNUSUAL_REVIEW_FILES = {
    "r.csv": {"header only": f"{_RH}\n", "empty": "", "CRLF": f"{_RH}\r\n{_RROW}\r\n", "BOM": f"\ufeff{_RH}\n{_RROW}\n",
              "quoted": f'{_RH}\n"j","{Q1}","s1","s2","A","amy"\n', "too few fields": f"{_RH}\n{_RROW}\nj,{Q1}\n",
              "extra columns": f"{_RH},note\n{_RROW},\"a, b\"\n", "missing column": f"judge,question_id\nj,{Q1}\n",
              "CR line ends": f"{_RH}\r{_RROW}\r\rj,{Q0},s1,s2,B,amy\r",
              "CR line ends, a quoted CR": f'{_RH},note\r{_RROW},"a\rb"\r'},
    "r.jsonl": {"a number": json.dumps(_review(pi=0.5)) + "\n", "a list": json.dumps(_review(label=["A"])) + "\n",
                "escapes": json.dumps(_review(annotator="Zo\u00eb")) + "\n", "not JSON": "{\n",
                "extra columns": json.dumps({**_review(), "note": "x", "n": 2}) + "\n"},
}


@pytest.mark.parametrize("name", [(f, n) for f, cases in UNUSUAL_REVIEW_FILES.items() for n in cases],
                         ids=lambda v: f"{v[0]}-{v[1]}")
@pytest.mark.sampled(3)
def test_an_unusual_review_file_gives_the_same_result(base, tmp_path, name):
    source = tmp_path / name[0]
    _file(UNUSUAL_REVIEW_FILES[name[0]][name[1]])(source)
    _reviews(base, tmp_path, source)


# ------------------------------------------------------------------------------------------ random files

_PIECES = ["He", " is", ",", '"', '""', "\n", "\r\n", " ", "\t", "\u3000", "\xa0", "é", "🔥", "'", "x", "\\", "", "  ",
           "\x0b", "\u2028", ".", "A,B"]


def _by_hand(cell: str) -> str:
    """A CSV cell as a person writes one: quoted only where it could not be read otherwise (a comma, a line
    break, a quote first), so a quote further in stays bare (``5" tall``)."""
    if "," in cell or "\n" in cell or "\r" in cell or cell.startswith('"'):
        return '"' + cell.replace('"', '""') + '"'
    return cell


def _random_file(path: Path, rows: list[dict], rng, by_hand: bool = False) -> Path:
    """``rows`` as CSV (LF or CRLF, quoted where needed or everywhere, stray blank lines; with ``by_hand`` each
    cell as ``_by_hand`` writes it) or JSONL (ASCII-escaped or raw, CRLF or blank lines between)."""
    if path.suffix == ".csv":
        out = io.StringIO(newline="")
        writer = csv.writer(out, lineterminator=rng.choice(["\n", "\r\n"]),
                            quoting=rng.choice([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]))
        header = list(dict.fromkeys(k for r in rows for k in r))
        writer.writerow(header)
        for r in rows:
            if by_hand:
                out.write(",".join(_by_hand(str(r.get(c, ""))) for c in header) + writer.dialect.lineterminator)
            else:
                writer.writerow([r.get(c, "") for c in header])
            if rng.random() < 0.15:
                out.write(rng.choice(["\n", ",,\n", "  \n", "\r\n"]))
        path.write_text(out.getvalue(), encoding="utf-8")
    else:
        ascii_only = rng.random() < 0.5
        path.write_text("".join(json.dumps(r, ensure_ascii=ascii_only) + rng.choice(["\n", "\n", "\r\n", "\n\n"])
                                for r in rows), encoding="utf-8")
    return path


# Whole-file shapes that make the SQL path decline a file to the table reader, or make both refuse it.
_ODD_SHAPES = {
    "csv": ["bom", "lone CR ends", "CR LF on some lines", "no last line end", "blank and Unicode-space lines after",
            "cut anywhere"],
    "jsonl": ["bom", "CR LF on some lines", "no last line end", "blank and Unicode-space lines after",
              "cut anywhere", "an empty object", "a list", "a comment", "a number where text belongs"],
}


def _odd_shape(path: Path, shape: str, rng, number_row: dict) -> None:
    """Give the file at ``path`` one of ``_ODD_SHAPES``; ``number_row``: a row of the import's own with a number
    where text belongs (that shape's line)."""
    data = path.read_bytes()
    if shape == "bom":
        data = b"\xef\xbb\xbf" + data
    elif shape == "lone CR ends":  # old Mac files; a break inside a quoted value becomes a CR too
        data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    elif shape == "CR LF on some lines":
        lines = data.split(b"\n")
        data = b"\n".join(line + b"\r" if not line.endswith(b"\r") and rng.random() < 0.5 else line
                          for line in lines[:-1]) + b"\n" + lines[-1]
    elif shape == "no last line end":
        data = data.rstrip(b"\r\n")
    elif shape == "blank and Unicode-space lines after":
        data += rng.choice([b"\n\n", b" \n", "\u3000\n".encode(), b"\r\n\r\n", "\u2028".encode()])
    elif shape == "cut anywhere":  # inside a quoted value, a JSON string, a UTF-8 character, ...
        data = data[:rng.randint(1, len(data))]
    else:
        lines = data.split(b"\n")
        lines.insert(rng.randint(0, len(lines)), {
            "an empty object": b"{}", "a list": b"[]", "a comment": b"// checked by hand",
            "a number where text belongs": json.dumps(number_row).encode()}[shape])
        data = b"\n".join(lines)
    path.write_bytes(data)


def _odd_files(folder: Path, seeds, make, number_row: dict):
    """For each seed, a random file of ``make(rng)``'s rows (``_random_file``) in one odd shape, its path."""
    import random

    folder.mkdir(exist_ok=True)
    for seed in seeds:
        rng = random.Random(seed)
        fmt = rng.choice(FMTS)
        source = _random_file(folder / f"{seed}.{fmt}", make(rng), rng)
        _odd_shape(source, rng.choice(_ODD_SHAPES[fmt]), rng, number_row)
        yield source


# Seeds 0..39 of a random-file test: a sample in the fast lane, the rest marked slow (`make test` runs both).
SEEDS = [pytest.param(range(0, 4), id="sample"), pytest.param(range(4, 40), id="rest", marks=pytest.mark.slow)]


def _at_least(seeds: range, of_40: int) -> int:
    """The share of ``of_40`` (files the SQL takes of the 40 seeds) these seeds must take, the sample
    counted as taken whole."""
    return max(0, of_40 - (40 - len(seeds)))


def _random_answers(rng) -> list[dict]:
    """1-5 answer rows: quotes, commas, line breaks, CR, Unicode whitespace and look-alike spellings."""
    rows = []
    for _ in range(rng.randint(1, 5)):
        row = {"question_id": rng.choice([Q0, Q1, Q2, f" {Q1}", f"{Q2} "]),
               "system": rng.choice(["s1", "s2", " s3 ", "old"]),
               "answer": "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 6))) or "a"}
        if rng.random() < 0.3:
            row["model"] = rng.choice(["m", "m,1", 'm"q', " m "])
        rows.append(row)
    return rows


def _random_reviews(rng) -> list[dict]:
    """1-5 review rows: pairs as named or reversed, labels as people spell them, probabilities good and bad,
    annotators and strata with spaces."""
    rows = []
    for _ in range(rng.randint(1, 5)):
        a, b = rng.choice([("s1", "s2"), ("s2", "s1"), ("s2", "s3"), ("s3", "s2"), ("s1", "s3")])
        row = rng.choice([_review(system_a=a, system_b=b, question_id=rng.choice([Q0, Q1])),
                          _review(judge="g", system_a="s1", system_b="", reference=rng.choice(["", "1", "2"])),
                          _review(judge="y", system_a="s1", system_b="")])
        labels = (["A", "b", "'B'", ' "tie" ', "Tie", "none"] if row["system_b"] else ["yes", "No", "correct", "'no'"])
        row["label"] = rng.choice(labels) if rng.random() < 0.95 else rng.choice(["maybe", "yes", "A"])
        row["annotator"] = rng.choice(["amy", " bo ", "early", "ann", "c y"])
        if rng.random() < 0.5:
            row[rng.choice(["inclusion_probability", "pi"])] = rng.choice(["0.5", "1e-3", " 0.25", "", "1", ".5"]
                                                                           + ["2", "x"] * (rng.random() < 0.1))
        if rng.random() < 0.3:
            row["stratum"] = rng.choice(["s", " t ", ""])
        rows.append(row)
    return rows


@pytest.mark.parametrize("seeds", SEEDS)
def test_random_answer_files_give_the_same_result(base, tmp_path, seeds):
    """Seeded random files of answers with quotes, commas, newlines, CR, Unicode whitespace and
    look-alike spellings: the same error or the same rows, whichever path reads them."""
    import random

    taken = 0
    for seed in seeds:
        rng = random.Random(seed)
        source = _random_file(tmp_path / f"a{seed}.{rng.choice(FMTS)}", _random_answers(rng), rng)
        _answers(base, tmp_path, source)
        ws = tmp_path / "taken.duckdb"
        shutil.copy(base, ws)
        try:
            taken += import_answers_staged(ws, source) is not None
        except InputError:
            taken += 1
    assert taken >= _at_least(seeds, 15), f"the SQL took only {taken} of {len(seeds)} files"


@pytest.mark.parametrize("seeds", SEEDS)
def test_random_answer_files_written_by_hand_give_the_same_result(base, tmp_path, seeds):
    """The random answers as CSV written by hand (``_by_hand``: a quote inside a bare cell, ``He said "x``, with
    a quoted answer over several lines elsewhere in the file): the same error or the same rows as the oracle."""
    import random

    for seed in seeds:
        rng = random.Random(9000 + seed)
        _answers(base, tmp_path, _random_file(tmp_path / f"h{seed}.csv", _random_answers(rng), rng, by_hand=True))


@pytest.mark.parametrize("seeds", SEEDS)
def test_random_review_files_give_the_same_result(base, tmp_path, seeds):
    """Seeded random files of reviews: pairs as named or reversed, labels as people spell them,
    probabilities good and bad, annotators and strata with spaces; the same error or the same rows."""
    import random

    taken = 0
    for seed in seeds:
        rng = random.Random(seed)
        source = _random_file(tmp_path / f"r{seed}.{rng.choice(FMTS)}", _random_reviews(rng), rng)
        _reviews(base, tmp_path, source)
        ws = tmp_path / "taken.duckdb"
        shutil.copy(base, ws)
        taken += import_reviews_staged(ws, source) is not None
    assert taken >= _at_least(seeds, 15), f"the SQL took only {taken} of {len(seeds)} files"


@pytest.mark.parametrize("what", ["answers", "reviews"])
@pytest.mark.parametrize("seeds", [pytest.param(range(0, 4), id="sample"),
                                   pytest.param(range(4, 80), id="rest", marks=pytest.mark.slow)])
def test_random_answer_and_review_files_in_odd_shapes_give_the_same_result(base, tmp_path, what, seeds):
    """The random files above, each given one odd whole-file shape (``_ODD_SHAPES``: most are declined to the
    table reader or refused): the same error or the same rows, whichever path reads them."""
    make, compare = {"answers": (_random_answers, _answers), "reviews": (_random_reviews, _reviews)}[what]
    number_row = {"answers": {"question_id": Q1, "system": "s1", "answer": 7},
                  "reviews": {**_review(judge="y", system_a="s1", system_b=""), "label": 1}}[what]
    for source in _odd_files(tmp_path / what, [7000 + seed for seed in seeds], make, number_row):
        compare(base, tmp_path, source)


def _cases(both: dict, jsonl: dict, fast: tuple[str, ...]) -> list:
    """(format, case) params; only the ``fast`` cases in the fast lane, the others marked slow."""
    cases = [(fmt, n) for fmt in FMTS for n in both] + [("jsonl", n) for n in jsonl]
    return [pytest.param(c, id=f"{c[1]}-{c[0]}", marks=() if c[1] in fast else pytest.mark.slow) for c in cases]


# Review files the staged SQL declines (an annotator in another script first), with the row checks'
# problems in both orders: the restaged file names the first row's first problem, as the row importer does.
DECLINED_REVIEWS = {
    "a bidi annotator, then no verdict": [_review(annotator="a\u202eb"), _review(judge="nobody")],
    "no verdict, then a label": [_review(judge="nobody"), _review(label="maybe")],
    "a label before the probability": [_review(label="maybe", pi="x")],
    "a probability before the annotator": [_review(pi="2", annotator="")],
    "probabilities": [_review(annotator=f"p{i}", pi=pi) for i, pi in enumerate(["0.5", "1e-3", "0_5", "١"])],
}
DECLINED_REVIEWS_JSONL = {
    "a list stratum before the annotator": [_review(stratum=["a"], annotator="")],
    "a probability before a table stratum": [_review(pi="x", stratum={"a": 1})],
    "numbers as text": [_review(pi=0.5, stratum=3, label=1, annotator=7.0)],
    "a label list": [_review(label=["A"])], "a label true": [_review(judge="y", system_b="", label=True)],
}


@pytest.mark.parametrize("name", _cases(DECLINED_REVIEWS, DECLINED_REVIEWS_JSONL,
                                        ("a bidi annotator, then no verdict", "numbers as text")))
def test_a_declined_review_file_gives_the_first_problem_of_the_row_importer(base, tmp_path, name):
    fmt, case = name
    rows = [_review(annotator="Zoë")] + {**DECLINED_REVIEWS, **DECLINED_REVIEWS_JSONL}[case]
    source = _write(tmp_path / f"r.{fmt}", rows, fmt)
    _reviews(base, tmp_path, source, staged=False)
