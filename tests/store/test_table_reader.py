"""lsqa's table reader (``lsqa.store.importers.table``: the file in DuckDB, the first bad line found by SQL)
against the row reader it replaced (tests/support/row_tables.py, the oracle): the same rows, lines and columns of a
good file, and the same one-line error — file, line, problem, what to do — for a bad one.

Bad inputs by category (encoding, truncated line, wrong types, missing column, empty file, duplicate keys
and ids, huge cell, BOM, CRLF, NUL bytes, ragged CSV rows, JSON that is not an object), then files of many
good lines with bad ones mixed in at random places (seeded), where the first bad line must be the one named,
then CSV, TSV and JSONL files of random shapes (seeded): line ends of every kind, quotes, line breaks inside
values, files that end inside a quote, values of every JSON type, keys spelled two ways, a BOM.
"""

from __future__ import annotations

import json
import random

import pytest

from lsqa.errors import InputError
from lsqa.store.importers import table
from lsqa.store.importers.wording import MAX_CELL_CHARS, MAX_NESTING
from tests.support import row_tables

GOOD_CSV = "question_id,system,answer\nq1,s1,a kitten\nq2,s1,\"in, the garden\"\n"
GOOD_JSONL = '{"question_id": "q1", "system": "s1", "answer": "a kitten", "n": 3}\n' \
             '{"question_id": "q2", "system": "s1", "answer": "x", "tags": ["a", 1]}\n'
REQUIRED = ("question_id", "system", "answer")

