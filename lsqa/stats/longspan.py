"""Which questions need the whole book (the paper's thesis, §1 and §4: a full-context
system beats retrieval, which beats no context, and many NarrativeQA questions are answered from
memory).

For one yes/no judge (by default the one that classifies the most of the questions analysed) and
three systems of a study — no context, BM25 retrieval, the full book —
each question gets whether each answer was judged right (``None`` when that answer has no decided
verdict: never guessed) and, when all three are known, a class:

    memorised        the no-context answer is right (the model knew it without the book)
    retrieval        no context wrong, retrieval right
    needs-full-book  only the full book right
    unanswered       none right

and an evidence span: where in the story (fractions of its length, Gutenberg header and footer
cut) the quotes an evidence-citing judge gave for these answers lie, and, for a question written
about an entity (§2, Appendix A.1), where that entity's mention chain begins and ends.

Per book and per entity: the full-vs-retrieval and full-vs-none gains (difference of the share of
right answers, on the questions where both answers are judged) and each class's share. A gain is a
difference of two correlated proportions; its 95% interval is Tango's (1998) score interval
(``lsqa.stats.ranking.paired_difference_ci``), which keeps its level at 5 questions and never has
zero width (``bench/bench_longspan_intervals.py``; the percentile bootstrap used before covered
41-70% at 5 questions). Below ``FEW_QUESTIONS`` questions a gain carries a "too few questions" note.

Several books at once: each gain also has a simultaneous interval, Tango's at the Bonferroni level
1 − 0.05/K over the K groups shown (books, or entities), so that all K intervals of one comparison
hold together with 95% probability (Bonferroni needs no independence between the groups).

Corrected by audits: where people audited the judge's verdicts (random or active queue, or imported
with an inclusion probability: ``lsqa.figures.corrected``), a gain is the mean of per-question
differences ``right_full − right_other``, so the PPI++ mean (``lsqa.stats.corrected.ppi_mean``,
Angelopoulos et al. 2023) applies to it, coded into [0, 1] as ``(difference + 1)/2``. A question
counts as audited when both its answers were; its inclusion probability is the product of the
two, the draws of lsqa's queues being independent per verdict (for imported audits the same is
assumed). The judge's weight λ is held at 1 (classical PPI, Angelopoulos et al. 2023a): a book has a
handful of audited questions, too few to tune λ on (PPI++ would take λ = 0 whenever they happen to
agree with each other), and with λ = 1 audits that agree with the judge leave its gain unchanged.
Without an audited question the gain is the judge's only, and says so.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from lsqa.errors import LsqaError, NoVerdicts
from lsqa.judging import kinds
from lsqa.stats.corrected import design, ppi_mean
from lsqa.stats.ranking import paired_difference_ci
from lsqa.vocabulary import BINARY, CORRECTED, JUDGE_ONLY

CLASSES = ("memorised", "retrieval", "needs-full-book", "unanswered")
ROLES = ("no_context", "retrieval", "full")  # the three systems, by what context they answer with
LEVEL = 0.95
FEW_QUESTIONS = 10          # below this a gain says it rests on too few questions
INTERVAL = "tango score"    # how a gain's interval is computed (module docstring)
SIMULTANEOUS = "bonferroni"


class LongSpanRefused(LsqaError, ValueError):
    """A judge or system that cannot be used, or cannot be chosen without a name."""


def _context_role(context: str) -> str | None:
    if context == "none":
        return "no_context"
    if context.startswith("retrieval:"):
        return "retrieval"
    if context == "full":
        return "full"
    return None


_OPTION = {"no_context": "--no-context", "retrieval": "--retrieval", "full": "--full"}


def candidate_systems(contexts: dict[str, str], named: dict[str, str | None]) -> dict[str, list[str]]:
    """The systems that may serve each role: the one named, else every system whose context says it
    (a study may use one full-book system for some books and another for others)."""
    out = {}
    for role in ROLES:
        name = named.get(role)
        if name:
            if name not in contexts:
                raise LongSpanRefused(f"{_OPTION[role]} {name!r}: no such system in this workspace; choose one of "
                                      f"{', '.join(sorted(contexts))}")
            out[role] = [name]
            continue
        found = sorted(s for s, c in contexts.items() if _context_role(c) == role)
        if not found:
            raise LongSpanRefused(f"no system answers with {role.replace('_', ' ')} context here; name one with "
                                  f"{_OPTION[role]} (systems: {', '.join(sorted(contexts)) or 'none'})")
        out[role] = found
    return out


def system_per_question(candidates: dict[str, list[str]], answers: list[tuple[str, str]]) -> dict[str, dict]:
    """question id → {role: the system that answered it in that role}. Two candidates of one role
    answering the same question are refused with their names: a silent pick would change the figures."""
    out: dict[str, dict] = defaultdict(dict)
    role_of = {s: role for role, names in candidates.items() for s in names}
    for question_id, system in sorted(answers):
        role = role_of.get(system)
        if role is None:
            continue
        other = out[question_id].get(role)
        if other is not None and other != system:
            raise LongSpanRefused(f"question {question_id} was answered by {other} and {system}, both with "
                                  f"{role.replace('_', ' ')} context: name one with {_OPTION[role]}")
        out[question_id][role] = system
    return out


def _judge_preference(kind: str) -> int:
    """Lower is better: a ground-truth rater (right = agrees with a reference) first, then a judge
    that reads the book (AutoAIS), a similarity score last."""
    record = kinds.get(kind)
    return 0 if record.one_reference else 2 if record.scored else 1


def choose_judge(judge_rows: list[dict], named: str | None, classified: dict[str, int] | None = None) -> str:
    """The named yes/no judge, else the one that classifies the most questions here (``classified``:
    judge → count), a ground-truth judge before AutoAIS before a similarity score when they tie."""
    binary = [r for r in judge_rows if r["family"] == BINARY and r["n_ok"] > 0]
    if named:
        if named not in {r["judge"] for r in judge_rows}:
            raise LongSpanRefused(f"--judge {named!r}: no such judge in this workspace; use one of "
                                  f"{', '.join(sorted({r['judge'] for r in binary})) or '(none)'}")
        if named not in {r["judge"] for r in binary}:
            raise LongSpanRefused(f"--judge {named!r} rates pairs of answers, not whether one answer is right: use a "
                                  f"yes/no judge ({', '.join(sorted({r['judge'] for r in binary})) or 'none here'})")
        return named
    if not binary:
        raise NoVerdicts("no yes/no judge has decided verdicts here: run a ground-truth or AutoAIS judge first")
    counts = classified or {}
    return sorted(binary, key=lambda r: (-counts.get(r["judge"], 0), _judge_preference(r["kind"]), -r["n_ok"],
                                         r["judge"]))[0]["judge"]


def classify(no_context: bool | None, retrieval: bool | None, full: bool | None) -> str | None:
    """The question's class; None unless all three answers were judged."""
    if no_context is None or retrieval is None or full is None:
        return None
    if no_context:
        return "memorised"
    if retrieval:
        return "retrieval"
    return "needs-full-book" if full else "unanswered"


