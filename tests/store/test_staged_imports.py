"""Issue 35: ``lsqa import-judgments`` in SQL (``lsqa.store.importers.verdicts``) against the row importer
(``tests/import_oracle.import_judgments_rows``, the importer as it was) as the oracle.

Inputs are made by category — each check of the row importer, each way a file can be unusual — in
CSV and in JSONL. For every one both importers run on copies of one workspace: the same InputError
(message, line and hint) and the workspace untouched, or the same rows written and the same summary.
The cases the SQL must take itself (good files, and the checks over the whole file it words: a key
repeated with another label, an unknown question, a declared rater, a conflict with the workspace)
are also run through ``import_judgments_staged`` alone, so a silent fall back to rows cannot pass.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lsqa import store
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.errors import InputError
from lsqa.study.imports import import_judgments, import_judgments_staged
from tests.conftest import TEST_DATA
from tests.store.test_staged_answers_reviews import SEEDS, _at_least, _cases, _same_json
from tests.support.bad_input import snapshot
from tests.support.import_oracle import import_judgments_rows

TOM = "2c5f448df18172babaac38806e1fb699a8baf65b"
Q0, Q1 = f"nqa:{TOM}:0", f"nqa:{TOM}:1"
COLUMNS = ["question_id", "rater", "kind", "system_a", "system_b", "shown_order", "reference", "label"]


def _v(**changes) -> dict:
    return {"question_id": Q1, "rater": "r2", "kind": "pairwise", "system_a": "s1", "system_b": "s2",
            "shown_order": "ab", "reference": "", "label": "A", **changes}


GOOD = [_v(), _v(system_a="s2", system_b="s3", label="b"), _v(question_id=Q0, shown_order="ba", label="tie"),
        _v(rater="r3", kind="absolute", system_b="", label="yes"),
        _v(rater="r4", kind="groundtruth", system_b="", reference="1", label="no")]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    path = tmp_path_factory.mktemp("staged") / "ws.duckdb"
    ingest_narrativeqa(path, TEST_DATA / "narrativeqa_slice")
    import_judgments_rows(path, _write(path.parent / "first.jsonl", [_v(question_id=Q0, rater="r", label="A")],
                                       "jsonl"))
    with store.write(path) as con:  # a judge a run config declared (migration 0004)
        con.execute("""INSERT INTO judges (name, definition) VALUES ('declared', '{"kind": "absolute"}')""")
    return path


def _write(path: Path, rows: list[dict], fmt: str, *, header: list[str] | None = None) -> Path:
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        header = header or list(dict.fromkeys(k for r in rows for k in r))
        lines = [",".join(header)] + [",".join(str(r.get(c, "")) for c in header) for r in rows]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(importer, workspace: Path, source: Path):
    before = snapshot(workspace)
    try:
        summary = importer(workspace, source)
    except InputError as exc:
        assert snapshot(workspace) == before, "a refused import changed the workspace"
        return ("refused", str(exc), exc.line, exc.hint)
    with store.connect(workspace) as con:
        rows = _same_json(con.execute("SELECT * EXCLUDE (created_at) FROM judgments ORDER BY id"))
        dirty = con.execute("SELECT count(*) FROM queue_dirty").fetchone()[0]
    assert dirty == 0, "the audit queue's marks were not caught up"
    return ("imported", summary.to_dict(), rows)


def _compare(base: Path, tmp_path: Path, source: Path, *, staged: bool | None = None):
    """Both importers on copies of ``base``; ``staged``: whether the SQL must take the file itself."""
    results = []
    for name, importer in (("sql", import_judgments), ("rows", import_judgments_rows)):
        ws = tmp_path / f"{name}.duckdb"
        shutil.copy(base, ws)
        results.append(_run(importer, ws, source))
    assert results[0] == results[1]
    if staged is not None:
        ws = tmp_path / "staged-only.duckdb"
        shutil.copy(base, ws)
        try:
            taken = import_judgments_staged(ws, source) is not None
        except InputError:
            taken = True
        assert taken == staged, f"the SQL path {'declined' if staged else 'took'} {source.name}"
    return results[0]


FMTS = ["csv", "jsonl"]


@pytest.mark.parametrize("fmt", FMTS)
def test_a_good_file_gives_the_same_rows(base, tmp_path, fmt):
    extra = [{**r, "model": f"m{i}", "note": "a\\b"} for i, r in enumerate(GOOD)]
    source = _write(tmp_path / f"v.{fmt}", GOOD if fmt == "jsonl" else extra, fmt)
    result = _compare(base, tmp_path, source, staged=True)
    assert result[0] == "imported" and result[1]["added"] == {"judgments": len(GOOD)}


@pytest.mark.parametrize("fmt", FMTS)
def test_the_same_file_twice_adds_nothing(base, tmp_path, fmt):
    source = _write(tmp_path / f"v.{fmt}", GOOD, fmt)
    ws = tmp_path / "ws.duckdb"
    shutil.copy(base, ws)
    import_judgments(ws, source)
    again = _compare(ws, tmp_path, source, staged=True)
    assert again[1]["added"] == {"judgments": 0} and again[1]["skipped"] == {"judgments": len(GOOD)}


@pytest.mark.parametrize("fmt", FMTS)
def test_aliases_and_spellings_give_the_same_rows(base, tmp_path, fmt):
    rows = [{"item_id": Q1, "judge": "r5", "kind": "Pairwise", "system_a": " s1 ", "system_b": "s2",
             "shown_order": "BA", "label": "a is better"},
            {"item_id": Q1, "judge": "r5", "kind": "pairwise", "system_a": "s1", "system_b": "s3",
             "label": "'Equal'"},
            {"item_id": Q0, "judge": "r5", "kind": "absolute", "system_a": "s1", "label": "Correct",
             "evidence": "it says so"},
            # an exact repeat of the first row (another spelling of the same label): kept once
            {"item_id": Q1, "judge": "r5", "kind": "pairwise", "system_a": "s1", "system_b": "s2",
             "shown_order": "ba", "label": "A"}]
    source = _write(tmp_path / f"v.{fmt}", rows, fmt)
    result = _compare(base, tmp_path, source, staged=True)
    assert result[1]["skipped"] == {"judgments": 1}


# Each: (a name, the rows; the bad one last) — one per check of the row importer.
BAD_ROWS = {
    "empty question_id": [_v(question_id="")], "empty rater": [_v(rater="")], "empty label": [_v(label="")],
    "blank label": [_v(label="   ")], "blank system_b": [_v(system_b="   ")],
    "rater over the name limit": [_v(rater="r" * 201)], "system over the name limit": [_v(system_b="s" * 201)],
    "unknown kind": [_v(kind="vibes")], "reference-check kind": [_v(kind="reference-check", system_b="")],
    "similarity score": [_v(kind="similarity", system_b="", label="0.7")],
    "similarity out of range": [_v(kind="similarity", system_b="", label="5")],
    "label of the other family": [_v(label="yes")], "binary label A": [_v(kind="absolute", system_b="", label="A")],
    "pairwise without system_b": [_v(system_b="")], "same systems": [_v(system_b="s1")],
    "binary with system_b": [_v(kind="absolute")], "shown_order xy": [_v(shown_order="xy")],
    "blank shown_order": [_v(shown_order="  ")], "reference 3": [_v(reference="3")],
    "non-ASCII rater": [_v(rater="gрt")], "tab in a name": [_v(rater="a\tb")],
    "bidi control": [_v(system_a="s\u202e1")], "evidence with a quote": [_v(evidence='say "x"')],
    "repeat with another label": [_v(), _v(label="B")],
    "repeat, three rows": [_v(), _v(rater="r9"), _v(label="tie")],
    "unknown question": [_v(), _v(question_id="nqa:nope:0")],
    "declared rater of another kind": [_v(), _v(rater="declared")],
    "stored with another label": [_v(), _v(question_id=Q0, rater="r", label="B")],
}
# Good rows the SQL leaves to the row importer (a similarity score is thresholded there; a name in
# another script needs the Unicode rules; a quote in a value, JSON's or the csv module's).
ROW_PATH_GOOD = {"similarity score", "non-ASCII rater", "evidence with a quote"}
# The checks the SQL words itself (the others it declines, and the rows importer words them).
SQL_WORDED = {"repeat with another label", "repeat, three rows", "unknown question",
              "declared rater of another kind", "stored with another label"}


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("name", list(BAD_ROWS))
@pytest.mark.sampled(10)
def test_a_bad_row_gives_the_same_error(base, tmp_path, fmt, name):
    rows = [_v(rater="r7", system_a="s5", system_b="s6")] + BAD_ROWS[name]
    source = _write(tmp_path / f"v.{fmt}", rows, fmt)
    result = _compare(base, tmp_path, source, staged=True if name in SQL_WORDED else None)
    accepted = name in ROW_PATH_GOOD or (fmt == "csv" and name == "blank shown_order")  # CSV cells are stripped
    assert result[0] == ("imported" if accepted else "refused"), result


def _file(text: str) -> callable:
    return lambda path: path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)


_H = ",".join(COLUMNS)
_ROW = f"{Q1},r2,pairwise,s1,s2,ab,,A"
BAD_CSV = {
    "too many fields": f"{_H}\n{_ROW}\n{_ROW},x\n", "too few fields": f"{_H}\n{_ROW}\n{Q1},r2\n",
    "blank lines": f"\n{_H}\n\n{_ROW}\n,,,,,,,\n   \n", "duplicate column": f"{_H},label\n{_ROW},B\n",
    "header only": f"{_H}\n", "missing column": "question_id,rater,kind\nq,r,pairwise\n",
    "quoted value": f'{_H}\n{Q1},r2,pairwise,"s1",s2,ab,,A\n', "unterminated quote": f'{_H}\n{Q1},"r2\n',
    "CRLF": f"{_H}\r\n{_ROW}\r\n", "BOM": f"\ufeff{_H}\n{_ROW}\n", "upper-case header": f"{_H.upper()}\n{_ROW}\n",
    "NUL byte": f"{_H}\n{_ROW}\x00\n", "latin-1": f"{_H}\n{Q1},r\xe9,pairwise,s1,s2,ab,,A\n".encode("latin-1"),
    "cell over the limit": f"{_H}\n{Q1},r2,pairwise,s1,s2,ab,,{'A' * 100_001}\n",
    "column imported_from": f"{_H},imported_from\n{_ROW},elsewhere\n", "empty": "", "blank": "  \n\n",
    "spaces in the header": f" {_H.replace(',', ' , ')}\n{_ROW}\n",
    # Old Mac line ends: a lone CR ends each line (Python's csv module reads them so).
    "CR line ends": f"{_H}\r{_ROW}\r\r{Q0},r2,pairwise,s1,s2,ab,,B\r",
    "CR line ends, a quoted CR": f'{_H}\r{Q1},r2,pairwise,s1,s2,ab,"a\rb",A\r',
    "CR line ends, an unterminated quote": f'{_H}\r{_ROW}\r{Q1},"r2\r',
    "a lone CR between two LF lines": f"{_H}\n{_ROW}\r{Q0},r2,pairwise,s1,s2,ab,,B\n",
    "a lone CR and an LF in one quote": f'{_H}\n{Q1},r2,pairwise,s1,s2,ab,"a\rb\nc",A\n',
}
BAD_JSONL = {
    "not JSON": f'{json.dumps(_v())}\n{{"question_id": \n', "array": f'{json.dumps(_v())}\n[1, 2]\n',
    "duplicate key": f'{json.dumps(_v())[:-1]}, "label": "B"}}\n',
    "keys differing by case": f'{json.dumps(_v())[:-1]}, "LABEL": "B"}}\n',
    "a number": json.dumps(_v(reference=1)) + "\n", "null": json.dumps(_v(system_b=None, kind="absolute")) + "\n",
    "nested": json.dumps(_v(evidence=[["x"]])) + "\n", "escapes": json.dumps(_v(rater="r\\u00e9")) + "\n",
    "NaN": json.dumps(_v()).replace('"A"', "NaN") + "\n", "unknown column": json.dumps(_v(model="m")) + "\n",
    "blank lines": f"\n{json.dumps(_v())}\n   \n\n{json.dumps(_v(system_b='s3'))}\n",
    "trailing comma": json.dumps(_v())[:-1] + ", }\n", "trailing text": json.dumps(_v()) + " x\n",
    "line separator": json.dumps(_v(rater="a\u2028b"), ensure_ascii=False) + "\n",
    "CRLF": json.dumps(_v()) + "\r\n" + json.dumps(_v(system_b="s3")) + "\r\n",
    "missing column": json.dumps({k: v for k, v in _v().items() if k != "label"}) + "\n",
    # An empty object is a row without values, refused, whichever path reads the file (the second one declines).
    "an empty object": json.dumps(_v()) + "\n{}\n",
    "an empty object in a declined file": json.dumps(_v(rater="r\u00e9"), ensure_ascii=False) + "\n{}\n",
}


@pytest.mark.parametrize("name", list(BAD_CSV))
@pytest.mark.sampled(5)
def test_an_unusual_csv_gives_the_same_result(base, tmp_path, name):
    source = tmp_path / "v.csv"
    _file(BAD_CSV[name])(source)
    _compare(base, tmp_path, source)


@pytest.mark.parametrize("name", list(BAD_JSONL))
@pytest.mark.sampled(5)
def test_an_unusual_jsonl_gives_the_same_result(base, tmp_path, name):
    source = tmp_path / "v.jsonl"
    _file(BAD_JSONL[name])(source)
    _compare(base, tmp_path, source)


def test_blank_lines_keep_the_line_numbers(base, tmp_path):
    """The SQL numbers lines as the row importer does: a blank line or a line of empty cells counts."""
    rows = [_v(), _v(label="B")]
    csv_text = f"{_H}\n\n,,,,,,,\n" + "\n".join(",".join(r[c] for c in COLUMNS) for r in rows) + "\n"
    source = tmp_path / "v.csv"
    source.write_text(csv_text)
    result = _compare(base, tmp_path, source, staged=True)
    assert result[2] == 5 and "repeats line 4" in result[1]
    source = tmp_path / "v.jsonl"
    source.write_text("\n  \n" + "".join(json.dumps(r) + "\n\n" for r in rows))
    result = _compare(base, tmp_path, source, staged=True)
    assert result[2] == 5 and "repeats line 3" in result[1]


@pytest.mark.parametrize("fmt", FMTS)
def test_crlf_files_are_read_in_sql_with_the_same_rows_and_line_numbers(base, tmp_path, fmt):
    """Lines ending CR LF (Windows, Excel) take the SQL path; a repeat is named at the row importer's line,
    with the endings mixed and blank lines between."""
    lf = _write(tmp_path / f"lf.{fmt}", GOOD, fmt).read_text()
    source = tmp_path / f"v.{fmt}"
    source.write_bytes(lf.replace("\n", "\r\n").encode())
    result = _compare(base, tmp_path, source, staged=True)
    assert result[0] == "imported" and result[1]["added"] == {"judgments": len(GOOD)}
    lines = lf.splitlines()
    first = lines[1] if fmt == "csv" else lines[0]
    repeat = first[:-1] + "B" if fmt == "csv" else first.replace('"label": "A"', '"label": "B"')
    assert repeat != first
    mixed = "\r\n".join(lines[:2]) + "\n\r\n" + "\n".join(lines[2:]) + "\r\n" + repeat + "\r\n"
    source.write_bytes(mixed.encode())
    result = _compare(base, tmp_path, source, staged=True)
    assert result[0] == "refused" and "repeats line" in result[1], result


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("where", ["inside a line", "a line end alone", "before the CR LF"])
def test_a_cr_that_does_not_end_a_crlf_gives_the_same_result(base, tmp_path, fmt, where):
    """Python ends a line at a lone CR; the SQL path declines such a file, so the result is the row importer's."""
    lines = _write(tmp_path / f"lf.{fmt}", GOOD, fmt).read_text().splitlines()
    text = {"inside a line": "\r\n".join(lines[:2] + [lines[2].replace("s2", "s\r2", 1)] + lines[3:]) + "\r\n",
            "a line end alone": "\r".join(lines) + "\r",
            "before the CR LF": "\r\n".join(lines[:2]) + "\r\r\n" + "\r\n".join(lines[2:]) + "\r\n"}[where]
    source = tmp_path / f"v.{fmt}"
    source.write_bytes(text.encode())
    _compare(base, tmp_path, source, staged=False)


