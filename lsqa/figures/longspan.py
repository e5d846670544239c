"""The long-span analysis of a workspace (``lsqa longspan``, the Corpus page's Long span tab): which
questions need the whole book, read from the workspace (systems, answers, verdicts, audits, the
books' story bounds and the quotes a judge cited); the classes, gains and intervals are
``lsqa.stats.longspan``'s.
"""

from __future__ import annotations

import json
from pathlib import Path

from lsqa import store
from lsqa.errors import NoVerdicts
from lsqa.figures.analysis import answer_labels
from lsqa.figures.corrected import answer_audits
from lsqa.stats.longspan import (
    LEVEL,
    ROLES,
    LongSpanRefused,
    _Audits,
    _classified_count,
    _fraction,
    _groups,
    candidate_systems,
    choose_judge,
    classify,
    simultaneous,
    system_per_question,
)
from lsqa.store import corpus as corpus_store
from lsqa.store import longspan as longspan_store
from lsqa.store import results as results_store
from lsqa.text.highlight import find_evidence
from lsqa.vocabulary import BINARY


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


def mention_fractions(workspace: Path, document_id: str, entity_id: str) -> list[float]:
    """Where an entity's mentions lie, as the same fractions of the story as the evidence spans."""
    with store.connect(workspace) as con:
        bounds = longspan_store.story_bounds(con, [document_id]).get(document_id)
        mentions = corpus_store.entity_mentions(con, entity_id)
    return [_fraction(start, bounds) for start, _, _ in mentions] if bounds else []