def _classified_count(labels: dict, questions: list[dict], per_question: dict[str, dict]) -> int:
    return sum(all((q["question_id"], per_question.get(q["question_id"], {}).get(role)) in labels for role in ROLES)
               for q in questions)


def _fraction(pos: int, bounds: dict) -> float:
    span = max(1, bounds["story_end"] - bounds["story_start"])
    return round(min(1.0, max(0.0, (pos - bounds["story_start"]) / span)), 4)


def gain(full: np.ndarray, other: np.ndarray, *, level: float = LEVEL) -> dict:
    """Share right with the full book minus share right with ``other``, on the same questions (both
    arrays of 0/1 in question order), with Tango's score interval (module docstring): the judge's
    figure (``figure`` = judge-only), ``too_few_questions`` below ``FEW_QUESTIONS`` questions."""
    n = len(full)
    out = {"gain": None, "ci_low": None, "ci_high": None, "n": int(n), "figure": JUDGE_ONLY, "interval": INTERVAL,
           "level": level, "too_few_questions": n < FEW_QUESTIONS, "note": ""}
    if n == 0:
        out["note"] = "no question with both answers judged"
        return out
    ci = paired_difference_ci(np.asarray(full).astype(bool), np.asarray(other).astype(bool), level=level)
    out.update(gain=ci.estimate, ci_low=ci.low, ci_high=ci.high)
    if n < FEW_QUESTIONS:
        out["note"] = (f"too few questions ({n}; at least {FEW_QUESTIONS} for a gain to say much): the interval is "
                       "honest but wide")
    return out