@pytest.mark.parametrize("fmt", FMTS)
@pytest.mark.parametrize("line_break", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_quoted_csv_and_json_escapes_are_read_in_sql(base, tmp_path, fmt, line_break):
    """One reader for the three imports (lsqa.store.importers.rows): quoted CSV fields (commas, doubled quotes,
    a line break inside an extra column's value, kept as the file has it) and JSON escapes take the SQL path
    with the row importer's rows."""
    rows = [{**_v(), "evidence": 'he said "no", then left', "note": f"line one{line_break}line two"},
            {**_v(system_a="s2", system_b="s3", label="b"), "evidence": "a, b and c", "note": "tab\there"},
            {**_v(question_id=Q0, shown_order="ba", label="tie"), "evidence": "", "note": ""}]
    source = tmp_path / f"v.{fmt}"
    if fmt == "jsonl":
        rows = [{**r, "note": r["note"].replace("\r", "").replace("\n", " ").replace("\t", " ")} for r in rows]  # text only
        source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        import csv

        with open(source, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        assert '"' in source.read_text()
    # A newline or tab inside an extra value: json.dumps escapes it, so the SQL declines (same rows either way).
    result = _compare(base, tmp_path, source, staged=fmt == "jsonl")
    assert result[0] == "imported" and result[1]["added"] == {"judgments": 3}
    if fmt == "csv":
        plain = [{**r, "note": r["note"].replace("\r", "").replace("\n", " ").replace("\t", " ")} for r in rows]
        with open(source, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(plain[0]))
            writer.writeheader()
            writer.writerows(plain)
        result = _compare(base, tmp_path, source, staged=True)
        assert result[0] == "imported" and result[1]["added"] == {"judgments": 3}


def _random_verdicts(rng) -> list[dict]:
    """1-6 verdict rows: labels as people spell them, names with spaces, evidence and extra columns with
    commas, quotes, tabs, line breaks and non-ASCII; now and then a bad label."""
    from tests.store.test_staged_answers_reviews import _PIECES

    rows = []
    for _ in range(rng.randint(1, 6)):
        pair = rng.random() < 0.7
        row = _v(question_id=rng.choice([Q0, Q1, f" {Q1}"]), rater=rng.choice(["r2", " r5 ", "r6"]),
                 kind="pairwise" if pair else rng.choice(["absolute", "groundtruth"]),
                 system_a=rng.choice(["s1", "s2", " s3"]), system_b=rng.choice(["s2", "s3", "s4"]) if pair else "",
                 shown_order=rng.choice(["ab", "ba", "", " BA"]) if pair else "",
                 reference=rng.choice(["", "1", "2"]) if not pair else "",
                 label=rng.choice(["A", "b", "'B'", ' "tie" ', "none", "2"] if pair else ["yes", "No", "'no'"]))
        if rng.random() < 0.05:
            row["label"] = "maybe"
        if rng.random() < 0.4:
            row["evidence"] = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 5)))
        if rng.random() < 0.3:
            row["model"] = rng.choice(["m", "m,1", 'm"q', " m ", "mé"])
        rows.append(row)
    return rows