CASES = {
    # encoding
    "latin-1 byte (csv)": ("a.csv", b"question_id,system,answer\nq1,s1,caf\xe9\n"),
    "latin-1 byte (jsonl)": ("a.jsonl", b'{"question_id": "q1", "system": "s1", "answer": "caf\xe9"}\n'),
    "lone surrogate escape": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": "\\ud800"}\n'),
    # truncated line
    "jsonl cut mid-object": ("a.jsonl", GOOD_JSONL + '{"question_id": "q3", "sys'),
    "csv quote never closed": ("a.csv", GOOD_CSV + 'q3,s1,"Tom\nq4,s1,b\n'),
    "csv quote never closed, blank lines after": ("a.csv", GOOD_CSV + 'q3,s1,"Tom\n\n\n'),
    "csv quote never closed, a blank CRLF line after": ("a.csv", GOOD_CSV + 'q3,s1,"Tom\n\r\n'),
    "csv text after a closing quote": ("a.csv", GOOD_CSV + 'q3,s1,"Tom" Kitten\n'),
    "trailing comma": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": "x",}\n'),
    # wrong types
    "answer an object": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": {"t": 1}}\n'),
    "answer a list": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": ["x"]}\n'),
    "answer true": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": true}\n'),
    "answer null": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": null}\n'),
    "answer NaN": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": NaN}\n'),
    "answer -Infinity": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": -Infinity}\n'),
    "answer 1e400": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": 1e400}\n'),
    "answer blank": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": "  "}\n'),
    "csv answer blank": ("a.csv", "question_id,system,answer\nq1,s1,   \n"),
    # missing column
    "csv header without answer": ("a.csv", "question_id,system\nq1,s1\n"),
    "keys to clean, listed in the file's order": ("a.jsonl", '{"b": 1, " Answer": "x", "Question_ID": "q", "a": 2}\n'),
    "jsonl row without answer": ("a.jsonl", GOOD_JSONL + '{"question_id": "q3", "system": "s1"}\n'),
    # empty file
    "no bytes": ("a.csv", b""),
    "blank lines only": ("a.jsonl", "\n  \n\t\n"),
    "Unicode whitespace only": ("a.jsonl", "  \u2028\u3000\n"),  # not empty to bytes.strip: no data rows
    "a BOM only": ("a.csv", "\ufeff"),
    "a BOM and blank lines": ("a.csv", "\ufeff\n  \n"),
    "empty objects": ("a.jsonl", "{}\n{}\r\n"),
    "an empty object among rows": ("a.jsonl", GOOD_JSONL + "{}\n"),
    "header only": ("a.csv", "question_id,system,answer\n\n"),
    # duplicate keys, columns, ids
    "key twice": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": "x", "answer": "y"}\n'),
    "key twice, nested": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": "x", "m": {"k": 1, "k": 2}}\n'),
    "one column spelled twice": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": "x", " Answer": "y"}\n'),
    "csv column twice": ("a.csv", "question_id,system,answer,SYSTEM\nq1,s1,x,s2\n"),
    # huge cell
    "huge jsonl value": ("a.jsonl", json.dumps({"question_id": "q1", "system": "s1", "answer": "x" * (MAX_CELL_CHARS + 1)}) + "\n"),
    "huge value in a list": ("a.jsonl", json.dumps({"question_id": "q1", "system": "s1", "answer": "x",
                                                    "e": ["y", "z" * (MAX_CELL_CHARS + 5)]}) + "\n"),
    "huge csv cell": ("a.csv", "question_id,system,answer\nq1,s1," + "x" * (MAX_CELL_CHARS + 1) + "\n"),
    "nested too deep": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": "x", "d": '
                        + "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1) + "}\n"),
    # BOM, CRLF (good files)
    "BOM csv": ("a.csv", "\ufeff" + GOOD_CSV),
    "BOM jsonl": ("a.jsonl", "\ufeff" + GOOD_JSONL),
    "CRLF csv": ("a.csv", GOOD_CSV.replace("\n", "\r\n")),
    "CRLF jsonl": ("a.jsonl", GOOD_JSONL.replace("\n", "\r\n")),
    "quoted newline csv": ("a.csv", 'question_id,system,answer\nq1,s1,"two\nlines"\nq2,s1,b\n'),
    # A quoted value keeps the line breaks it spans as they are in the file (Python's csv, newline='')
    "quoted CRLF csv": ("a.csv", 'question_id,system,answer\r\nq1,s1,"two\r\nlines"\r\nq2,s1,b\r\n'),
    "quoted CRLF then LF csv": ("a.csv", 'question_id,system,answer\nq1,s1,"one\r\ntwo\nthree"\r\nq2,s1,b\n'),
    "quoted CRLF and a lone CR csv": ("a.csv", 'question_id,system,answer\r\nq1,s1,"a\rb\r\nc"\r\nq2,s1,b\r'),
    "quoted CRLF tsv": ("a.tsv", 'question_id\tsystem\tanswer\r\nq1\ts1\t"two\r\nlines"\r\n'),
    "quoted CRLF never closed": ("a.csv", 'question_id,system,answer\r\nq1,s1,"two\r\nlines\r\n'),
    "quote inside a bare cell": ("a.csv", 'question_id,system,answer\nq1,s1,say "hi"\n'),
    "tsv": ("a.tsv", "question_id\tsystem\tanswer\nq1\ts1\tx y\n"),
    "json array": ("a.json", json.dumps([{"question_id": "q1", "system": "s1", "answer": "x", "Extra": 1.5}])),
    "upper-case keys": ("a.jsonl", '{"Question_ID ": "q1", "system": "s1", "answer": " x "}\n'),
    # NUL bytes
    "raw NUL": ("a.csv", b"question_id,system,answer\nq1,s1,a\x00b\n"),
    "escaped NUL": ("a.jsonl", '{"question_id": "q1", "system": "s1", "answer": "a\\u0000b"}\n'),
    "NUL in two columns: the first key is named": ("a.jsonl", '{"zeta": "\\u0000", "question_id": "q1", "system": "s1", '
                                                 '"answer": "a", "alpha": ["\\u0000"]}\n'),
    # ragged CSV rows
    "one field too many": ("a.csv", GOOD_CSV + "q3,s1,a,b\n"),
    "one field too few": ("a.csv", GOOD_CSV + "q3,s1\n"),
    # JSON that is not an object
    "a list per line": ("a.jsonl", GOOD_JSONL + '["q3", "s1", "x"]\n'),
    "a string per line": ("a.jsonl", '"q1"\n'),
    "a number per line": ("a.jsonl", GOOD_JSONL + "17\n"),
    "array element not an object": ("a.json", json.dumps([{"question_id": "q1", "system": "s1", "answer": "x"}, 3])),
    "json file not an array": ("a.json", '[{"question_id": "q1"'),
}


def _outcome(read, path, **kw):
    try:
        t = read(path, **kw)
    except InputError as exc:
        return "error", str(exc)
    return "rows", (t.columns, t.rows, t.lines, t.header_line)


def _write(path, content):
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.sampled(10)
def test_the_sql_reader_reads_and_words_as_the_row_reader(tmp_path, case):
    name, content = CASES[case]
    path = tmp_path / name
    _write(path, content)
    sql = _outcome(table.read_table, path, required=REQUIRED)
    rows = _outcome(row_tables.read_table, path, required=REQUIRED)
    assert sql == rows
    if sql[0] == "error":
        assert str(path) in sql[1] and sql[1].count("\n") == 0


def test_the_statistics_tables_are_checked_in_sql(tmp_path):
    comparisons = tmp_path / "c.csv"
    for body in ["x,y,a\nx,y,B\n", "x,y,A\nx,y,maybe\n", "x,y,A\nz,z,tie\n", "x,y,A\nz,z,huh\n"]:
        _write(comparisons, "system_a,system_b,winner\n" + body)
        assert _outcome(table.load_comparisons, comparisons) == _outcome(row_tables.load_comparisons, comparisons)
    ratings = tmp_path / "r.jsonl"
    for rows in [[("1", "x"), ("2", "x")], [("1", "x"), ("2", "x"), ("1", " x ")], [(1, "y"), ("1", "y")]]:
        _write(ratings, "".join(json.dumps({"item_id": i, "rater": r, "label": "A"}) + "\n" for i, r in rows))
        assert _outcome(table.load_ratings, ratings) == _outcome(row_tables.load_ratings, ratings)


