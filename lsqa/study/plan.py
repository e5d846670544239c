"""``lsqa plan``: what a study will call, and cost, before the first call.

The plan builds the requests the run would send with the pipeline's own task builders
(:func:`lsqa.study.pipeline.answer_tasks`, :func:`~lsqa.study.pipeline.judge_tasks`,
:func:`~lsqa.study.pipeline.generation_tasks`), skips what is stored already exactly as the run does,
and looks every request up in the call cache: so for work whose inputs exist (imported or
generated questions, stored answers), the plan's calls are the run's requests one for one.

Work whose inputs do not exist yet is planned with stand-ins, and its calls are all new:
questions still to be generated (``entities × questions_per_entity`` per book), answers still to
be made (a stand-in answer of ``STAND_IN_ANSWER_TOKENS`` tokens in the judge prompts). Those
counts assume every earlier call succeeds; an entity list not yet extracted counts ``entities``
calls per book. Two systems that give the same answer make one judge call for both in the run,
which a plan made before the answers exist cannot foresee.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lsqa import store
from lsqa.config.study import RunConfig, load_run_config
from lsqa.llm import LLMRequest, cache_key, pricing
from lsqa.store import llm_calls
from lsqa.study import pipeline
from lsqa.study.scope import StudyScope, study_scope

STAND_IN_ANSWER_TOKENS = 50
_STAND_IN_ANSWER = " ".join(["answer"] * STAND_IN_ANSWER_TOKENS)


@dataclass
class StagePlan:
    """One stage × model. ``input_tokens``, ``max_output_tokens`` and ``cost_usd`` are for the
    new calls (cached ones cost nothing); ``cost_usd`` None = no price in litellm's table (or no
    known output bound); ``max_output_tokens`` None = no limit known."""

    stage: str
    model: str
    calls: int = 0
    cached: int = 0
    input_tokens: int = 0
    max_output_tokens: int | None = 0
    cost_usd: float | None = 0.0
    tokens_estimated: bool = False     # not the model's own count (see lsqa.llm.pricing)
    calls_estimated: bool = False      # some calls stand for work whose inputs do not exist yet
    _keys: list = field(default_factory=list, repr=False)

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items()
                if k in ("stage", "model", "calls", "cached", "input_tokens", "max_output_tokens", "cost_usd")}


@dataclass
class StudyPlan:
    stages: list[StagePlan]

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.stages)

    @property
    def cached(self) -> int:
        return sum(s.cached for s in self.stages)

    @property
    def new_calls(self) -> int:
        return self.calls - self.cached

    @property
    def input_tokens(self) -> int:
        return sum(s.input_tokens for s in self.stages)

    @property
    def unpriced_calls(self) -> int:
        return sum(s.calls - s.cached for s in self.stages if s.cost_usd is None)

    @property
    def cost_usd(self) -> float | None:
        """The sum of the priced stages; None when no new call has a price."""
        known = [s.cost_usd for s in self.stages if s.cost_usd is not None]
        if not known and self.unpriced_calls:
            return None
        return sum(known)

    def to_dict(self) -> dict:
        return {"stages": [s.to_dict() for s in self.stages], "calls": self.calls, "cached": self.cached,
                "input_tokens": self.input_tokens, "cost_usd": self.cost_usd, "unpriced_calls": self.unpriced_calls}

    def lines(self) -> list[str]:
        out = [f"{'stage':<22} {'model':<28} {'calls':>7} {'cached':>7} {'new':>7} {'input tokens':>14} "
               f"{'max output':>11} {'cost (USD)':>11}"]
        for s in self.stages:
            cost = "unknown" if s.cost_usd is None else f"{s.cost_usd:.4f}"
            out_tokens = "unknown" if s.max_output_tokens is None else f"{s.max_output_tokens:,}"
            tokens = f"{s.input_tokens:,}" + ("~" if s.tokens_estimated else "")
            calls = f"{s.calls:,}" + ("~" if s.calls_estimated else "")
            out.append(f"{s.stage:<22} {s.model:<28} {calls:>7} {s.cached:>7,} {s.calls - s.cached:>7,} "
                       f"{tokens:>14} {out_tokens:>11} {cost:>11}")
        total = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        out.append(f"total: {self.calls:,} calls, {self.cached:,} cached, {self.new_calls:,} new, "
                   f"{self.input_tokens:,} input tokens, cost {total}"
                   + (f" + {self.unpriced_calls:,} calls without a price" if self.unpriced_calls else ""))
        if any(s.tokens_estimated for s in self.stages):
            out.append("~ tokens: estimated at 4 characters per token (litellm has no tokenizer for the model)")
        if any(s.calls_estimated for s in self.stages):
            out.append("~ calls: include work whose inputs the run has yet to make (questions or answers); "
                       "counted as if every earlier call succeeds")
        return out


class _Planner:
    def __init__(self, workspace: Path, config: RunConfig):
        self.workspace, self.config = workspace, config
        self.counter = pricing.TokenCounter()
        self.rows: dict[tuple[str, str], StagePlan] = {}
        self._prefixes_seen: set[tuple[str, str]] = set()  # (model, sha256 of a cached prefix)

    def row(self, stage: str, model: str) -> StagePlan:
        key = (stage, model)
        if key not in self.rows:
            self.rows[key] = StagePlan(stage, model, tokens_estimated=not pricing.counts_exactly(model))
        return self.rows[key]

    def add(self, stage: str, request: LLMRequest, *, stand_in: bool = False) -> None:
        """Count ``request``. Only what the plan needs of it is kept (its key, tokens and prefix):
        a paper-scale plan sees 4,200 full-book requests of 6.6 MB each in memory."""
        row = self.row(stage, request.model)
        row.calls += 1
        row.calls_estimated |= stand_in
        row._keys.append(_Planned(None if stand_in else cache_key(request), request.model, request.mode,
                                  self.counter.request_tokens(request), pricing.max_output_tokens(request),
                                  *_cache_prefix(request)))

    def estimate(self, stage: str, model: str, calls: int, input_tokens: int, request_params: dict) -> None:
        """Calls whose requests cannot be built yet (entities not extracted)."""
        row = self.row(stage, model)
        row.calls += calls
        row.calls_estimated = True
        stand_in = LLMRequest(model, [{"role": "user", "content": ""}], dict(request_params))
        row._keys.extend([_Planned(None, model, stand_in.mode, input_tokens,
                                   pricing.max_output_tokens(stand_in), None, 0.0)] * calls)

    def _cached_prefix_tokens(self, planned: "_Planned") -> int:
        """Input tokens the provider will read from its prompt cache: with
        ``prompt_caching`` the book is a shared prefix, so every call on it after the first one of
        its model pays the cached rate for it. The prefix's share of the tokens is estimated by its
        share of the characters."""
        if planned.prefix is None:
            return 0
        prefix = (planned.model, planned.prefix)
        if prefix not in self._prefixes_seen:
            self._prefixes_seen.add(prefix)  # the first call writes the cache at the full rate
            return 0
        return int(planned.tokens * planned.prefix_share)

    def finish(self) -> StudyPlan:
        """Look the requests up in the cache (a repeated request is cached after its first), price the new ones."""
        keys = [k.key for row in self.rows.values() for k in row._keys if k.key is not None]
        hits: set[str] = set()
        if self.config.use_cache and keys:
            with store.connect(self.workspace) as con:
                hits = set(llm_calls.cached_ok(con, keys))
        seen: set[str] = set()
        for row in self.rows.values():
            outputs, costs = [], []
            for planned in row._keys:
                key = planned.key
                if key is not None and (key in hits or key in seen):
                    row.cached += 1
                    continue
                if key is not None:
                    seen.add(key)
                row.input_tokens += planned.tokens
                outputs.append(planned.max_output)
                costs.append(pricing.call_cost(planned.model, planned.tokens, planned.max_output,
                                               cached_input_tokens=self._cached_prefix_tokens(planned),
                                               batch=planned.mode == "batch"))
            row.max_output_tokens = None if any(o is None for o in outputs) else sum(outputs)
            row.cost_usd = None if any(c is None for c in costs) else sum(costs)
            row._keys = []
        return StudyPlan(list(self.rows.values()))


@dataclass(frozen=True)
class _Planned:
    """What the plan keeps of one request."""

    key: str | None            # None: a stand-in (its inputs do not exist yet), always a new call
    model: str
    mode: str
    tokens: int
    max_output: int | None
    prefix: str | None         # sha256 of the shared prefix the provider caches, if any
    prefix_share: float        # the prefix's share of the prompt's characters


def _cache_prefix(request: LLMRequest) -> tuple[str | None, float]:
    """(sha256 of the request's cacheable prefix, its share of the prompt), or (None, 0.0)."""
    chars = request.cache_prefix_chars
    if chars <= 0 or not request.messages:
        return None, 0.0
    content = next((m.get("content") for m in request.messages if m.get("role") == "user"), None)
    if not isinstance(content, str) or not content:
        return None, 0.0
    return hashlib.sha256(content[:chars].encode()).hexdigest(), min(1.0, chars / len(content))


def _planned_questions(planner: _Planner, scope: StudyScope, questions: list[dict]) -> list[dict]:
    """Question generation's calls, and the questions the run will answer: ``questions`` (those
    stored) and stand-ins for those still to be generated."""
    from lsqa.config.settings import load_settings
    from lsqa.corpus import chains as chains_mod

    config, workspace, books = planner.config, planner.workspace, scope.books
    if config.questions != "generate":
        return questions
    gen = config.generation
    method = chains_mod.resolve_method(gen.entity_method, load_settings())
    have = {q["document_id"] for q in questions}
    stand_ins = []
    for doc_id in scope.doc_ids:
        if not books.has_text(doc_id):
            continue
        chains = chains_mod.top_chains(workspace, doc_id, method, gen.entities)
        if chains:
            for _, _, request in pipeline.generation_tasks(config, {doc_id: chains}, books):
                planner.add("questions", request)
        else:
            context_tokens = min(books.story_tokens(doc_id), gen.context_tokens)
            planner.estimate("questions", gen.model, gen.entities, context_tokens, gen.params)
        if doc_id not in have:
            n = gen.entities * gen.questions_per_entity
            if config.max_questions:
                n = min(n, config.max_questions)
            stand_ins.extend({"id": f"planned:{doc_id}:{i:05d}", "document_id": doc_id, "origin": "generated",
                              "text": f"What does entity number {i} of this book do in its story?",
                              "reference_1": _STAND_IN_ANSWER, "reference_2": "", "planned": True}
                             for i in range(n))
    return questions + stand_ins


def plan(workspace: str | Path, config: RunConfig | str | Path) -> StudyPlan:
    """The calls, tokens and cost of running ``config`` on ``workspace`` now. Reads only."""
    from lsqa.judging import kinds as judge_kinds
    from lsqa.judging import tasks as judges_mod
    from lsqa.store import results as results_store

    workspace = Path(workspace)
    if not isinstance(config, RunConfig):
        config = load_run_config(config)
    planner = _Planner(workspace, config)
    # Before any request is built: an unknown kind or document, or a study too large to plan, is refused.
    scope = study_scope(workspace, config)
    books = scope.books
    questions = _planned_questions(planner, scope, scope.questions())
    planned_ids = {q["id"] for q in questions if q.get("planned")}

    answers: dict[tuple[str, str], str] = {}
    stand_in_answers: set[tuple[str, str]] = set()
    if config.systems:
        tasks, _, _ = pipeline.answer_tasks(workspace, config, questions, books)
        for t in tasks:
            key = (t.question["id"], t.system.name)
            if t.request is not None:
                planner.add("answers", t.request, stand_in=t.question["id"] in planned_ids)
                answers[key] = _STAND_IN_ANSWER
                stand_in_answers.add(key)
            elif t.ready_row is not None and t.ready_row["status"] == "ok":
                answers[key] = t.ready_row["text"]
    with store.connect(workspace) as con:
        stored = results_store.answers_for(con, [q["id"] for q in questions], [s.name for s in config.systems])
    answers.update({(a["question_id"], a["system_name"]): a["text"] for a in stored if a["status"] == "ok"
                    and (a["question_id"], a["system_name"]) not in stand_in_answers})

    sampled_ids = set(judges_mod.sample_questions([q["id"] for q in questions], config.sample, config.seed))
    sampled = [q for q in questions if q["id"] in sampled_ids]
    for judge in config.judges:
        if not judge_kinds.get(judge.kind).needs_call:
            continue  # rated on this machine (e.g. an embedding model): no LLM call
        todo, _ = pipeline.judge_tasks(workspace, config, judge, questions, sampled, answers, books)
        for t in todo:
            if not t.needs_call:
                continue
            k = t.key
            stand_in = (k["question_id"] in planned_ids or (k["question_id"], k["system_a"]) in stand_in_answers
                        or (k["question_id"], k["system_b"]) in stand_in_answers)
            planner.add(f"judge:{judge.name}", t.request, stand_in=stand_in)
    return planner.finish()