@pytest.mark.parametrize("seeds", SEEDS)
def test_random_verdict_files_give_the_same_result(base, tmp_path, seeds):
    """Seeded random files of verdicts through the shared reader (lsqa.store.importers.rows): quoted or bare CSV,
    LF or CR LF, stray blank lines, JSONL escaped or raw; labels as people spell them, names with spaces,
    evidence and extra columns with commas, quotes, tabs and non-ASCII; some rows bad. The same error or the
    same rows, whichever path reads them, and the SQL takes a good share."""
    import random

    from tests.store.test_staged_answers_reviews import _random_file

    taken = 0
    for seed in seeds:
        rng = random.Random(1000 + seed)
        source = _random_file(tmp_path / f"v{seed}.{rng.choice(FMTS)}", _random_verdicts(rng), rng)
        _compare(base, tmp_path, source)
        ws = tmp_path / "taken.duckdb"
        shutil.copy(base, ws)
        try:
            taken += import_judgments_staged(ws, source) is not None
        except InputError:
            taken += 1
    assert taken >= _at_least(seeds, 10), f"the SQL took only {taken} of {len(seeds)} files"


@pytest.mark.parametrize("seeds", [pytest.param(range(0, 6), id="sample"),
                                   pytest.param(range(6, 120), id="rest", marks=pytest.mark.slow)])