# Bad lines of many kinds, put among good ones: the first bad line of the file is named, as the row reader names it.
BAD_JSONL_LINES = ['{"question_id": "q", "system": "s"}', '[1]', '"text"', '{"question_id": "q", "system": "s", '
                   '"answer": {}}', '{broken', '{"question_id": "q", "system": "s", "answer": "x", "answer": "y"}',
                   '{"question_id": "q", "system": "s", "answer": NaN}', '{"question_id": "q", "system": "s", '
                   '"answer": "x", "SYSTEM": "t"}', '{"question_id": "q", "system": "s", "answer": "\\u0000"}',
                   '{"question_id": "q", "system": "s", "answer": ""}', '{"question_id": "q", "system": "s", "answer": 1,}']
BAD_CSV_LINES = ["q,s", "q,s,a,b", 'q,s,"open', 'q,s,"a"b', "q,s,", "q, ,a"]


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.sampled(5)
def test_the_first_bad_line_of_a_mixed_file_is_named(tmp_path, seed):
    rng = random.Random(seed)
    jsonl = tmp_path / "mixed.jsonl"
    lines = [json.dumps({"question_id": f"q{i}", "system": rng.choice(["s1", "s2"]), "answer": f"a{i}"})
             for i in range(rng.randint(1, 60))]
    for _ in range(rng.randint(0, 3)):
        lines.insert(rng.randint(0, len(lines)), rng.choice(BAD_JSONL_LINES + ["", "  "]))
    _write(jsonl, "\n".join(lines) + "\n")
    assert _outcome(table.read_table, jsonl, required=REQUIRED) == _outcome(row_tables.read_table, jsonl, required=REQUIRED)
    csv_path = tmp_path / "mixed.csv"
    rows = [f"q{i},s{rng.randint(1, 3)},\"a, {i}\"" for i in range(rng.randint(1, 60))]
    for _ in range(rng.randint(0, 3)):
        rows.insert(rng.randint(0, len(rows)), rng.choice(BAD_CSV_LINES + ["", ",,"]))
    _write(csv_path, "question_id,system,answer\n" + "\n".join(rows) + "\n")
    assert _outcome(table.read_table, csv_path, required=REQUIRED) == \
        _outcome(row_tables.read_table, csv_path, required=REQUIRED)


# What a cell of a random CSV or TSV is made of: text, the delimiters, quotes, every kind of line break Python
# knows, Unicode whitespace, a BOM, JSON's punctuation.
PIECES = ["a", "b c", ",", "\t", '"', '""', "\n", "\r\n", "\r", " ", "\u3000", "é", "x", "", "\x0b", "\u2028", "\x85",
          "\ufeff", "{", "}", ":", "1"]


def _random_table(rng: random.Random, delimiter: str, bare_quotes: bool = False) -> str:
    """A CSV or TSV of a random shape: 1-3 known columns (an extra one sometimes), 0-6 records of 1-4 cells (the
    header's number or not), each cell bare or quoted and made of ``PIECES``; LF, CR LF, CR or mixed line ends; the
    last line end missing sometimes, or the file ending inside an opened quote with line ends after it. A cell with
    a quote is quoted, unless ``bare_quotes``: then it is bare half the time (a quote further in is text to
    Python's csv, one at its start opens a quoted field, one after a closing quote is an error)."""
    ends = rng.choice(["\n", "\r\n", "\r", "mixed"])
    columns = ["question_id", "system", "answer"][: rng.randint(1, 3)] + (["extra"] if rng.random() < 0.3 else [])
    lines = [delimiter.join(columns)]
    for _ in range(rng.randint(0, 6)):
        cells = []
        for _ in range(rng.randint(1, 4)):
            value = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 4)))
            quoted = rng.random() < 0.5 or ('"' in value and not (bare_quotes and rng.random() < 0.5))
            cells.append('"' + value.replace('"', '""') + '"' if quoted else value)
        lines.append(delimiter.join(cells))
    text = "".join(line + (rng.choice(["\n", "\r\n", "\r"]) if ends == "mixed" else ends) for line in lines)
    if rng.random() < 0.15:
        text += delimiter + '"' + "".join(rng.choice(PIECES).replace('"', '""') for _ in range(rng.randint(0, 3)))
        text += "".join(rng.choice(["\n", "\r\n", "\r", ""]) for _ in range(rng.randint(0, 3)))
    elif rng.random() < 0.2:
        text = text[:-1]
    return text


