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
with an inclusion probability: ``lsqa.stats.corrected_report``), a gain is the mean of per-question
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

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from lsqa import store
from lsqa.errors import LsqaError, NoVerdicts
from lsqa.judging import kinds
from lsqa.stats.analysis import answer_labels
from lsqa.stats.corrected import design, ppi_mean
from lsqa.stats.corrected_report import answer_audits
from lsqa.stats.ranking import paired_difference_ci
from lsqa.store import corpus as corpus_store
from lsqa.store import longspan as longspan_store
from lsqa.store import results as results_store
from lsqa.text.highlight import find_evidence
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


def _cited_spans(con, evidence_judge: str | None, systems: list[str], bounds: dict[str, dict]) -> dict:
    """question id → (first, last) offset of the cited quotes found in the book."""
    if not evidence_judge:
        return {}
    rows = longspan_store.cited_evidence(con, evidence_judge, systems)
    texts: dict[str, str] = {}
    out: dict[str, tuple[int, int]] = {}
    for r in rows:
        doc = r["document_id"]
        if doc not in texts:
            texts[doc] = longspan_store.book_text(con, doc)
        b = bounds.get(doc)
        if not texts[doc] or b is None:
            continue
        try:
            quotes = [str(q) for q in json.loads(r["evidence"])]
        except (json.JSONDecodeError, TypeError):
            quotes = [r["evidence"]]
        for q in quotes:
            for m in find_evidence(texts[doc], q, b["story_start"], b["story_end"]):
                lo, hi = out.get(r["question_id"], (m.start, m.end))
                out[r["question_id"]] = (min(lo, m.start), max(hi, m.end))
    return out


def _evidence_judge(con, judge: str, named: str | None) -> str | None:
    with_evidence = longspan_store.judges_with_evidence(con)
    if named:
        if named not in with_evidence:
            raise LongSpanRefused(f"--evidence-judge {named!r} cites no evidence here; use one of "
                                  f"{', '.join(with_evidence) or '(none: no judge quoted the book)'}")
        return named
    return judge if judge in with_evidence else (with_evidence[0] if with_evidence else None)


