"""A verdict's id: the same judge, kind, question, systems, order and reference always give the same id.

Re-runs and re-imports find the row they made before by this id (the pipeline, ``lsqa import-judgments``
and the LLMBar import all key verdicts with it). It is also what keeps one verdict per natural key:
since migration 0020 the table's one unique index is the primary key on ``id`` (issue 35), so
``lsqa.store.results.insert_judgments`` refuses a row whose id is not the hash of its key. The same
hash in SQL (``ID_SQL``) computes the ids of a staged import; tests/test_vocabulary.py checks the two agree.
"""

from __future__ import annotations

import hashlib

# The natural key of a verdict, in the order its id hashes it.
KEY_COLUMNS = ("judge", "kind", "question_id", "system_a", "system_b", "shown_order", "reference")

# ``judgment_id`` in DuckDB SQL, over columns of these names.
ID_SQL = f"sha1(concat_ws(chr(31), {', '.join(KEY_COLUMNS)}))"


def judgment_id(judge: str, kind: str, question_id: str, system_a: str, system_b: str = "", shown_order: str = "ab",
                reference: str = "") -> str:
    """Stable id from a verdict's natural key (\\x1f-joined, sha1), so re-imports and re-runs find the same row."""
    key = "\x1f".join((judge, kind, question_id, system_a, system_b, shown_order, reference))
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


def key_id(row) -> str:
    """``judgment_id`` of a verdict row (a mapping with the key columns; absent ones take the table's defaults)."""
    return judgment_id(row["judge"], row["kind"], row["question_id"], row["system_a"], row.get("system_b", ""),
                       row.get("shown_order", "ab"), row.get("reference", ""))
