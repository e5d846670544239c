"""Auto-raters: what each judge kind is asked, and how its answer becomes a stored verdict.

- ``absolute``: AutoAIS (paper §3.1, Fig. 12; Fig. 19 for NarrativeQA): is the answer supported
  by the book (or, for a short-context judge, by BM25 passages retrieved with the question and
  the answer as query, §5.1)?
- ``pairwise``: side by side (§3.2, Fig. 13; Fig. 20 with Equal for NarrativeQA) over all system
  pairs on one seeded sample of ``c`` questions, the order shown randomised per comparison and
  recorded, optionally both orders.
- ``groundtruth``: yes/no against a NarrativeQA reference (§5.2, Fig. 17); correct if either
  reference matches.
- ``groundtruth-pairwise``: side by side given the reference (Fig. 18).
- ``similarity``: cosine similarity of sentence embeddings to the references (§5.2 baseline).

Building a task is pure given its inputs; the pipeline sends the requests and stores the rows.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from dataclasses import dataclass
from typing import Callable

from lsqa.prompting import parsers
from lsqa.prompting import templates as prompts
from lsqa.corpus.contexts import BookContexts, ContextTooLong
from lsqa.judging.ids import judgment_id
from lsqa.vocabulary import is_pairwise, swap_pairwise
from lsqa.llm import LLMRequest
from lsqa.config.study import JudgeSpec, SystemSpec

PROMPTS = {
    ("absolute", True): "nqa_autoais",
    ("absolute", False): "autoais",
    ("pairwise", True): "nqa_side_by_side",
    ("pairwise", False): "side_by_side",
    ("groundtruth", True): "groundtruth_yes_no",
    ("groundtruth", False): "groundtruth_yes_no",
    ("groundtruth-pairwise", True): "groundtruth_side_by_side",
    ("groundtruth-pairwise", False): "groundtruth_side_by_side",
}


@dataclass
class JudgeTask:
    """One verdict to obtain: the request, and how to turn its completion into a judgments row.

    ``request`` may be given as a function that renders it: a full-book request is built when it
    is read and not kept (a paper-scale study has 4,200 of them, 6.6 MB of prompt each in memory:
    28 GB if all were held at once). ``needs_call`` and ``mode`` say what a task is without
    rendering it."""

    key: dict                      # judge, kind, question_id, system_a, system_b, shown_order, reference
    _request: LLMRequest | Callable[[], LLMRequest] | None
    prompt: prompts.Prompt | None
    ready_row: dict | None = None  # set when no call is needed (e.g. the context does not fit)
    mode: str = "online"

    @property
    def request(self) -> LLMRequest | None:
        return self._request() if callable(self._request) else self._request

    @property
    def needs_call(self) -> bool:
        return self._request is not None

    @property
    def id(self) -> str:
        return judgment_id(**self.key)

    def row(self, *, status: str, label: str | None = None, raw_label: str = "", evidence=(), raw: str = "",
            call_key: str = "", score: float | None = None, extra: dict | None = None) -> dict:
        return {"id": self.id, **self.key, "label": label, "raw_label": raw_label or "", "score": score,
                "evidence": json.dumps(list(evidence)), "status": status, "raw": raw or "",
                "llm_call_key": call_key, "prompt_id": self.prompt.id if self.prompt else "",
                "prompt_version": str(self.prompt.version) if self.prompt else "",
                "extra": json.dumps(extra or {}, sort_keys=True)}

    def from_completion(self, text: str | None, ok: bool, call_key: str, error: str = "") -> dict:
        """A stored verdict from a completion. A parse failure is a status with the raw text, never a label."""
        if not ok:
            return self.row(status="error", raw=text or "", call_key=call_key, extra={"error": error})
        parsed = parsers.parse(self.prompt.output, text or "", prefill=self.prompt.prefill)
        if not parsed.ok:
            return self.row(status="parse_error", raw=parsed.raw, call_key=call_key, extra={"reason": parsed.reason})
        label = parsed.label
        if is_pairwise(self.key["kind"]) and self.key["shown_order"] == "ba":
            label = swap_pairwise(label)  # the judge's "A" was system_b
        return self.row(status="ok", label=label, raw_label=parsed.label or "", evidence=parsed.evidence,
                        raw=parsed.raw, call_key=call_key)


def sample_questions(question_ids: list[str], c: int, seed: int) -> list[str]:
    """The paper's c questions, drawn once and shared by every system pair (§3.2)."""
    ordered = sorted(question_ids)
    if c >= len(ordered):
        return ordered
    return sorted(random.Random(seed).sample(ordered, c))