def analyse(workspace: Path, *, judge: str | None = None, no_context: str | None = None,
            retrieval: str | None = None, full: str | None = None, evidence_judge: str | None = None,
            use_overrides: bool = False, documents: list[str] | None = None, level: float = LEVEL) -> dict:
    """The long-span analysis of a workspace, or of the books ``documents`` only (module docstring).

    Systems not named are chosen per question from their context settings (a study may give one book
    to one full-book system and another to another): ``systems`` lists, per role, the systems used,
    and each question says which answered it. Returns ``{"judge", "evidence_judge", "systems":
    {"no_context": [...], "retrieval": [...], "full": [...]}, "questions": [...], "by_document": [...],
    "by_entity": [...], "simultaneous": {"by_document": {...}, "by_entity": {...}}, "audits": {...}}``;
    each group's ``full_vs_retrieval`` / ``full_vs_no_context`` is :func:`gain`'s with its simultaneous
    interval and its ``corrected`` figure (module docstring)."""
    with store.connect(workspace) as con:
        contexts = {s["name"]: s["context"] for s in results_store.list_systems(con)}
        candidates = candidate_systems(contexts, {"no_context": no_context, "retrieval": retrieval, "full": full})
        all_candidates = sorted({s for names in candidates.values() for s in names})
        judge_rows = results_store.judges(con)
        questions = longspan_store.questions_answered_by(con, all_candidates)
        per_question = system_per_question(candidates, longspan_store.answered(con, all_candidates))
        if documents is not None:
            questions = [q for q in questions if q["document_id"] in set(documents)]
    if judge is None:  # the judge that says the most about these questions (module docstring)
        classified = {r["judge"]: _classified_count(answer_labels(workspace, r["judge"], use_overrides=use_overrides),
                                                    questions, per_question)
                      for r in judge_rows if r["family"] == BINARY}
        judge = choose_judge(judge_rows, None, classified)
    else:
        judge = choose_judge(judge_rows, judge)
    with store.connect(workspace) as con:
        evidence_judge = _evidence_judge(con, judge, evidence_judge)
        bounds = longspan_store.story_bounds(con, sorted({q["document_id"] for q in questions}))
        cited = _cited_spans(con, evidence_judge, all_candidates, bounds)
    labels = answer_labels(workspace, judge, use_overrides=use_overrides)
    rows = []
    for q in questions:
        used = per_question.get(q["question_id"], {})
        right = {role: (None if (lab := labels.get((q["question_id"], used.get(role)))) is None else lab == "yes")
                 for role in ROLES}
        b = bounds.get(q["document_id"])
        has_text = bool(b and b["has_text"])
        spans = []
        cited_span = cited.get(q["question_id"]) if has_text else None
        if cited_span:
            spans.append(cited_span)
        mentions = (q["mentions_first"], q["mentions_last"]) if has_text and q["mentions_first"] is not None else None
        if mentions:
            spans.append(mentions)
        rows.append({
            "question_id": q["question_id"], "document_id": q["document_id"],
            "title": b["title"] if b else "", "question": q["question"],
            "references": [r for r in (q["reference_1"], q["reference_2"]) if r],
            "entity": q["entity"], "entity_id": q["entity_id"], "systems": {role: used.get(role) for role in ROLES},
            "no_context_right": right["no_context"], "retrieval_right": right["retrieval"],
            "full_right": right["full"],
            "class": classify(right["no_context"], right["retrieval"], right["full"]),
            "evidence_start": _fraction(min(s[0] for s in spans), b) if spans else None,
            "evidence_end": _fraction(max(s[1] for s in spans), b) if spans else None,
            "cited_start": _fraction(cited_span[0], b) if cited_span else None,
            "cited_end": _fraction(cited_span[1], b) if cited_span else None,
            "mentions_start": _fraction(mentions[0], b) if mentions else None,
            "mentions_end": _fraction(mentions[1], b) if mentions else None,
        })
    if not any(r["class"] for r in rows):
        raise NoVerdicts(f"judge {judge!r} has not judged the answers of a no-context, a retrieval and a full-book "
                         f"system on any question{' of this book' if documents else ''}: run it on them first")
    systems = {role: sorted({r["systems"][role] for r in rows if r["systems"][role]}) for role in ROLES}
    judged, audited, info = answer_audits(workspace, judge)
    audits = _Audits(judged, audited)
    by_document = _groups(rows, "document_id", {"title": lambda g: g[0]["title"]}, audits, level)
    by_entity = _groups([r for r in rows if r["entity_id"]], "entity_id",
                        {"entity": lambda g: g[0]["entity"], "document_id": lambda g: g[0]["document_id"]},
                        audits, level)
    together = {"by_document": simultaneous(len(by_document), "books", level),
                "by_entity": simultaneous(len(by_entity), "entities", level)}
    return {"judge": judge, "evidence_judge": evidence_judge, "systems": systems, "questions": rows,
            "by_document": by_document, "by_entity": by_entity, "simultaneous": together,
            "audits": {"design": info["design"], "n_usable_audits": info["n_usable_audits"]}}


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
              for (f, o), h in zip(pairs, human)]
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


def mention_fractions(workspace: Path, document_id: str, entity_id: str) -> list[float]:
    """Where an entity's mentions lie, as the same fractions of the story as the evidence spans."""
    with store.connect(workspace) as con:
        bounds = longspan_store.story_bounds(con, [document_id]).get(document_id)
        mentions = corpus_store.entity_mentions(con, entity_id)
    return [_fraction(start, bounds) for start, _, _ in mentions] if bounds else []


def benchmark_rows(result: dict, provenance: dict) -> list[dict]:
    """The harder subset to export: ``needs-full-book`` questions (none memorised by construction),
    with their references, book, evidence span and where they came from."""
    return [{"question_id": r["question_id"], "document_id": r["document_id"], "title": r["title"],
             "question": r["question"], "references": r["references"], "entity": r["entity"],
             "evidence_start": r["evidence_start"], "evidence_end": r["evidence_end"],
             "provenance": provenance}
            for r in result["questions"] if r["class"] == "needs-full-book"]