def test_random_verdict_files_in_odd_shapes_give_the_same_result(base, tmp_path, seeds):
    """The random verdict files above, each given one odd whole-file shape (a BOM, lone CR ends, CR LF on some
    lines, no last line end, blank or Unicode-space lines after, cut anywhere; in JSONL an empty object, a
    list, a comment or a number as a label on a line of its own): most are declined to the table reader or
    refused; the same error or the same rows, whichever path reads them."""
    from tests.store.test_staged_answers_reviews import _odd_files

    number_label = {**_v(kind="absolute", system_b="", shown_order=""), "label": 1}
    for source in _odd_files(tmp_path / "verdicts", [5000 + seed for seed in seeds], _random_verdicts, number_label):
        _compare(base, tmp_path, source)


def test_empty_quoted_fields_as_duckdb_writes_them_are_read_in_sql(base, tmp_path):
    """DuckDB's COPY writes an empty string as "" (R and others too): such a file takes the one-statement
    path with the row importer's rows; a value of one quote beside them goes the quoted way, same rows."""
    import duckdb

    for n, note in enumerate(["", '"']):
        source = tmp_path / f"v{n}.csv"
        with duckdb.connect() as con:
            con.execute("CREATE TABLE v (question_id VARCHAR, rater VARCHAR, kind VARCHAR, system_a VARCHAR,"
                        " system_b VARCHAR, shown_order VARCHAR, reference VARCHAR, label VARCHAR, note VARCHAR)")
            con.executemany("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [[Q1, "r2", "pairwise", "s1", "s2", "", "", "A", note],
                             [Q1, "r3", "absolute", "s1", "", "", "", "yes", ""],
                             [Q0, "r4", "groundtruth", "s2", "", "", "1", "no", "say, no" if n else "say no"]])
            con.execute(f"COPY v TO '{source}' (HEADER)")
        text = source.read_text()
        assert ',"",' in text and (text.replace('""', "").count('"') > 0) == bool(n), text
        result = _compare(base, tmp_path, source, staged=True)
        assert result[0] == "imported" and result[1]["added"] == {"judgments": 3}


