"""Verdict labels: one vocabulary for judges, imports, humans and statistics.

Pairwise labels are in system terms: ``A`` means system_a won, whatever order the judge saw.
"""

from __future__ import annotations

PAIRWISE_LABELS = ("A", "B", "tie", "none")
ABSOLUTE_LABELS = ("yes", "no")

_PAIRWISE = {
    "a": "A", "a is better": "A", "1": "A", "system a": "A",
    "b": "B", "b is better": "B", "2": "B", "system b": "B",
    "tie": "tie", "equal": "tie", "3": "tie", "draw": "tie",
    "none": "none", "neither": "none", "both wrong": "none",
}
_ABSOLUTE = {"yes": "yes", "y": "yes", "true": "yes", "1": "yes", "correct": "yes",
             "no": "no", "n": "no", "false": "no", "0": "no", "incorrect": "no"}


def normalise_label(label: str, kind: str) -> str | None:
    """Map a label as written in a file to the canonical one for ``kind``; ValueError if unknown."""
    text = str(label).strip().strip("'\"").lower()
    if kind in ("pairwise", "groundtruth-pairwise"):
        table, allowed = _PAIRWISE, PAIRWISE_LABELS
    elif kind in ("absolute", "groundtruth"):
        table, allowed = _ABSOLUTE, ABSOLUTE_LABELS
    elif kind == "similarity":
        try:
            float(text)
        except ValueError:
            table, allowed = _ABSOLUTE, ABSOLUTE_LABELS
        else:
            return text
    else:
        raise ValueError(f"unknown verdict kind {kind!r}")
    if text not in table:
        raise ValueError(f"label {label!r} is not a {kind} label (expected one of {', '.join(allowed)})")
    return table[text]


def swap_pairwise(label: str | None) -> str | None:
    """The same verdict seen from the other side: A↔B, tie and none unchanged."""
    return {"A": "B", "B": "A"}.get(label, label) if label is not None else None
