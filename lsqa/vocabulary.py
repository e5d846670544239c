"""The words lsqa uses for verdicts, in one place: judge kinds' names and families, labels,
winners, tie models, review actions, flag reasons, and what a verdict is about (its item).

Every other module imports these names from here; the database stores the same strings.
Pairwise labels are in system terms: ``A`` means system_a won, whatever order the judge saw.
"""

from __future__ import annotations

# --------------------------------------------------------------------------- judge kinds (§5)

# The two families: a verdict rates one answer (yes/no) or a pair of answers (side by side).
PAIRWISE = "pairwise"
BINARY = "binary"
FAMILIES = (PAIRWISE, BINARY)

# The judge kinds' names and families: the words. What each kind *is* (labels, prompts, task,
# guideline) is its record in ``lsqa.judging.kinds``, built from these words; a kind registered
# there later (``lsqa.judging.kinds.register``) adds its words here, so that the floors below
# judging (the config's check of a study's judges) know every name without importing upward.
# absolute = AutoAIS yes/no against the book (§5.1); pairwise = side by side (§3.2);
# groundtruth / groundtruth-pairwise = the same against the NarrativeQA references (§5.2);
# similarity = embedding similarity to a reference, thresholded to yes/no; reference-check = an LLM's
# yes/no on a NarrativeQA reference itself, given the story's summary (not about any system).
_KIND_FAMILIES: dict[str, str] = {"absolute": BINARY, "pairwise": PAIRWISE, "groundtruth": BINARY,
                                  "groundtruth-pairwise": PAIRWISE, "similarity": BINARY, "reference-check": BINARY}
BUILTIN_JUDGE_KINDS = tuple(_KIND_FAMILIES)
# The kinds whose verdicts rate a NarrativeQA reference itself, not a system's answer: a study may run
# them without systems (``lsqa.config.schema``), and their verdicts are not stored among judgments.
_ABOUT_REFERENCES: set[str] = {"reference-check"}


def judge_kind_names() -> tuple[str, ...]:
    """Every judge kind's name: the built-in ones, then those registered since, in that order."""
    return tuple(_KIND_FAMILIES)


def add_judge_kind(name: str, family: str, *, about_references: bool = False) -> None:
    """The words of a new kind (``lsqa.judging.kinds.register`` calls this; nothing else should)."""
    if family not in FAMILIES:
        raise ValueError(f"judge kind {name!r}: family {family!r} is not one of {', '.join(FAMILIES)}")
    if _KIND_FAMILIES.get(name, family) != family:
        raise ValueError(f"judge kind {name!r} is already {_KIND_FAMILIES[name]}, not {family}")
    if name in _KIND_FAMILIES and (name in _ABOUT_REFERENCES) != about_references:
        raise ValueError(f"judge kind {name!r} is already registered "
                         f"{'about references' if name in _ABOUT_REFERENCES else 'about answers'}")
    _KIND_FAMILIES[name] = family
    if about_references:
        _ABOUT_REFERENCES.add(name)


def about_references(kind: str) -> bool:
    """Whether a kind's verdicts rate a NarrativeQA reference itself rather than a system's answer."""
    return kind in _ABOUT_REFERENCES


def remove_judge_kind(name: str) -> None:
    """Forget a registered kind's words (``lsqa.judging.kinds.unregister``); built-in kinds stay."""
    if name in BUILTIN_JUDGE_KINDS:
        raise ValueError(f"{name!r} is a built-in judge kind")
    _KIND_FAMILIES.pop(name, None)
    _ABOUT_REFERENCES.discard(name)


def family(kind: str) -> str:
    """``pairwise`` for side-by-side kinds, ``binary`` for yes/no kinds; ValueError for an unknown kind."""
    try:
        return _KIND_FAMILIES[kind]
    except KeyError:
        raise ValueError(f"unknown judge kind {kind!r} (known: {', '.join(_KIND_FAMILIES)})") from None


# --------------------------------------------------------------------------------- labels