# Files the staged SQL declines (a rater in another script first), with the row checks' problems in
# both orders: the restaged file names the first row's first problem, as the row importer does.
DECLINED = {
    "a kind, then an empty rater": [_v(kind="vibes"), _v(rater="")],
    "an empty rater, then a kind": [_v(rater=""), _v(kind="vibes")],
    "an unknown kind before a bad system_b": [_v(kind="vibes", system_b="a\tb")],
    "a bad system_b before a binary's system_b": [_v(kind="absolute", system_b="a\tb")],
    "a label before the shown order": [_v(label="yes", shown_order="xy")],
    "the shown order before the reference": [_v(shown_order="xy", reference="3")],
    "a reference kind before an empty label": [_v(kind="reference-check", system_b="", label="")],
    "similarity scores": [_v(kind="similarity", system_b="", rater=f"sim{i}", label=label)
                          for i, label in enumerate(["0.7", "-0.2", "'0.39'", "1E-2", "yes", "0.4", "1"])],
    "a similarity out of range": [_v(kind="similarity", system_b="", label="0.5"),
                                  _v(kind="similarity", system_b="", rater="s2", label="1.5")],
    "a similarity Python reads": [_v(kind="similarity", system_b="", label="0_5")],
    "evidence": [_v(evidence="ça"), _v(rater="r8", evidence='"quoted", and \\ more')],
}
DECLINED_JSONL = {
    "an evidence list": [_v(evidence=["a", "b é", ""])], "an evidence number": [_v(evidence=5)],
    "an evidence of lists": [_v(evidence=["a", ["b"]])], "a label number": [_v(label=1)],
    "a similarity number": [_v(kind="similarity", system_b="", label=0.25)],
    "a shown order number": [_v(shown_order=1.0)], "a reference number": [_v(reference=2.0)],
}


@pytest.mark.parametrize("name", _cases(DECLINED, DECLINED_JSONL, ("a kind, then an empty rater", "similarity scores",
                                                                     "an evidence list")))
def test_a_declined_file_gives_the_first_problem_of_the_row_importer(base, tmp_path, name):
    fmt, case = name
    rows = [_v(rater="gрt", system_a="s5", system_b="s6")] + {**DECLINED, **DECLINED_JSONL}[case]
    source = _write(tmp_path / f"v.{fmt}", rows, fmt)
    _compare(base, tmp_path, source, staged=False)
