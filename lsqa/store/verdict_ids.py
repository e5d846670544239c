"""A verdict's id: the same judge, kind, question, systems, order and reference always give the same id.

Re-runs and re-imports find the row they made before by this id (the pipeline, ``lsqa import-judgments``
and the LLMBar import all key verdicts with it). It is also what keeps one verdict per natural key:
since migration 0020 the table's one unique index is the primary key, so
``lsqa.store.results.insert_judgments`` refuses a row whose id is not the hash of its key. The same
hash in SQL (``ID_SQL``) computes the ids of a staged import; tests/store/test_verdict_ids.py checks the two agree.

Since migration 0021 that key is ``id_number``, a 128-bit number of the id (``number_sql``):
DuckDB indexes it 2.5 times as fast as the id's 40 characters, and a CHECK keeps it the id's number.
"""

from __future__ import annotations

import hashlib
import re

# The natural key of a verdict, in the order its id hashes it.
KEY_COLUMNS = ("judge", "kind", "question_id", "system_a", "system_b", "shown_order", "reference")

# ``judgment_id`` in DuckDB SQL, over columns of these names.
ID_SQL = f"sha1(concat_ws(chr(31), {', '.join(KEY_COLUMNS)}))"


def number_sql(column: str = "id") -> str:
    """``id_number`` in DuckDB SQL, of the id in ``column``: the id's first 32 hex digits (a sha1's first
    128 bits), or the md5 of an id of another shape (written before ids were checked). Migration 0021's
    CHECK holds the same expression; writers compute it in SQL, so it has no Python twin to drift."""
    return (f"coalesce(CASE WHEN length({column}) = 40 THEN TRY_CAST('0x' || left({column}, 32) AS UHUGEINT) END,"
            f" CAST('0x' || md5({column}) AS UHUGEINT))")


def one_verdict(verdict_id: str) -> tuple[str, list]:
    """A table expression of the verdict ``verdict_id`` (its row of ``judgments``, or none) and its
    parameters. A sha1 id (every id lsqa writes) is looked up by its number, a literal (for such an id,
    ``number_sql`` is its first 32 digits), so that DuckDB reads the one row through the primary key
    instead of comparing every id (docs/benchmarks-log/2026-12-03-import-id-number.md). A bound
    parameter is not matched to the index, and neither is a number with a second condition beside it:
    the id is checked on the row found, after (MATERIALIZED keeps the two apart). Any other id is found
    by itself."""
    if isinstance(verdict_id, str) and _SHA1_HEX.fullmatch(verdict_id):
        return (f"(WITH found AS MATERIALIZED (SELECT * FROM judgments WHERE id_number = {int(verdict_id[:32], 16)}"
                f"::UHUGEINT) SELECT * FROM found WHERE id = ?)", [verdict_id])
    return "(SELECT * FROM judgments WHERE id = ?)", [verdict_id]


# Up to this many ids, ``among`` names their numbers one by one (a statement of ~45 characters each).
FEW = 1000


def among(verdict_ids: list[str]) -> tuple[str, list]:
    """SQL condition and parameters of "a verdict whose id is one of ``verdict_ids``" on the verdicts
    table: the sha1 ids by their numbers as literals (an index scan, where ``id IN (...)`` scans every
    id: docs/benchmarks-log/2026-12-03-import-id-number.md), any other by itself. Each number is a literal of the
    statement, so past ``FEW`` ids the scan is the cheaper: then all are matched by id."""
    if len(verdict_ids) > FEW:
        return "(id IN (SELECT unnest(?)))", [list(verdict_ids)]
    numbers, others = [], []
    for v in verdict_ids:
        if isinstance(v, str) and _SHA1_HEX.fullmatch(v):
            numbers.append(f"{int(v[:32], 16)}::UHUGEINT")
        else:
            others.append(v)
    parts = [f"id_number IN ({', '.join(numbers)})"] if numbers else []
    if others:
        parts.append("id IN (SELECT unnest(?))")
    return f"({' OR '.join(parts) or 'false'})", [others] if others else []


_SHA1_HEX = re.compile("[0-9a-f]{40}")


def judgment_id(judge: str, kind: str, question_id: str, system_a: str, system_b: str = "", shown_order: str = "ab",
                reference: str = "") -> str:
    """Stable id from a verdict's natural key (\\x1f-joined, sha1), so re-imports and re-runs find the same row."""
    key = "\x1f".join((judge, kind, question_id, system_a, system_b, shown_order, reference))
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


def key_id(row) -> str:
    """``judgment_id`` of a verdict row (a mapping with the key columns; absent ones take the table's defaults)."""
    return judgment_id(row["judge"], row["kind"], row["question_id"], row["system_a"], row.get("system_b", ""),
                       row.get("shown_order", "ab"), row.get("reference", ""))