def shown_orders(judge: JudgeSpec, seed: int, question_id: str, a: str, b: str) -> list[str]:
    """Both orders, or one drawn at random per comparison, reproducibly from the seed (§3.2)."""
    if judge.both_orders:
        return ["ab", "ba"]
    digest = hashlib.sha256(f"{seed}\x1f{question_id}\x1f{a}\x1f{b}".encode()).digest()
    return ["ab" if digest[0] % 2 == 0 else "ba"]


def _is_nqa(question: dict) -> bool:
    return question["origin"] == "narrativeqa"


def _request(judge: JudgeSpec, prompt: prompts.Prompt, values: dict, contexts: tuple[str, ...] = ()) -> LLMRequest:
    return prompts.request(prompt, judge.model, judge.params, prompt_caching=judge.prompt_caching, mode=judge.mode,
                           contexts=contexts, **values)


def _context_task(judge: JudgeSpec, key: dict, question: dict, books: BookContexts, query: str,
                  build: Callable[[str], dict]) -> JudgeTask:
    prompt = prompts.load_prompt(PROMPTS[(judge.kind, _is_nqa(question))], judge.prompt_version,
                                    layout=prompts.layout_for(judge.prompt_caching))
    try:
        ctx = books.context_for(question["document_id"], judge.context, query, max_tokens=judge.max_context_tokens)
    except ContextTooLong as exc:
        task = JudgeTask(key, None, prompt)
        task.ready_row = task.row(status="error", extra={"error": str(exc)})
        return task
    return JudgeTask(key, lambda: _request(judge, prompt, build(ctx.text), ctx.pieces), prompt, mode=judge.mode)


def _references(judge: JudgeSpec, question: dict, system: SystemSpec | None) -> list[str]:
    """Which references a ground-truth rater compares with: never a system's own reference."""
    wanted = ["1", "2"] if judge.reference == "both" else [judge.reference]
    own = system.context.reference if system is not None and system.context.kind == "reference" else None
    return [r for r in wanted if r != own and question.get(f"reference_{r}")]


def _answered(questions: list[dict], answers: dict, systems: list[SystemSpec]):
    """(question, system, answer) for every answer a yes/no rater should rate."""
    for q in questions:
        for s in systems:
            answer = answers.get((q["id"], s.name))
            if answer is not None:
                yield q, s, answer


def absolute_tasks(judge: JudgeSpec, questions: list[dict], answers: dict, systems: list[SystemSpec],
                   books: BookContexts) -> list[JudgeTask]:
    tasks = []
    for q, s, answer in _answered(questions, answers, systems):
        key = dict(judge=judge.name, kind="absolute", question_id=q["id"], system_a=s.name, system_b="",
                   shown_order="ab", reference="")
        tasks.append(_context_task(judge, key, q, books, f"{q['text']} {answer}",
                                   lambda ctx, q=q, a=answer: {"context": ctx, "question": q["text"], "answer": a}))
    return tasks


def _compared(questions: list[dict], answers: dict, systems: list[SystemSpec]):
    """(question, system_a, system_b) for every pair of systems (names sorted) that both answered."""
    names = sorted(s.name for s in systems)
    for q in questions:
        for a, b in itertools.combinations(names, 2):
            if (q["id"], a) in answers and (q["id"], b) in answers:
                yield q, a, b


