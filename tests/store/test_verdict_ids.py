"""A verdict's id is the sha1 of its natural key (lsqa.store.verdict_ids), and since migration 0020
that is what keeps one verdict per key: the table's one unique index is the primary key on id."""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsqa import store
from lsqa.store import results as results_store
from lsqa.store.verdict_ids import ID_SQL, KEY_COLUMNS, judgment_id, number_sql, one_verdict
from tests.support.migrations import workspace_before

_NAME = st.text(min_size=0, max_size=12)  # any character: non-ASCII, \x1f, quotes, NUL-free by DuckDB's rule


@pytest.fixture(scope="module")
def memory():
    """One in-memory DuckDB for a property's examples: a connection each cost most of the examples' time."""
    with duckdb.connect() as con:
        yield con


@settings(max_examples=200, deadline=None)
@given(st.tuples(*[_NAME.filter(lambda s: "\x00" not in s)] * len(KEY_COLUMNS)))
def test_the_sql_id_is_the_python_id(memory, key):
    """Staged imports compute ids in SQL, the pipeline and the row importer in Python: the same verdict
    must get the same id whichever wrote it, or a re-import would add it twice."""
    con = memory
    sql_id = con.execute(f"SELECT {ID_SQL} FROM (SELECT {', '.join(f'?::VARCHAR AS {c}' for c in KEY_COLUMNS)})",
                         list(key)).fetchone()[0]
    assert sql_id == judgment_id(*key)


def _verdict(**changes) -> dict:
    row = {"judge": "j", "kind": "pairwise", "family": "pairwise", "question_id": "q", "system_a": "x",
           "system_b": "y", "shown_order": "ab", "reference": "", "label": "A", "status": "ok"}
    row.update(changes)
    row.setdefault("id", judgment_id(*(row[c] for c in KEY_COLUMNS)))
    return row


def test_a_verdict_not_keyed_by_its_key_is_refused_and_nothing_written(workspace):
    with pytest.raises(ValueError, match="not keyed by lsqa.store.verdict_ids.judgment_id"):
        with store.write(workspace) as con:
            results_store.insert_judgments(con, [_verdict(), _verdict(id="my-own-id")])
    with store.connect(workspace) as con:
        assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] == 0


def test_one_verdict_per_natural_key_without_the_old_unique_constraint(workspace):
    """The seven-column UNIQUE of 0001 is gone (migration 0020); the same key written twice is still one row,
    and the table keeps exactly one unique index, on the id's number (0021)."""
    with store.write(workspace) as con:
        assert results_store.insert_judgments(con, [_verdict()]) == 1
        assert results_store.insert_judgments(con, [_verdict(label="B")]) == 0  # kept, as before
    with store.connect(workspace) as con:
        assert con.execute("SELECT label FROM judgments").fetchall() == [("A",)]
        unique = con.execute("SELECT constraint_type, constraint_column_names FROM duckdb_constraints()"
                             " WHERE table_name = 'judgments' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')").fetchall()
        assert unique == [("PRIMARY KEY", ["id_number"])]


def test_migrations_0020_0021_keep_every_verdict_and_what_the_views_read(demo_workspace, tmp_path):
    """A workspace made before 0020 (the demo's verdicts, reviews and flags in a file migrated to 0019)
    reads the same verdicts, in the same order, and the same derived views after the two rebuilds;
    every verdict's id_number is its id's number, and a verdict is found by its id through the key."""

    from lsqa.store import db

    _, con = workspace_before(tmp_path, "0020", "before-0020.duckdb")
    con.execute(f"ATTACH '{demo_workspace}' AS demo (READ_ONLY)")
    for table in ("documents", "questions", "systems", "judgments", "human_reviews", "reference_flags"):
        # By name: the demo's tables are at the newest migration (judgments has id_number since 0021).
        columns = ", ".join(c for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND table_name = ?"
            " ORDER BY column_index", [table]).fetchall())
        con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM demo.{table} ORDER BY rowid")
    con.execute("DETACH demo")
    # People's labels on the first verdicts (the demo has none): a confirm, an override, one withdrawn.
    ids = [r[0] for r in con.execute("SELECT id FROM judgments WHERE status = 'ok' ORDER BY rowid LIMIT 3").fetchall()]
    con.execute("INSERT INTO human_reviews (annotator, judgment_id, action, label) VALUES"
                " ('ana', ?, 'confirm', NULL), ('ben', ?, 'override', 'no'), ('ana', ?, 'override', 'yes')",
                [ids[0], ids[1], ids[2]])
    con.execute("INSERT INTO human_reviews (annotator, judgment_id, action, undoes)"
                " SELECT 'ana', judgment_id, 'undo', id FROM human_reviews WHERE judgment_id = ?", [ids[2]])
    reads = {"judgments": "SELECT * EXCLUDE (id_number) FROM judgments ORDER BY rowid",
             "verdict_items": "SELECT * FROM verdict_items ORDER BY id",
             "human_labels": "SELECT * FROM human_labels ORDER BY judgment_id, annotator",
             "final_human_labels": "SELECT * FROM final_human_labels ORDER BY ALL"}
    before = {name: con.execute(sql.replace(" EXCLUDE (id_number)", "")).fetchall() for name, sql in reads.items()}
    assert len(before["judgments"]) > 500 and before["human_labels"]
    applied = store.migrate(con, db.MIGRATIONS_DIR)
    assert applied[:2] == ["0020_judgments_one_key.sql", "0021_judgments_id_number.sql"]
    assert {name: con.execute(sql).fetchall() for name, sql in reads.items()} == before
    numbers = con.execute("SELECT id, id_number FROM judgments").fetchall()
    assert all(n == int(i[:32], 16) for i, n in numbers)
    con.close()


