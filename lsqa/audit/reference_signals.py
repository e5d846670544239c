"""The evidence about one NarrativeQA reference that goes beyond word matching: how far the
systems fall short of what their abilities predict, what the story's summary says, and what an LLM
reference check said. ``lsqa.audit.reference_errors`` puts them in the triage list beside the
older columns and combines them.

- **Ability-weighted consensus.** Every independent system's answer has a response to each
  reference (``answer_response``: the larger of the share of the reference's words in it and its
  ground-truth judges' acceptance). An item-response model (``lsqa.judging.item_response``) is
  fitted over the whole workspace to the answers' responses to their *question* (the larger of
  the two references': an answer is right when it matches either, paper §5.2), giving each
  system an ability and each question a difficulty. A reference's ``systems_contradict`` is the
  mean over the systems of expected agreement × disagreement, σ(θ_s − b_q) · (1 − y): the
  agreement the fit expected and did not get. A strong system that misses the reference of an
  easy question counts almost fully, a weak system's miss or a miss on a hard question little.
- **The summary.** ``summary_support``: the largest share of the reference's content words in one
  sentence of the summary, with that sentence; ``question_in_summary``: the same for the question.
- **The LLM reference check** (judge kind ``reference-check``): ``llm_accepts`` is the share of its
  verdicts saying the question is answerable and the reference answers it, with the evidence it
  quoted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from statistics import fmean

from lsqa.judging.item_response import RaschFit, fit_rasch
from lsqa.text.sentence_support import best_sentence

AGREES = 0.5   # a response at or above this counts as the system agreeing with the reference (shown)


def answer_response(match: float, verdicts: list[bool]) -> float:
    """One answer's agreement with one reference: the larger of its word match and its ground-truth
    judges' acceptance (either reading confirms, as ``systems_confirm`` does for the mean)."""
    return max(match, fmean(verdicts)) if verdicts else match


def fit_abilities(responses: dict[tuple[str, str], dict[str, float]]) -> RaschFit:
    """The item-response fit over ``{(question id, system): {reference: response}}``: one response per
    answer, to its question (the larger of its references')."""
    return fit_rasch((system, qid, max(by_ref.values())) for (qid, system), by_ref in responses.items() if by_ref)


@dataclass(frozen=True)
class Contradiction:
    value: float                 # in [0, 1]; see the module docstring
    systems: list[dict]          # per system, strongest first: system, ability, expected, agrees


def contradiction(fit: RaschFit, question_id: str, responses: dict[str, float]) -> Contradiction | None:
    """The agreement with one reference that the systems' abilities and the question's difficulty led
    to expect and that did not come (``responses``: system → response to this reference)."""
    if not responses:
        return None
    detail = [{"system": s, "ability": round(fit.typical_share(s), 2),
               "expected": round(fit.expected(s, question_id), 2), "agrees": round(y, 2)}
              for s, y in responses.items()]
    detail.sort(key=lambda d: (-d["ability"], d["system"]))
    missing = fmean(fit.expected(s, question_id) * (1.0 - y) for s, y in responses.items())
    return Contradiction(missing, detail)


def systems_line(systems: list[dict]) -> str:
    """Who contradicts and who agrees, with each system's ability (its share right on a question of
    typical difficulty)."""
    against = [f"{d['system']} ({d['ability']:.2f})" for d in systems if d["agrees"] < AGREES]
    for_ = [f"{d['system']} ({d['ability']:.2f})" for d in systems if d["agrees"] >= AGREES]
    parts = ([f"contradict: {', '.join(against)}"] if against else []) + ([f"agree: {', '.join(for_)}"] if for_ else [])
    return "; ".join(parts)


def summary_evidence(reference: str, question: str, summary: str) -> dict:
    """``summary_support``, ``summary_sentence``, ``question_in_summary`` and ``question_sentence``
    (None and "" when the story has no summary)."""
    if not summary.strip():
        return {"summary_support": None, "summary_sentence": "", "question_in_summary": None, "question_sentence": ""}
    ref, q = best_sentence(reference, summary), best_sentence(question, summary)
    return {"summary_support": round(ref.share, 3), "summary_sentence": ref.sentence,
            "question_in_summary": round(q.share, 3), "question_sentence": q.sentence}


def llm_evidence(checks: list[dict]) -> dict:
    """``llm_accepts`` (share of the checks saying the question is answerable and the reference answers
    it; None without checks) and ``llm_evidence`` (each check's judge, verdict and first quote)."""
    if not checks:
        return {"llm_accepts": None, "llm_evidence": ""}
    accepts = [c["label"] == "yes" and c["answerable"] != "no" for c in checks]
    lines = []
    for c in checks:
        quotes = json.loads(c["evidence"] or "[]")
        verdict = "answers" if c["label"] == "yes" else "does not answer"
        unanswerable = "; question not answerable" if c["answerable"] == "no" else ""
        lines.append(f"{c['judge']}: {verdict}{unanswerable}" + (f" — “{quotes[0]}”" if quotes else ""))
    return {"llm_accepts": round(fmean(accepts), 3), "llm_evidence": " | ".join(lines)}
