"""A verdict's id is the sha1 of its natural key (lsqa.store.verdict_ids), and since migration 0020
that is what keeps one verdict per key: the table's one unique index is the primary key on id."""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import given, settings, strategies as st

from lsqa import store
from lsqa.store import results as results_store
from lsqa.store.verdict_ids import ID_SQL, KEY_COLUMNS, judgment_id

_NAME = st.text(min_size=0, max_size=12)  # any character: non-ASCII, \x1f, quotes, NUL-free by DuckDB's rule


@settings(max_examples=200, deadline=None)
@given(st.tuples(*[_NAME.filter(lambda s: "\x00" not in s)] * len(KEY_COLUMNS)))
def test_the_sql_id_is_the_python_id(key):
    """Staged imports compute ids in SQL, the pipeline and the row importer in Python: the same verdict
    must get the same id whichever wrote it, or a re-import would add it twice."""
    with duckdb.connect() as con:
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
    and the table keeps exactly one unique index."""
    with store.write(workspace) as con:
        assert results_store.insert_judgments(con, [_verdict()]) == 1
        assert results_store.insert_judgments(con, [_verdict(label="B")]) == 0  # kept, as before
    with store.connect(workspace) as con:
        assert con.execute("SELECT label FROM judgments").fetchall() == [("A",)]
        unique = con.execute("SELECT constraint_type, constraint_column_names FROM duckdb_constraints()"
                             " WHERE table_name = 'judgments' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')").fetchall()
        assert unique == [("PRIMARY KEY", ["id"])]


def test_migration_0020_keeps_every_verdict_and_what_the_views_read(demo_workspace, tmp_path):
    """A workspace made before 0020 (the demo's verdicts, reviews and flags in a file migrated to 0019)
    reads the same verdicts, in the same order, and the same derived views after the rebuild."""
    import shutil

    from lsqa.store import db

    old = tmp_path / "old"
    old.mkdir()
    for path in db.migration_files():
        if path.name < "0020":
            shutil.copy(path, old / path.name)
    con = duckdb.connect(str(tmp_path / "before-0020.duckdb"))
    store.migrate(con, old)
    con.execute(f"ATTACH '{demo_workspace}' AS demo (READ_ONLY)")
    for table in ("documents", "questions", "systems", "judgments", "human_reviews", "reference_flags"):
        con.execute(f"INSERT INTO {table} SELECT * FROM demo.{table} ORDER BY rowid")
    con.execute("DETACH demo")
    # People's labels on the first verdicts (the demo has none): a confirm, an override, one withdrawn.
    ids = [r[0] for r in con.execute("SELECT id FROM judgments WHERE status = 'ok' ORDER BY rowid LIMIT 3").fetchall()]
    con.execute("INSERT INTO human_reviews (annotator, judgment_id, action, label) VALUES"
                " ('ana', ?, 'confirm', NULL), ('ben', ?, 'override', 'no'), ('ana', ?, 'override', 'yes')",
                [ids[0], ids[1], ids[2]])
    con.execute("INSERT INTO human_reviews (annotator, judgment_id, action, undoes)"
                " SELECT 'ana', judgment_id, 'undo', id FROM human_reviews WHERE judgment_id = ?", [ids[2]])
    reads = {"judgments": "SELECT * FROM judgments ORDER BY rowid",
             "verdict_items": "SELECT * FROM verdict_items ORDER BY id",
             "human_labels": "SELECT * FROM human_labels ORDER BY judgment_id, annotator",
             "final_human_labels": "SELECT * FROM final_human_labels ORDER BY ALL"}
    before = {name: con.execute(sql).fetchall() for name, sql in reads.items()}
    assert len(before["judgments"]) > 500 and before["human_labels"]
    assert store.migrate(con, db.MIGRATIONS_DIR) == ["0020_judgments_one_key.sql"]
    assert {name: con.execute(sql).fetchall() for name, sql in reads.items()} == before
    con.close()
