"""One ASCII rule: the importers' SQL test for "a name beyond ASCII" (``rows.beyond_ascii``) says what Python's
``str.isascii`` says, and the premise that lets an all-ASCII import skip its look-alike notes holds: two ASCII
names never look alike (``lsqa.text.names.lookalikes``)."""

from __future__ import annotations

import string

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from lsqa.store.importers import rows
from lsqa.text.names import lookalike_warnings, lookalikes

# Each side of the boundary, and the characters a name's rules care about (controls, invisible, bidi, wide).
EDGES = ["", "a", "Judge 1", "\x01", "\x7f", "\x80", "\xa0", "é", "e\u0301", "\u200b", "\u202e", "ｇ", "р", "😀",
         "\U0010ffff", "gpt-4\x7f", "gpt-4\x80"]
# Text DuckDB can hold: no NUL, no lone surrogate (not UTF-8).
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)


def beyond_ascii_in_sql(values: list[str]) -> list[bool]:
    with duckdb.connect() as con:
        con.execute("CREATE TABLE t (i INTEGER, v VARCHAR)")
        con.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(values)))
        return [r[0] for r in con.execute(f"SELECT {rows.beyond_ascii('v')} FROM t ORDER BY i").fetchall()]


def test_the_sql_rule_is_pythons_on_each_side_of_the_boundary():
    assert beyond_ascii_in_sql(EDGES) == [not v.isascii() for v in EDGES]


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=20))
def test_the_sql_rule_is_pythons_on_any_text(values):
    assert beyond_ascii_in_sql(values) == [not v.isascii() for v in values]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(string.printable, max_size=8), max_size=12), st.lists(st.text(string.printable, max_size=8),
                                                                             max_size=12))
def test_ascii_names_never_look_alike(names, existing):
    assert lookalikes(names, existing) == []
    assert lookalike_warnings(names, existing) == []


def test_a_name_beyond_ascii_can_look_like_an_ascii_one():
    """The rule's other side: what the notes are read for (a Cyrillic р in a Latin name)."""
    assert lookalikes(["gрt-4"], ["gpt-4"]) == [("gрt-4", "gpt-4")]
    assert beyond_ascii_in_sql(["gрt-4", "gpt-4"]) == [True, False]