PAIRWISE_LABELS = ("A", "B", "tie", "none")
ABSOLUTE_LABELS = ("yes", "no")
# What a side-by-side comparison row's ``winner`` may be (``lsqa rank`` input, Bradley-Terry).
WINNERS = PAIRWISE_LABELS
WINNER_HINT = f"winner must be one of {', '.join(WINNERS)} (any case)"
# How Bradley-Terry counts a tie (lsqa.stats.ranking): half a win each, or Davidson's (1970) model.
TIE_MODELS = ("half", "davidson")

_WINNER_ALIASES = {w.lower(): w for w in WINNERS}


def normalize_winner(value) -> str:
    """Map a comparison's winner to one of ``WINNERS`` ('A', 'B', 'tie', 'none'), case-insensitively.

    Raises ValueError for anything else (the loader turns it into an error naming the line).
    """
    key = str(value).strip().lower() if value is not None else ""
    try:
        return _WINNER_ALIASES[key]
    except KeyError:
        raise ValueError(f"unknown winner {value!r}; expected one of {', '.join(WINNERS)}") from None


# Labels as people and other tools write them (lower case) → the canonical label, per family.
PAIRWISE_ALIASES = {
    "a": "A", "a is better": "A", "1": "A", "system a": "A",
    "b": "B", "b is better": "B", "2": "B", "system b": "B",
    "tie": "tie", "equal": "tie", "3": "tie", "draw": "tie",
    "none": "none", "neither": "none", "both wrong": "none",
}
ABSOLUTE_ALIASES = {"yes": "yes", "y": "yes", "true": "yes", "1": "yes", "correct": "yes",
                     "no": "no", "n": "no", "false": "no", "0": "no", "incorrect": "no"}


def swap_pairwise(label: str | None) -> str | None:
    """The same verdict seen from the other side: A↔B, tie and none unchanged."""
    return {"A": "B", "B": "A"}.get(label, label) if label is not None else None


# ---------------------------------------------------------------------- humans (the audit)

REVIEW_ACTIONS = ("confirm", "override", "undo")
# How a reviewed verdict was chosen (migration 0007): priority reviews count for agreement and
# overrides; random, active and import (with an inclusion probability) also for corrected estimates.
REVIEW_QUEUES = ("priority", "random", "active", "import")
# The queues of a draw (migration 0023): a review through one of them with an inclusion probability,
# or a random assignment batch, draws its verdict, which then counts as an audit of that draw.
DRAWN_QUEUES = ("random", "active", "import")
# ``retract`` withdraws the annotator's earlier flag on that reference.
FLAG_REASONS = ("wrong", "ambiguous", "unanswerable", "retract")
REFERENCES = ("1", "2")
# Passing an item over on the Audit page (migration 0017): recorded, never a label.
SKIP_REASONS = ("skip", "unsure")
# A rater name for the humans in agreement tables: ``human``, ``human:<annotator>``.
HUMAN = "human"
# The model (and context) of a system whose answers were made elsewhere (`lsqa import-answers`):
# a run judges them and never answers for it.
IMPORTED = "imported"


# --------------------------------------------------------------------------------- items

def item_key(row: dict) -> tuple[str, ...]:
    """What a verdict is about: (question, system) or (question, system A, system B). A tuple, not a
    joined string, so that any character may appear in question ids and system names."""
    if row["family"] == PAIRWISE:  # stored with the verdict (migration 0012), from its kind's record
        return (row["question_id"], row["system_a"], row["system_b"])
    return (row["question_id"], row["system_a"])


# ------------------------------------------------------------- ranking views (§3.2)

# One judge's ranking (or accuracy) three ways, side by side on the Leaderboard and in `lsqa rank
# --corrected`: the judge's own labels; corrected by random / active / imported audits (PPI++,
# lsqa.stats.corrected); the final human label in place of the judge's wherever someone reviewed
# ("Use human overrides"). The names key rank flips (lsqa.stats.rank_flips), head their columns and
# name the overrides switch in the Leaderboard's URL.
JUDGE_ONLY = "judge-only"
CORRECTED = "corrected"
OVERRIDES = "overrides"
RANKING_VIEWS = (JUDGE_ONLY, CORRECTED, OVERRIDES)
# The labels switch as an exported file's name spells it: OVERRIDES on, JUDGE_LABELS off.
JUDGE_LABELS = "judge-labels"