class _Audits:
    """The judge's outcome per answer and the usable audits, ``(question id, system) → ...``."""

    def __init__(self, judged: dict, audited: dict):
        self.judged, self.audited = judged, audited

    def corrected(self, pairs: list[tuple[tuple, tuple]], level: float) -> dict:
        """The gain over ``pairs`` ((full answer, other answer) keys) corrected by the questions whose
        two answers were both audited (PPI++ mean of the differences, module docstring)."""
        pairs = [(f, o) for f, o in pairs if f in self.judged and o in self.judged]
        n_audited = sum(f in self.audited and o in self.audited for f, o in pairs)
        out = {"figure": JUDGE_ONLY, "gain": None, "ci_low": None, "ci_high": None, "n": len(pairs),
               "n_audited": n_audited, "method": "", "lam": None, "note": "", "warnings": []}
        if not n_audited:
            out["note"] = ("judge only: no question here has both answers audited (random or active queue), so "
                           "there is nothing to correct the judge with")
            return out
        pred = [(self.judged[f] - self.judged[o] + 1) / 2 for f, o in pairs]
        human = [((self.audited[f][0] - self.audited[o][0] + 1) / 2) if f in self.audited and o in self.audited
                 else None for f, o in pairs]
        pi = [(self.audited[f][1] * self.audited[o][1]) if h is not None else None
              for (f, o), h in zip(pairs, human, strict=False)]
        est = ppi_mean(pred, design(human, pi), lam=1.0, level=level)
        low, high = max(-1.0, 2 * est.ci_low - 1), min(1.0, 2 * est.ci_high - 1)
        out.update(figure=CORRECTED, gain=2 * est.estimate - 1, method=est.method, lam=est.lam,
                   warnings=list(est.warnings))
        if np.isfinite(low) and np.isfinite(high) and high - low > 1e-9:
            out.update(ci_low=float(low), ci_high=float(high))
        else:
            out["note"] = (f"not estimable: the {n_audited} audited questions leave no spread to measure, so an "
                           "interval would have zero width")
        return out


def _groups(rows: list[dict], key: str, extra: dict, audits: _Audits, level: float) -> list[dict]:
    """One entry per group (book or entity): its gains, each with its interval at ``level``, its
    simultaneous interval over the K groups (Bonferroni, :func:`simultaneous`) and its corrected figure."""
    grouped: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        grouped[r[key]].append(r)
    each = simultaneous(len(grouped), "", level)["interval_level"]
    out = []
    for k, group in sorted(grouped.items()):
        entry = {key: k, **{name: f(group) for name, f in extra.items()}, "n_questions": len(group)}
        for other in ("retrieval", "no_context"):
            both = [g for g in group if g["full_right"] is not None and g[f"{other}_right"] is not None]
            full = np.array([g["full_right"] for g in both], dtype=float)
            rest = np.array([g[f"{other}_right"] for g in both], dtype=float)
            g_ = gain(full, rest, level=level)
            together = gain(full, rest, level=each)
            g_.update(simultaneous_level=each, simultaneous_ci_low=together["ci_low"],
                      simultaneous_ci_high=together["ci_high"])
            g_[CORRECTED] = audits.corrected([((g["question_id"], g["systems"]["full"]),
                                                 (g["question_id"], g["systems"][other])) for g in both], level)
            entry[f"full_vs_{other}"] = g_
        classified = [g["class"] for g in group if g["class"]]
        entry["n_classified"] = len(classified)
        entry["classes"] = {c: (classified.count(c) / len(classified) if classified else None) for c in CLASSES}
        out.append(entry)
    return out


def simultaneous(k: int, what: str, level: float = LEVEL) -> dict:
    """Bonferroni over the ``k`` groups shown (``what``: books or entities): each gain's interval at level
    1 − (1 − level)/k, so that the k intervals of one comparison all hold together with probability at
    least ``level``, whatever the dependence between groups (module docstring)."""
    each = 1 - (1 - level) / max(k, 1)
    if k > 1:
        statement = (f"the {k} {what}' intervals of each comparison hold together at {level:.0%} when each is "
                     f"taken at {each:.2%} (Bonferroni): the simultaneous intervals")
    else:
        statement = f"one group shown: its {level:.0%} interval is also the simultaneous one"
    return {"method": SIMULTANEOUS, "k": k, "of": what, "familywise_level": level, "interval_level": each,
            "statement": statement}


def benchmark_rows(result: dict, provenance: dict) -> list[dict]:
    """The harder subset to export: ``needs-full-book`` questions (none memorised by construction),
    with their references, book, evidence span and where they came from."""
    return [{"question_id": r["question_id"], "document_id": r["document_id"], "title": r["title"],
             "question": r["question"], "references": r["references"], "entity": r["entity"],
             "evidence_start": r["evidence_start"], "evidence_end": r["evidence_end"],
             "provenance": provenance}
            for r in result["questions"] if r["class"] == "needs-full-book"]