def pairwise_tasks(judge: JudgeSpec, questions: list[dict], answers: dict, systems: list[SystemSpec],
                   books: BookContexts, seed: int) -> list[JudgeTask]:
    """Side by side with the book (or passages for question + both answers) as context (Figs. 13, 20)."""
    tasks = []
    for q, a, b in _compared(questions, answers, systems):
        for order in shown_orders(judge, seed, q["id"], a, b):
            first, second = answers[(q["id"], a)], answers[(q["id"], b)]
            if order == "ba":
                first, second = second, first
            key = dict(judge=judge.name, kind="pairwise", question_id=q["id"], system_a=a, system_b=b,
                       shown_order=order, reference="")
            tasks.append(_context_task(
                judge, key, q, books, f"{q['text']} {first} {second}",
                lambda ctx, q=q, f=first, s=second: {"context": ctx, "question": q["text"],
                                                     "system_answer_A": f, "system_answer_B": s}))
    return tasks


def groundtruth_pairwise_tasks(judge: JudgeSpec, questions: list[dict], answers: dict, systems: list[SystemSpec],
                               seed: int) -> list[JudgeTask]:
    """Side by side given a reference answer instead of the book (Fig. 18)."""
    by_name = {s.name: s for s in systems}
    tasks = []
    for q, a, b in _compared(questions, answers, systems):
        usable = [r for r in _references(judge, q, by_name[a]) if r in _references(judge, q, by_name[b])]
        if not usable:
            continue
        ref = usable[0]
        prompt = prompts.load_prompt(PROMPTS[(judge.kind, _is_nqa(q))], judge.prompt_version,
                                    layout=prompts.layout_for(judge.prompt_caching))
        for order in shown_orders(judge, seed, q["id"], a, b):
            first, second = answers[(q["id"], a)], answers[(q["id"], b)]
            if order == "ba":
                first, second = second, first
            key = dict(judge=judge.name, kind=judge.kind, question_id=q["id"], system_a=a, system_b=b,
                       shown_order=order, reference=ref)
            values = {"question": q["text"], "answer": q[f"reference_{ref}"], "system_answer_A": first,
                      "system_answer_B": second}
            tasks.append(JudgeTask(key, _request(judge, prompt, values), prompt, mode=judge.mode))
    return tasks


def groundtruth_tasks(judge: JudgeSpec, questions: list[dict], answers: dict,
                      systems: list[SystemSpec]) -> list[JudgeTask]:
    tasks = []
    for q, s, answer in _answered(questions, answers, systems):
        for ref in _references(judge, q, s):
            key = dict(judge=judge.name, kind="groundtruth", question_id=q["id"], system_a=s.name, system_b="",
                       shown_order="ab", reference=ref)
            prompt = prompts.load_prompt(PROMPTS[("groundtruth", _is_nqa(q))], judge.prompt_version,
                                    layout=prompts.layout_for(judge.prompt_caching))
            values = {"question": q["text"], "a1": q[f"reference_{ref}"], "a2": answer}
            tasks.append(JudgeTask(key, _request(judge, prompt, values), prompt, mode=judge.mode))
    return tasks


def similarity_rows(judge: JudgeSpec, questions: list[dict], answers: dict, systems: list[SystemSpec]) -> list[dict]:
    """The §5.2 semantic-similarity baseline: best cosine to a reference, yes above the threshold."""
    from lsqa.judging import similarity

    threshold = judge.threshold if judge.threshold is not None else similarity.DEFAULT_THRESHOLD
    items = [(q, s, answer, _references(judge, q, s)) for q, s, answer in _answered(questions, answers, systems)]
    items = [item for item in items if item[3]]
    if not items:
        return []
    flat_answers = [answer for _, _, answer, refs in items for _ in refs]
    flat_refs = [q[f"reference_{r}"] for q, _, _, refs in items for r in refs]
    scores = similarity.similarity(flat_answers, flat_refs)
    rows, i = [], 0
    for q, s, _, refs in items:
        best = float(max(scores[i:i + len(refs)]))
        i += len(refs)
        key = dict(judge=judge.name, kind="similarity", question_id=q["id"], system_a=s.name, system_b="",
                   shown_order="ab", reference="")
        task = JudgeTask(key, None, None)
        rows.append(task.row(status="ok", label="yes" if best >= threshold else "no", raw_label=f"{best:.4f}",
                             score=best, extra={"model": judge.model, "threshold": threshold, "references": refs}))
    return rows
