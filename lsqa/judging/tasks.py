"""Auto-raters' tasks: what a judge is asked, and how its answer becomes a stored verdict.

One builder per way of asking (each judge kind's record in ``lsqa.judging.kinds`` names its own):

- ``absolute_tasks``: one answer against the book or BM25 passages retrieved with the question and
  the answer as query (AutoAIS, paper §3.1, §5.1, Figs. 12, 19);
- ``pairwise_tasks``: side by side (§3.2, Figs. 13, 20) over all system pairs on one seeded sample
  of ``c`` questions, the order shown randomised per comparison and recorded, optionally both;
- ``groundtruth_tasks``: yes/no against each usable NarrativeQA reference (§5.2, Fig. 17);
- ``groundtruth_pairwise_tasks``: side by side given a reference (Fig. 18);
- ``similarity_tasks`` + ``similarity_rate``: cosine similarity of sentence embeddings to the
  references (§5.2 baseline), rated on this machine without a model call;
- ``reference_check_tasks``: each NarrativeQA reference itself checked against the story's summary
  and, if the judge reads any, the book's passages (no system's answer in it).

``yes_no_tasks`` is the generic one-answer builder a new kind can use with its own prompt values.
Building a task is pure given its inputs; the pipeline sends the requests and stores the rows.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from lsqa.config.study import JudgeSpec, SystemSpec
from lsqa.corpus.contexts import BookContexts, ContextTooLong
from lsqa.llm import LLMRequest
from lsqa.prompting import parsers
from lsqa.prompting import templates as prompts
from lsqa.store.verdict_ids import judgment_id
from lsqa.vocabulary import FAMILIES, PAIRWISE, swap_pairwise

if TYPE_CHECKING:
    from lsqa.judging.kind_record import JudgeKind


@dataclass(frozen=True)
class TaskInputs:
    """What a study gives every task builder."""

    questions: list[dict]          # the questions in the study's scope
    sampled: list[dict]            # the c questions every system pair is compared on (§3.2)
    answers: dict                  # (question id, system name) → answer text
    systems: list[SystemSpec]
    books: BookContexts
    seed: int


@dataclass
class JudgeTask:
    """One verdict to obtain: the request, and how to turn its completion into a judgments row.

    ``request`` may be given as a function that renders it: a full-book request is built when it
    is read and not kept (a paper-scale study has 4,200 of them, 6.6 MB of prompt each in memory:
    28 GB if all were held at once). ``needs_call`` and ``mode`` say what a task is without
    rendering it."""

    key: dict                      # judge, kind, question_id, system_a, system_b, shown_order, reference
    family: str                    # the kind's (vocabulary.PAIRWISE | BINARY), stored with the verdict
    _request: LLMRequest | Callable[[], LLMRequest] | None
    prompt: prompts.Prompt | None
    ready_row: dict | None = None  # set when no call is needed (e.g. the context does not fit)
    mode: str = "online"
    local: dict = field(default_factory=dict)  # what a kind rated on this machine reads (no request)

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"a task's family is one of {', '.join(FAMILIES)}, not {self.family!r}")

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
        return {"id": self.id, **self.key, "family": self.family, "label": label, "raw_label": raw_label or "", "score": score,
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
        if self.family == PAIRWISE and self.key["shown_order"] == "ba":
            label = swap_pairwise(label)  # the judge's "A" was system_b
        return self.row(status="ok", label=label, raw_label=parsed.label or "", evidence=parsed.evidence,
                        raw=parsed.raw, call_key=call_key, extra=parsed.details or None)


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


def _request(judge: JudgeSpec, prompt: prompts.Prompt, values: dict, contexts: tuple[str, ...] = ()) -> LLMRequest:
    return prompts.request(prompt, judge.model, judge.params, prompt_caching=judge.prompt_caching, mode=judge.mode,
                           contexts=contexts, **values)


def _key(kind: JudgeKind, judge: JudgeSpec, question: dict, system_a: str, system_b: str = "",
         shown_order: str = "ab", reference: str = "") -> dict:
    return dict(judge=judge.name, kind=kind.name, question_id=question["id"], system_a=system_a, system_b=system_b,
                shown_order=shown_order, reference=reference)


def _context_task(kind: JudgeKind, judge: JudgeSpec, key: dict, question: dict, books: BookContexts, query: str,
                  build: Callable[[str], dict]) -> JudgeTask:
    prompt = kind.load_prompt(judge, question)
    try:
        ctx = books.context_for(question["document_id"], judge.context, query, max_tokens=judge.max_context_tokens)
    except ContextTooLong as exc:
        task = JudgeTask(key, kind.family, None, prompt)
        task.ready_row = task.row(status="error", extra={"error": str(exc)})
        return task
    return JudgeTask(key, kind.family, lambda: _request(judge, prompt, build(ctx.text), ctx.pieces), prompt,
                     mode=judge.mode)


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


def absolute_tasks(kind: JudgeKind, judge: JudgeSpec, inputs: TaskInputs) -> list[JudgeTask]:
    """AutoAIS on every answer, with the book (or passages for question + answer) as context (Figs. 12, 19)."""
    tasks = []
    for q, s, answer in _answered(inputs.questions, inputs.answers, inputs.systems):
        tasks.append(_context_task(kind, judge, _key(kind, judge, q, s.name), q, inputs.books,
                                   f"{q['text']} {answer}",
                                   lambda ctx, q=q, a=answer: {"context": ctx, "question": q["text"], "answer": a}))
    return tasks


def yes_no_tasks(values: Callable[[dict, str], dict]) -> Callable:
    """A builder for a kind that rates each answer alone with its own prompt: ``values(question,
    answer)`` gives the prompt's placeholders. No book context, no reference (a new kind's start)."""
    def build(kind: JudgeKind, judge: JudgeSpec, inputs: TaskInputs) -> list[JudgeTask]:
        tasks = []
        for q, s, answer in _answered(inputs.questions, inputs.answers, inputs.systems):
            prompt = kind.load_prompt(judge, q)
            tasks.append(JudgeTask(_key(kind, judge, q, s.name), kind.family,
                                   _request(judge, prompt, values(q, answer)), prompt, mode=judge.mode))
        return tasks
    return build


def _compared(questions: list[dict], answers: dict, systems: list[SystemSpec]):
    """(question, system_a, system_b) for every pair of systems (names sorted) that both answered."""
    names = sorted(s.name for s in systems)
    for q in questions:
        for a, b in itertools.combinations(names, 2):
            if (q["id"], a) in answers and (q["id"], b) in answers:
                yield q, a, b


def pairwise_tasks(kind: JudgeKind, judge: JudgeSpec, inputs: TaskInputs) -> list[JudgeTask]:
    """Side by side with the book (or passages for question + both answers) as context (Figs. 13, 20)."""
    tasks, answers = [], inputs.answers
    for q, a, b in _compared(inputs.sampled, answers, inputs.systems):
        for order in shown_orders(judge, inputs.seed, q["id"], a, b):
            first, second = answers[(q["id"], a)], answers[(q["id"], b)]
            if order == "ba":
                first, second = second, first
            tasks.append(_context_task(
                kind, judge, _key(kind, judge, q, a, b, order), q, inputs.books, f"{q['text']} {first} {second}",
                lambda ctx, q=q, f=first, s=second: {"context": ctx, "question": q["text"],
                                                     "system_answer_A": f, "system_answer_B": s}))
    return tasks


def groundtruth_pairwise_tasks(kind: JudgeKind, judge: JudgeSpec, inputs: TaskInputs) -> list[JudgeTask]:
    """Side by side given a reference answer instead of the book (Fig. 18)."""
    by_name = {s.name: s for s in inputs.systems}
    tasks, answers = [], inputs.answers
    for q, a, b in _compared(inputs.sampled, answers, inputs.systems):
        usable = [r for r in _references(judge, q, by_name[a]) if r in _references(judge, q, by_name[b])]
        if not usable:
            continue
        ref = usable[0]
        prompt = kind.load_prompt(judge, q)
        for order in shown_orders(judge, inputs.seed, q["id"], a, b):
            first, second = answers[(q["id"], a)], answers[(q["id"], b)]
            if order == "ba":
                first, second = second, first
            values = {"question": q["text"], "answer": q[f"reference_{ref}"], "system_answer_A": first,
                      "system_answer_B": second}
            tasks.append(JudgeTask(_key(kind, judge, q, a, b, order, ref), kind.family,
                                   _request(judge, prompt, values), prompt, mode=judge.mode))
    return tasks


def groundtruth_tasks(kind: JudgeKind, judge: JudgeSpec, inputs: TaskInputs) -> list[JudgeTask]:
    """Yes/no against each reference the answer may be compared with (Fig. 17): one verdict per reference."""
    tasks = []
    for q, s, answer in _answered(inputs.questions, inputs.answers, inputs.systems):
        for ref in _references(judge, q, s):
            prompt = kind.load_prompt(judge, q)
            values = {"question": q["text"], "a1": q[f"reference_{ref}"], "a2": answer}
            tasks.append(JudgeTask(_key(kind, judge, q, s.name, reference=ref), kind.family,
                                   _request(judge, prompt, values), prompt, mode=judge.mode))
    return tasks


def similarity_tasks(kind: JudgeKind, judge: JudgeSpec, inputs: TaskInputs) -> list[JudgeTask]:
    """One task per answer with a usable reference; ``similarity_rate`` scores those still to do."""
    tasks = []
    for q, s, answer in _answered(inputs.questions, inputs.answers, inputs.systems):
        refs = _references(judge, q, s)
        if refs:
            tasks.append(JudgeTask(_key(kind, judge, q, s.name), kind.family, None, None,
                                   local={"answer": answer, "references": [q[f"reference_{r}"] for r in refs],
                                          "used": refs}))
    return tasks


def similarity_rate(kind: JudgeKind, judge: JudgeSpec, tasks: list[JudgeTask]) -> list[dict]:
    """The §5.2 semantic-similarity baseline: best cosine to a reference, yes above the threshold."""
    from lsqa.judging import similarity

    if not tasks:
        return []  # the encoder is not even loaded
    threshold = judge.threshold if judge.threshold is not None else similarity.DEFAULT_THRESHOLD
    flat_answers = [t.local["answer"] for t in tasks for _ in t.local["references"]]
    flat_refs = [ref for t in tasks for ref in t.local["references"]]
    scores = similarity.similarity(flat_answers, flat_refs)
    rows, i = [], 0
    for t in tasks:
        n = len(t.local["references"])
        best = float(max(scores[i:i + n]))
        i += n
        rows.append(t.row(status="ok", label="yes" if best >= threshold else "no", raw_label=f"{best:.4f}",
                          score=best, extra={"model": judge.model, "threshold": threshold,
                                             "references": t.local["used"]}))
    return rows


def reference_check_tasks(kind: JudgeKind, judge: JudgeSpec, inputs: TaskInputs) -> list[JudgeTask]:
    """Each usable NarrativeQA reference of the questions in scope, checked on its own: the
    story's summary, then the book as the judge's ``context`` says (none: the summary alone, as
    LiteraryQA's check; retrieval: BM25 passages for the question and the reference; full: the whole
    book). A question whose story has no summary is left out when the judge reads nothing else."""
    tasks = []
    for q in inputs.questions:
        doc = inputs.books.document(q["document_id"])
        summary = (doc.get("summary") or "").strip()
        if not summary and judge.context.kind == "none":
            continue
        for ref in _references(judge, q, None):
            key = _key(kind, judge, q, "", reference=ref)
            values = {"question": q["text"], "answer": q[f"reference_{ref}"]}
            prompt = kind.load_prompt(judge, q)
            try:
                ctx = inputs.books.context_for(q["document_id"], judge.context, f"{q['text']} {values['answer']}",
                                               max_tokens=judge.max_context_tokens)
            except ContextTooLong as exc:
                task = JudgeTask(key, kind.family, None, prompt)
                task.ready_row = task.row(status="error", extra={"error": str(exc)})
                tasks.append(task)
                continue
            parts = [f"Summary of the story:\n{summary}"] if summary else []
            if ctx.text:
                parts.append(f"Passages from the story:\n{ctx.text}")
            context = "\n\n".join(parts)
            pieces = ((summary,) if summary else ()) + ctx.pieces
            tasks.append(JudgeTask(key, kind.family,
                                   lambda c=context, v=values, p=prompt, pieces=pieces: _request(judge, p, {"context": c, **v},
                                                                                               pieces),
                                   prompt, mode=judge.mode))
    return tasks
