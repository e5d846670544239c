"""The audit screen's keys and words: shortcut keys, the label buttons, labels in the positions shown
and in system terms, and the sentences the screen says after an action.

Side-by-side verdicts (paper §3.2) are shown in an order (``shown_order``): an annotator labels the
answers as shown (A = the answer shown first), and the label is stored in system terms (A =
system_a won) as the judge's verdicts are. Yes/no verdicts (AutoAIS §3.1, ground truth §5.2) have
no positions.
"""

from __future__ import annotations

from lsqa.judging import kinds
from lsqa.vocabulary import swap_pairwise

# Keyboard shortcuts of the audit screen (Streamlit ≥ 1.52 `st.button(shortcut=...)`; C and R are
# reserved by Streamlit). Labels are given in the positions shown: "A" is the answer shown first.
SHORTCUTS = {
    "next": "J", "previous": "K", "confirm": "V", "undo": "U",
    "shown:A": "A", "shown:B": "B", "shown:tie": "T", "shown:none": "X",
    "yes": "Y", "no": "N",
    "flag:1": "F", "flag:2": "G",
    "skip": "S", "unsure": "D",
}
# A key per flag reason: it chooses the reason for the next F / G (retracting is Undo's job).
FLAG_REASON_KEYS = {"wrong": "W", "ambiguous": "M", "unanswerable": "Q"}


def label_options(kind: str) -> list[dict]:
    """The labels a human can give, as buttons: ``{"key", "shown", "text", "shortcut"}``.

    Side-by-side labels are offered in shown positions (A = the answer shown first); ``to_system_label``
    turns them into system terms for storage.
    """
    if kinds.get(kind).pairwise:
        return [{"key": "shown:A", "shown": "A", "text": "A is better", "shortcut": SHORTCUTS["shown:A"]},
                {"key": "shown:B", "shown": "B", "text": "B is better", "shortcut": SHORTCUTS["shown:B"]},
                {"key": "shown:tie", "shown": "tie", "text": "Equal", "shortcut": SHORTCUTS["shown:tie"]},
                {"key": "shown:none", "shown": "none", "text": "None (both wrong)",
                 "shortcut": SHORTCUTS["shown:none"]}]
    return [{"key": "yes", "shown": "yes", "text": "Yes, correct", "shortcut": SHORTCUTS["yes"]},
            {"key": "no", "shown": "no", "text": "No, not correct", "shortcut": SHORTCUTS["no"]}]


def to_system_label(kind: str, shown_label: str, shown_order: str) -> str:
    """A label given in shown positions → system terms (A = system_a won), as verdicts are stored."""
    if kinds.get(kind).pairwise and shown_order == "ba":
        return swap_pairwise(shown_label)
    return shown_label


def to_shown_label(kind: str, label: str | None, shown_order: str) -> str | None:
    return to_system_label(kind, label, shown_order) if label is not None else None  # the swap is its own inverse


def describe(kind: str, label: str | None, system_a: str, system_b: str) -> str:
    """A stored label (system terms) in words."""
    if label is None:
        return "no label"
    if kinds.get(kind).pairwise:
        return {"A": f"{system_a} better", "B": f"{system_b} better", "tie": "equal",
                "none": "neither correct"}.get(label, label)
    return label


def shown_text(kind: str, shown_label: str | None) -> str:
    """A label in shown positions, as its button says it ("B is better", "Yes, correct")."""
    for opt in label_options(kind):
        if opt["shown"] == shown_label:
            return opt["text"]
    return shown_label or "no label"


def saved_message(kind: str, shown_label: str, action: str) -> str:
    """What the screen says after a decision: the label as shown, whether it agrees with the judge."""
    agrees = "agrees with the judge" if action == "confirm" else "overrides the judge"
    return f"Saved: {shown_text(kind, shown_label)} ({agrees})"


def describe_action(action: dict | None) -> str:
    """An action in the words of the screen: the label as it was shown, the question by its text."""
    if not action:
        return "nothing to undo"
    question = action.get("question") or action["target"]
    if action["what"] == "review":
        said = shown_text(action["kind"], to_shown_label(action["kind"], action["label"], action["shown_order"])) \
            if action.get("kind") else action["label"]
        return f"your {action['action']} ({said}) on “{question}” ({action.get('judge', '')})"
    return f"your flag '{action['action']}' on reference {action['reference']} of “{question}”"


def evidence_label(ev: dict, pairwise: bool) -> str:
    """Which shown answer a block of evidence is about, in words (side-by-side items only)."""
    if not pairwise:
        return ""
    if ev["about"]:
        return f"answer{'s' if ' and ' in ev['about'] else ''} {ev['about']}"
    return "neither answer's words"