def test_a_number_that_is_not_the_ids_is_refused_by_the_table(workspace):
    """Migration 0021's CHECK: whoever writes, id_number is the id's number, so the primary key on it
    is a primary key on the id. Nothing is written."""
    good = judgment_id("j", "pairwise", "q", "x", "y", "ab", "")
    with store.connect(workspace) as con:
        for number in (f"{int(good[:32], 16) + 1}::UHUGEINT", "NULL"):
            with pytest.raises(duckdb.Error, match="CHECK|NOT NULL|NULL"):
                con.execute("INSERT INTO judgments (id, id_number, judge, kind, question_id, system_a, status)"
                            f" VALUES (?, {number}, 'j', 'pairwise', 'q', 'x', 'ok')", [good])
        assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] == 0


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(min_size=0, max_size=45).filter(lambda s: "\x00" not in s),
                 st.text(alphabet="0123456789abcdefABCDEF_ x", min_size=38, max_size=42)))
def test_one_verdict_finds_any_id_and_only_it(memory, verdict_id):
    """A verdict is found by its id whatever the id's shape: a sha1 through the key's number, any other
    (written before ids were checked) by itself; a different id with the same first 32 digits is not
    the verdict asked for."""
    con = memory
    con.execute("CREATE OR REPLACE TABLE judgments (id VARCHAR, id_number UHUGEINT, label VARCHAR)")
    add = f"INSERT INTO judgments SELECT v, {number_sql('v')}, ? FROM (SELECT ?::VARCHAR AS v)"
    con.execute(add, ["stored", verdict_id])
    twin = (verdict_id[:32] + "f" * 8) if len(verdict_id) == 40 else None
    if twin and twin != verdict_id:
        con.execute(add, ["twin", twin])
    table, params = one_verdict(verdict_id)
    assert con.execute(f"SELECT id, label FROM {table}", params).fetchall() == [(verdict_id, "stored")]
    sha1 = judgment_id(verdict_id, "k", "q", "a")
    table, params = one_verdict(sha1)
    assert con.execute(f"SELECT id FROM {table}", params).fetchall() == []
    con.execute(add, ["sha1", sha1])
    assert con.execute(f"SELECT id, id_number FROM {table}", params).fetchall() == [(sha1, int(sha1[:32], 16))]


@pytest.mark.parametrize("n", [1, 3, 1001])
def test_a_rejudged_verdict_replaces_the_stored_one_through_the_key(workspace, n):
    """A re-run stores its verdicts with replace (lsqa.study.pipeline): the stored rows of those ids are
    deleted through the key (ids by number up to verdict_ids.FEW, by id past it) and the new ones written;
    the others stay."""
    first = [_verdict(question_id=f"q{i}", label="A") for i in range(n + 2)]
    with store.write(workspace) as con:
        assert results_store.insert_judgments(con, first) == n + 2
    again = [_verdict(question_id=f"q{i}", label="B") for i in range(n)]
    with store.write(workspace) as con:
        assert results_store.insert_judgments(con, again, replace=True) == n
    with store.connect(workspace) as con:
        labels = dict(con.execute("SELECT question_id, label FROM judgments").fetchall())
    assert labels == {f"q{i}": "B" if i < n else "A" for i in range(n + 2)}


def test_among_finds_sha1_ids_by_number_and_any_other_by_itself():
    from lsqa.store.verdict_ids import among

    sha1 = judgment_id("j", "k", "q", "a")
    with duckdb.connect() as con:
        con.execute("CREATE TABLE judgments (id VARCHAR, id_number UHUGEINT)")
        for v in (sha1, "legacy-id", judgment_id("j", "k", "q", "b")):
            con.execute(f"INSERT INTO judgments SELECT v, {number_sql('v')} FROM (SELECT ?::VARCHAR AS v)", [v])
        for ids, found in (([sha1], {sha1}), (["legacy-id"], {"legacy-id"}), ([sha1, "legacy-id"], {sha1, "legacy-id"}),
                           ([], set()), (["nope"], set())):
            condition, params = among(ids)
            assert {r[0] for r in con.execute(f"SELECT id FROM judgments WHERE {condition}", params).fetchall()} == found
