"""A verdict's id: the same judge, kind, question, systems, order and reference always give the same id.

Re-runs and re-imports find the row they made before by this id (the pipeline, ``lsqa import-judgments``
and the LLMBar import all key verdicts with it).
"""

from __future__ import annotations

import hashlib


def judgment_id(judge: str, kind: str, question_id: str, system_a: str, system_b: str = "", shown_order: str = "ab",
                reference: str = "") -> str:
    """Stable id from a verdict's natural key, so re-imports and re-runs find the same row."""
    key = "\x1f".join((judge, kind, question_id, system_a, system_b, shown_order, reference))
    return hashlib.sha1(key.encode("utf-8")).hexdigest()