def _read_as_python_reads(tmp_path, seeds: range, bare_quotes: bool = False) -> None:
    """For each seed, a ``_random_table`` (CSV or TSV), with or without a required column: the same rows, lines and
    header, or the same one-line error at the same line, as Python's csv module gives them (the row reader)."""
    for seed in seeds:
        rng = random.Random(seed)
        path = tmp_path / f"t{seed}.{rng.choice(['csv', 'csv', 'tsv'])}"
        _write(path, _random_table(rng, "," if path.suffix == ".csv" else "\t", bare_quotes=bare_quotes))
        required = rng.choice([(), ("question_id",)])
        assert _outcome(table.read_table, path, required=required) == \
            _outcome(row_tables.read_table, path, required=required), (seed, path.read_bytes())


SEED_GROUPS = pytest.mark.parametrize("seeds", [range(start, start + 25) for start in range(0, 300, 25)],
                                      ids=lambda seeds: f"{seeds.start}-{seeds.stop - 1}")


@SEED_GROUPS
@pytest.mark.sampled(12)
def test_random_csv_and_tsv_files_are_read_and_worded_as_the_row_reader(tmp_path, seeds):
    """Seeded random shapes (``_random_table``), read as Python's csv module reads them."""
    _read_as_python_reads(tmp_path, seeds)


@SEED_GROUPS
@pytest.mark.sampled(12)
def test_random_tables_with_quotes_in_bare_cells_are_read_and_worded_as_the_row_reader(tmp_path, seeds):
    """``_random_table`` with quotes left in bare cells (``5" tall``, ``say "hi"``): a quote there is text, so
    counting a line's quotes does not say where a record ends; read as Python's csv module reads them."""
    _read_as_python_reads(tmp_path, seeds, bare_quotes=True)


# What a JSON value of a random JSONL row is made of, and the keys it may have (spelled as people spell them).
JSON_TEXTS = ["a", "b c", '"', "\\", "\n", "\r", "\t", "\u2028", "\x85", "é", "🔥", "\x00", " ", "\u3000", "{", "}",
              "1e3"]
JSON_KEYS = ["question_id", "Question_ID ", "system", " SYSTEM", "answer", "extra", "n", "é"]


def _random_value(rng: random.Random, depth: int = 0):
    r = rng.random()
    if r < 0.55:
        return "".join(rng.choice(JSON_TEXTS) for _ in range(rng.randint(0, 3)))
    if r < 0.65:
        return rng.choice([0, 17, -1, 1.5, 1e400, 10**12, 3.0])
    if r < 0.72:
        return rng.choice([True, False, None])
    if r < 0.8 and depth < 2:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 2))]
    if r < 0.86 and depth < 2:
        return {rng.choice(JSON_KEYS): _random_value(rng, depth + 1)}
    return "x"


def _random_jsonl(rng: random.Random) -> str:
    """1-5 lines, each an object of 0-4 keys (two spellings of one column, values of every JSON type, NUL and line
    breaks escaped, non-ASCII raw or escaped), some made bad: cut short, a doubled comma, inside a list, a key of
    another type first, a comment, blank; any line end Python's splitlines knows, or none; a BOM sometimes."""
    lines = []
    for _ in range(rng.randint(1, 5)):
        obj = {rng.choice(JSON_KEYS): _random_value(rng) for _ in range(rng.randint(0, 4))}
        text = json.dumps(obj, ensure_ascii=rng.random() < 0.5)
        text = rng.choices([text, text[:-1], text.replace(",", ",,", 1), f"[{text}]", text.replace('{"', '{"a": 1, "', 1),
                            text + " // c", "  "], weights=[84, 5, 3, 2, 2, 2, 2])[0]
        lines.append(text + rng.choice(["\n", "\r\n", "\r", "\n\n", "\u2028", ""]))
    return ("\ufeff" if rng.random() < 0.1 else "") + "".join(lines)


@pytest.mark.parametrize("seeds", [range(start, start + 25) for start in range(0, 200, 25)],
                         ids=lambda seeds: f"{seeds.start}-{seeds.stop - 1}")
@pytest.mark.sampled(8)
def test_random_jsonl_files_are_read_and_worded_as_the_row_reader(tmp_path, seeds):
    """Seeded random JSONL files (``_random_jsonl``): the same rows and lines, or the same one-line error at the
    same line, as Python's json module gives them (the row reader)."""
    for seed in seeds:
        rng = random.Random(seed)
        path = tmp_path / f"t{seed}.jsonl"
        _write(path, _random_jsonl(rng))
        required = rng.choice([(), ("question_id",), ("question_id", "system")])
        assert _outcome(table.read_table, path, required=required) == \
            _outcome(row_tables.read_table, path, required=required), (seed, path.read_bytes())
