"""The paper's pipeline as resumable stages: entities → questions → answers → verdicts.

Every stage skips work already stored (answers with status ok, decided verdicts), sends the rest
through ``lsqa.llm`` (whose cache makes a re-run free: a verdict that failed to parse is parsed
again from its cached completion, so a better parser takes effect at no cost), and
writes its rows batch by batch, so a killed run loses at most one batch of row writes — and
those come back from the call cache at no cost on the next run. Each stage leaves a ``runs`` row
with calls made / cached / failed and cost.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from lsqa import llm, store
from lsqa.config import definitions
from lsqa.config.study import RunConfig, load_run_config
from lsqa.corpus.contexts import BookContexts
from lsqa.package_files import CONFIGS, shipped_folder
from lsqa.store import corpus as corpus_store
from lsqa.store import llm_calls
from lsqa.store import reference_checks as reference_checks_store
from lsqa.store import results as results_store
from lsqa.store import runs as runs_store
from lsqa.study.scope import StudyScope, study_scope

BATCH = 256
Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class StageSummary:
    stage: str
    tasks: int = 0
    written: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    calls_made: int = 0
    calls_cached: int = 0
    calls_failed: int = 0
    cached_prompt_tokens: int = 0   # prompt tokens the providers served from their prompt caches
    cost_usd: float | None = 0.0
    seconds: float = 0.0
    missing: dict[str, int] = field(default_factory=dict)  # imported system → questions it has no answer to
    verdicts_read: int = 0          # judge stages: completions parsed in this run (ok or parse_error)
    parse_errors: int = 0           # ... of which the parser could not read (stored as parse_error)
    unreadable: list[str] = field(default_factory=list)  # the first raw outputs it could not read
    over_max_tokens: int = 0        # calls whose reported completion passed their max_tokens (counted as reported)
    suspect_usage: int = 0          # calls whose reported usage was missing or impossible (counted at their worst case)
    usage_notes: list[str] = field(default_factory=list)  # ... the first few of their notes

    def add_verdicts(self, rows: list[dict]) -> None:
        """Count the verdicts parsed from completions (call failures are counted as failed calls)."""
        for row in rows:
            if row["status"] not in ("ok", "parse_error"):
                continue
            self.verdicts_read += 1
            if row["status"] == "parse_error":
                self.parse_errors += 1
                if len(self.unreadable) < 3:
                    self.unreadable.append(str(row.get("raw") or "")[:300])

    def unreadable_fails(self, share: float) -> bool:
        """All verdicts read unreadable, or more than ``share`` of them."""
        return bool(self.parse_errors) and (self.parse_errors == self.verdicts_read
                                            or self.parse_errors > share * self.verdicts_read)

    def add_results(self, results: list[llm.LLMResult]) -> None:
        # The counting of ``lsqa.llm.totals`` (and of the runs row the runner keeps): made + cached +
        # failed = requests, and only a call made without a known price makes the cost unknown.
        for r in results:
            if r.error_kind == "budget":
                continue  # not sent (the run stops: ``stopped: budget``)
            if r.cached:
                self.calls_cached += 1
            elif r.status != "ok":
                self.calls_failed += 1
                if len(self.errors) < 200:
                    self.errors.append(r.error_message or r.error_kind)
                if r.usage_note:  # answered but unreadable: charged at its worst case
                    self._suspect(r)
            else:
                self.calls_made += 1
                self.cached_prompt_tokens += r.cached_prompt_tokens or 0
                if r.usage_note:
                    self._suspect(r)
                else:
                    self._add_cost(r)

    def _suspect(self, r: llm.LLMResult) -> None:
        """A call whose usage was missing, impossible or unreadable: counted at its worst case."""
        self.suspect_usage += 1
        if len(self.usage_notes) < 3:
            self.usage_notes.append(r.usage_note)
        self._add_cost(r)

    def _add_cost(self, r: llm.LLMResult) -> None:
        self.cost_usd = None if self.cost_usd is None or r.cost_usd is None else self.cost_usd + r.cost_usd


@dataclass
class RunSummary:
    stages: list[StageSummary] = field(default_factory=list)
    seconds: float = 0.0
    stopped: str = ""          # "budget" when max_cost_usd stopped the run before a call
    stop_reason: str = ""
    max_unreadable_share: float = 0.5  # the config's: a judge stage above it fails the run
    unrecorded_calls: int = 0       # calls of the study sent and never stored (a killed run's), on its ledger ...
    unrecorded_usd: float = 0.0     # ... at their worst case

    def to_dict(self) -> dict:
        total = lambda attr: sum(getattr(s, attr) for s in self.stages)  # noqa: E731
        costs = [s.cost_usd for s in self.stages]
        return {
            "calls_made": total("calls_made"), "calls_cached": total("calls_cached"),
            "calls_failed": total("calls_failed"), "cached_prompt_tokens": total("cached_prompt_tokens"),
            "cost_usd": None if any(c is None for c in costs) else round(sum(costs), 6),
            "seconds": round(self.seconds, 2), "stopped": self.stopped or None, "stop_reason": self.stop_reason,
            "parse_errors": {s.stage: s.parse_errors for s in self.stages if s.verdicts_read},
            "over_max_tokens": total("over_max_tokens"), "suspect_usage": total("suspect_usage"),
            "unrecorded_calls": self.unrecorded_calls, "unrecorded_usd": round(self.unrecorded_usd, 6),
            "stages": [{k: v for k, v in s.__dict__.items()} for s in self.stages],
        }

    def lines(self) -> list[str]:
        d = self.to_dict()
        cost = "unknown" if d["cost_usd"] is None else f"${d['cost_usd']:.4f}"
        out = [f"{s.stage:<12} {s.written:>6} written  {s.skipped:>6} already done  calls: {s.calls_made} made, "
               f"{s.calls_cached} cached, {s.calls_failed} failed  ({s.seconds:.1f} s)" for s in self.stages]
        prompt_cache = f", {d['cached_prompt_tokens']} prompt tokens from the providers' caches" \
            if d["cached_prompt_tokens"] else ""
        out.append(f"total: {d['calls_made']} calls made, {d['calls_cached']} cached, {d['calls_failed']} failed, "
                   f"cost {cost}{prompt_cache}, {d['seconds']:.1f} s")
        for s in self.stages:
            out.extend(f"  {s.stage}: {system} has no imported answer to {n} question(s), left out for it"
                       for system, n in s.missing.items() if n)
            counts: dict[str, int] = {}
            for e in s.errors:
                counts[e] = counts.get(e, 0) + 1
            out.extend(f"  {s.stage} error ({n}×): {e}" for e, n in list(counts.items())[:5])
            if s.parse_errors:
                out.append(f"  {s.stage}: {s.parse_errors} of {s.verdicts_read} verdict(s) unreadable (parse_error)")
            if s.over_max_tokens:
                out.append(f"  {s.stage}: {s.over_max_tokens} call(s) reported more completion tokens than their "
                           "max_tokens allows; counted (and charged) as the provider reported")
            if s.suspect_usage:
                out.append(f"  {s.stage}: {s.suspect_usage} call(s) came back with missing or impossible usage, "
                           f"counted at their worst case; the first: {s.usage_notes[0]}")
        if self.unrecorded_calls:
            out.append(f"budget: {self.unrecorded_calls} call(s) of this study were sent by a run that ended before "
                       f"storing their answers (killed?), or are out in another run now; counted at their worst "
                       f"case, ${self.unrecorded_usd:.4f}")
        if self.stopped:
            out.append(f"stopped: {self.stopped} — {self.stop_reason}")
        return out

    def failure_lines(self, first: int = 5) -> list[str]:
        """The count of failed calls and the first errors ([] when none failed)."""
        failed = self.to_dict()["calls_failed"]
        if not failed:
            return []
        errors = [f"  {s.stage}: {e}" for s in self.stages for e in s.errors][:first]
        return [f"{failed} call(s) failed; the first errors:", *errors]

    def unreadable_lines(self) -> list[str]:
        """For each judge stage whose verdicts are all unreadable, or more than
        ``max_unreadable_share`` of them: the count and the first raw outputs ([] when none)."""
        out = []
        for s in self.stages:
            if s.unreadable_fails(self.max_unreadable_share):
                out.append(f"{s.stage}: {s.parse_errors} of {s.verdicts_read} verdict(s) unreadable (parse_error; "
                           f"more than max_unreadable_share = {self.max_unreadable_share:g}); the first raw outputs:")
                out.extend(f"  {raw!r}" for raw in s.unreadable)
        if out:
            out.append("check the judge's model and prompt (the Audit page shows each raw output); a rerun "
                       "parses the cached completions again at no cost")
        return out


class BudgetStop(Exception):
    """A call did not fit in ``max_cost_usd``: the run stops (its finished calls are kept)."""


@dataclass
class RunContext:
    """What one run of a study hands to each of its stages, in the open: where it writes, its
    config, the budget its calls are paid from and the ledger they are recorded under, where its
    progress goes, and its stages (the open ones are closed with how the run ended)."""

    workspace: Path
    config: RunConfig
    budget: llm.Budget | None = None      # max_cost_usd, with what the study's earlier runs spent
    ledger: str | None = None             # the study id every call is recorded under before it leaves
    progress: Progress | None = None
    show_bar: bool = False
    run_ids: list[int] | None = None      # receives each stage's runs row id as the stage opens
    open_stages: list[_Stage] = field(default_factory=list)
    closed: list[StageSummary] = field(default_factory=list)

    @property
    def max_concurrency(self) -> int:
        """Calls in flight at once, per model (the config's ``max_concurrency``)."""
        return self.config.max_concurrency


class _Stage:
    """Bookkeeping for one stage: a runs row opened at start and closed at the end."""

    def __init__(self, ctx: RunContext, name: str):
        self.ctx, self.summary = ctx, StageSummary(name)
        self._t0 = time.monotonic()
        with store.write(ctx.workspace) as con:
            self.run_id = runs_store.start_run(con, name, {**ctx.config.to_dict(), "study_id": study_id(ctx.config)})
        if ctx.run_ids is not None:  # the caller (a dashboard job) follows its own runs' calls
            ctx.run_ids.append(self.run_id)
        ctx.open_stages.append(self)

    def close(self, status: str = "ok", error: str = "") -> StageSummary:
        if self in self.ctx.open_stages:
            self.ctx.open_stages.remove(self)
        s = self.summary
        s.seconds = time.monotonic() - self._t0
        self.ctx.closed.append(s)
        with store.write(self.ctx.workspace) as con:
            # The call counters and the cost were added to the runs row by lsqa.llm in the same
            # transactions that stored the calls: closing the stage must not overwrite them.
            runs_store.finish_run(con, self.run_id, status=status, error=error,
                                  counts={"tasks": s.tasks, "written": s.written, "skipped": s.skipped})
        return s


def _batches(items: list, mode_of: Callable = lambda task: task.request.mode, size: int = BATCH) -> Iterator[list]:
    if any(mode_of(item) == "batch" for item in items):
        # A stage with batch-mode calls sends them all at once: chunks of 256 would wait for one
        # provider batch (hours) after another.
        yield items
        return
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _announce(ctx: RunContext, stage: _Stage, total: int) -> None:
    """Say which stage runs and how many calls it has before the first of them: the dashboard's
    progress bar reads "judge:x: 0 / 72" (not "starting: 0 / 0") while the calls are prepared and
    the first ones go out; it then moves as calls finish (``_send``)."""
    if ctx.progress is not None:
        ctx.progress(stage.summary.stage, 0, total)


def _send(ctx: RunContext, stage: _Stage, requests: list[llm.LLMRequest], done: int,
          total: int) -> list[llm.LLMResult]:
    progress = ctx.progress
    callback = (lambda d, _t: progress(stage.summary.stage, done + d, total)) if progress else None
    results = llm.complete_many(ctx.workspace, requests, max_concurrency=ctx.max_concurrency,
                                use_cache=ctx.config.use_cache, run_id=stage.run_id, progress=callback,
                                show_bar=ctx.show_bar, budget=ctx.budget, ledger=ctx.ledger)
    stage.summary.add_results(results)
    for request, result in zip(requests, results, strict=False):
        limit = llm.max_output_tokens(request) if result.ok and not result.cached and result.completion_tokens else None
        if limit is not None and result.completion_tokens > limit:
            stage.summary.over_max_tokens += 1
    return results


def _sent(pairs):
    """The (task, result) pairs whose call was made or cached (not those the budget held back)."""
    return [(t, r) for t, r in pairs if r.error_kind != "budget"]


def _stop_if_over_budget(ctx: RunContext, results) -> None:
    if any(r.error_kind == "budget" for r in results):
        raise BudgetStop(ctx.budget.describe())


_HOW_RUN = ("max_cost_usd", "max_concurrency", "use_cache", "source", "max_unreadable_share")


def _without_transport(value):
    """``value`` with every ``params`` table's transport settings (``api_base``, ``timeout``,
    retries, headers: ``lsqa.llm.TRANSPORT_PARAMS``) left out, at any depth."""
    if isinstance(value, dict):
        return {k: ({p: v for p, v in _without_transport(x).items() if p not in llm.TRANSPORT_PARAMS}
                    if k == "params" and isinstance(x, dict) else _without_transport(x))
                for k, x in value.items()}
    if isinstance(value, list):
        return [_without_transport(x) for x in value]
    return value


def study_id(config: RunConfig) -> str:
    """What identifies a study across runs: the key of its spend ledger (its budget counts every
    call the study paid for). It is the config without how it is run (budget, concurrency, cache)
    and without where and how its calls travel (transport settings), so moving to another server
    URL, timeout or retry count keeps the study's spending."""
    from lsqa.text.prompt_parts import canonical_json

    d = {k: v for k, v in config.to_dict().items() if k not in _HOW_RUN}
    return hashlib.sha256(canonical_json(_without_transport(d)).encode()).hexdigest()[:16]


def legacy_study_id(config: RunConfig) -> str:
    """The study id runs stored before transport settings were left out of it, so that a workspace's
    earlier spending of the same study, sent the same way, stays on its ledger after the upgrade."""
    from lsqa.text.prompt_parts import canonical_json

    d = {k: v for k, v in config.to_dict().items() if k not in ("max_cost_usd", "max_concurrency", "use_cache", "source")}
    return hashlib.sha256(canonical_json(d).encode()).hexdigest()[:16]


# ------------------------------------------------------------------- stage: entities, questions

def generation_tasks(config: RunConfig, chains: dict[str, list], books: BookContexts) -> list[tuple]:
    """(document id, entity, request) per top entity: the A.1 calls of the questions stage."""
    from lsqa.corpus import entities as entities_mod
    from lsqa.prompting import templates as prompts

    gen = config.generation
    prompt = prompts.load_prompt("question_generation", layout=prompts.layout_for(gen.prompt_caching))
    tasks = []
    for doc_id, ents in chains.items():
        doc = books.document(doc_id)
        story_tokens = books.story_tokens(doc_id)
        for entity, mentions in ents:
            if story_tokens <= gen.context_tokens:
                context = books.story(doc_id)
            else:
                # Paper footnote 1: the passages of the entity's mention chain stand in for the book.
                context = entities_mod.entity_context_text(doc["full_text"], mentions, max_tokens=gen.context_tokens)
            request = prompts.request(prompt, gen.model, gen.params, prompt_caching=gen.prompt_caching,
                                      mode=gen.mode, contexts=(context,), context_text=context,
                                      num_questions=gen.questions_per_entity, entity=entity["name"])
            tasks.append((doc_id, entity, request))
    return tasks


def generate_questions(ctx: RunContext, scope: StudyScope) -> list[StageSummary]:
    """Paper §2: entities by coreference (or the fallback), then A.1 questions per top entity."""
    from lsqa.config.settings import load_settings
    from lsqa.corpus import chains as chains_mod
    from lsqa.corpus import questions as questions_mod

    workspace, config, books = ctx.workspace, ctx.config, scope.books
    gen = config.generation
    ent_stage = _Stage(ctx, "entities")
    settings = load_settings()
    method = chains_mod.resolve_method(gen.entity_method, settings)
    chains: dict[str, list] = {}
    for doc_id in scope.doc_ids:
        if not books.has_text(doc_id):
            continue
        written = chains_mod.ensure_entities(workspace, books.document(doc_id), method, settings)
        ent_stage.summary.written += written
        ent_stage.summary.skipped += 0 if written else 1
        chains[doc_id] = chains_mod.top_chains(workspace, doc_id, method, gen.entities)
    summaries = [ent_stage.close()]

    stage = _Stage(ctx, "questions")
    tasks = generation_tasks(config, chains, books)
    stage.summary.tasks = len(tasks)
    _announce(ctx, stage, len(tasks))
    done = 0
    for batch in _batches(tasks, lambda task: task[2].mode):
        results = _send(ctx, stage, [t[2] for t in batch], done, len(tasks))
        done += len(batch)
        rows = []
        for (doc_id, entity, request), result in _sent(zip(batch, results, strict=False)):
            if result.status != "ok":
                continue
            for n, gq in enumerate(questions_mod.questions_from_generation(result.text or "", entity=entity["name"])):
                digest = hashlib.sha1("\x1f".join((doc_id, gen.model, request.prompt_version, entity["name"],
                                                   gq.question)).encode()).hexdigest()[:16]
                rows.append({"id": f"gen:{digest}", "document_id": doc_id, "origin": "generated",
                             "text": gq.question, "reference_1": gq.answer, "entity_id": entity["id"],
                             "prompt_id": request.prompt_id, "prompt_version": request.prompt_version,
                             "model": gen.model, "source_index": entity["rank"] * 1000 + n})
        with store.write(workspace) as con:
            n_new = corpus_store.insert_questions(con, rows)
        stage.summary.written += n_new
        stage.summary.skipped += len(rows) - n_new
        _stop_if_over_budget(ctx, results)
    summaries.append(stage.close())
    return summaries


# ------------------------------------------------------------------------------ stage: answers

def register_names(con, config: RunConfig) -> None:
    """Add the config's systems to the workspace and check that no system or judge name is given
    a definition other than the one its results were made with (``lsqa.config.definitions``)."""
    definitions.check_run_names(con, config)
    with_answers, _ = results_store.names_with_results(con)
    rows = [{"name": s.name, "model": s.model, "context": s.context.label,
             "prompt_id": "" if s.context.kind in ("reference", "imported") else s.context.kind,
             "params": json.dumps({**s.params, "max_context_tokens": s.max_context_tokens}, sort_keys=True)}
            for s in config.systems]
    # A name without answers yet takes the config's definition (e.g. a run that failed before answering).
    results_store.upsert_systems(con, [r for r in rows if r["name"] in with_answers])
    results_store.upsert_systems(con, [r for r in rows if r["name"] not in with_answers], replace=True)
    definitions.check_and_record(con, config)


def answer_tasks(workspace: Path, config: RunConfig, questions: list[dict],
                 books: BookContexts) -> tuple[list, int, dict[str, int]]:
    """(answers to produce, how many are stored already, questions each imported system lacks):
    what the answers stage does (and ``lsqa plan`` counts)."""
    from lsqa.study import systems as systems_mod

    with store.connect(workspace) as con:
        done_before = {s.name: results_store.answered(con, s.name) for s in config.systems}
    tasks, skipped, missing = [], 0, {}
    for s in config.systems:
        if s.imported:  # answered elsewhere: judged, never answered; a question it lacks is left out
            missing[s.name] = sum(q["id"] not in done_before.get(s.name, ()) for q in questions)
            skipped += len(questions) - missing[s.name]
            continue
        for q in questions:
            if q["id"] in done_before.get(s.name, ()):
                skipped += 1
                continue
            tasks.append(systems_mod.answer_task(s, q, books))
    return tasks, skipped, missing


def answer_questions(ctx: RunContext, questions: list[dict], books: BookContexts) -> StageSummary:
    workspace = ctx.workspace
    stage = _Stage(ctx, "answers")
    _announce(ctx, stage, 0)  # building the prompts (retrieval, whole books) can take a while
    tasks, stage.summary.skipped, missing = answer_tasks(workspace, ctx.config, questions, books)
    stage.summary.missing.update(missing)
    stage.summary.tasks = len(tasks) + stage.summary.skipped
    ready = [t.ready_row for t in tasks if t.ready_row is not None]
    calls = [t for t in tasks if t.request is not None]
    _announce(ctx, stage, len(calls))
    with store.write(workspace) as con:
        stage.summary.written += results_store.insert_answers(con, ready, replace=True)
    stage.summary.errors.extend(json.loads(r["extra"]).get("error", "") for r in ready if r["status"] != "ok")
    done = 0
    for batch in _batches(calls):
        results = _send(ctx, stage, [t.request for t in batch], done, len(calls))
        done += len(batch)
        rows = [t.row(r.text if r.status == "ok" else "", "ok" if r.status == "ok" else "error", r.cache_key,
                      error=r.error_message) for t, r in _sent(zip(batch, results, strict=False))]
        with store.write(workspace) as con:
            stage.summary.written += results_store.insert_answers(con, rows, replace=True)
        _stop_if_over_budget(ctx, results)
    return stage.close()


# ---------------------------------------------------------------------------- stage: verdicts

def judge_tasks(workspace: Path, config: RunConfig, judge, questions: list[dict], sampled: list[dict],
                answers: dict, books: BookContexts) -> tuple[list, int]:
    """(verdicts to obtain, how many the judge has in all): the tasks its kind's record builds, less
    those already decided."""
    from lsqa.judging import kinds
    from lsqa.judging.tasks import TaskInputs

    kind = kinds.get(judge.kind)
    tasks = kind.build(kind, judge, TaskInputs(questions, sampled, answers, config.systems, books, config.seed))
    with store.connect(workspace) as con:
        decided = (reference_checks_store.decided_ids if kind.about_references else results_store.judgment_ids)(
            con, [t.id for t in tasks])
    return [t for t in tasks if t.id not in decided], len(tasks)


def _store_verdicts(con, kind, rows: list[dict]) -> int:
    """Verdicts into their table: judgments, or reference_checks for a kind about references (migration 0018)."""
    if kind.about_references:
        return reference_checks_store.insert_checks(con, rows)
    return results_store.insert_judgments(con, rows, replace=True)


def judge_answers(ctx: RunContext, questions: list[dict], books: BookContexts) -> list[StageSummary]:
    from lsqa.judging import kinds
    from lsqa.judging import tasks as judges_mod

    workspace, config = ctx.workspace, ctx.config
    with store.connect(workspace) as con:
        answer_rows = results_store.answers_for(con, [q["id"] for q in questions], [s.name for s in config.systems])
    answers = {(a["question_id"], a["system_name"]): a["text"] for a in answer_rows if a["status"] == "ok"}
    sampled_ids = set(judges_mod.sample_questions([q["id"] for q in questions], config.sample, config.seed))
    sampled = [q for q in questions if q["id"] in sampled_ids]
    summaries = []
    for judge in config.judges:
        kind = kinds.get(judge.kind)
        stage = _Stage(ctx, f"judge:{judge.name}")
        _announce(ctx, stage, 0)  # building the judge prompts (whole books) can take a while
        # Like every stage: verdicts already stored are kept (a re-run adds only new answers).
        todo, n_tasks = judge_tasks(workspace, config, judge, questions, sampled, answers, books)
        stage.summary.tasks, stage.summary.skipped = n_tasks, n_tasks - len(todo)
        ready = [t.ready_row for t in todo if t.ready_row is not None]
        if not kind.needs_call:  # rated on this machine (e.g. embeddings): rows at once, no requests
            ready += kind.rate(kind, judge, [t for t in todo if t.ready_row is None])
        calls = [t for t in todo if t.needs_call]
        _announce(ctx, stage, len(calls))
        with store.write(workspace) as con:
            stage.summary.written += _store_verdicts(con, kind, ready)
        done = 0
        for batch in _batches(calls, lambda task: task.mode):  # requests rendered batch by batch
            results = _send(ctx, stage, [t.request for t in batch], done, len(calls))
            done += len(batch)
            rows = [t.from_completion(r.text, r.status == "ok", r.cache_key, r.error_message)
                    for t, r in _sent(zip(batch, results, strict=False))]
            stage.summary.add_verdicts(rows)
            with store.write(workspace) as con:
                stage.summary.written += _store_verdicts(con, kind, rows)
            _stop_if_over_budget(ctx, results)
        summaries.append(stage.close())
    return summaries


# --------------------------------------------------------------------------------- whole runs

def run(workspace: str | Path, config: RunConfig | str | Path, *, progress: Progress | None = None,
        show_bar: bool = False, run_ids: list[int] | None = None) -> RunSummary:
    """Run every stage the config names, skipping finished work.

    ``run_ids``, when given, receives the id of each stage's ``runs`` row as the stage opens, so a
    caller can count the calls of this run alone while it goes on.
    """
    workspace = Path(workspace)
    if not isinstance(config, RunConfig):
        config = load_run_config(config)
    t0 = time.monotonic()
    summary = RunSummary(max_unreadable_share=config.max_unreadable_share)
    ctx = RunContext(workspace, config, progress=progress, show_bar=show_bar, run_ids=run_ids)
    try:
        # Before any write: an unknown judge kind or document, or a study too large, stops the run here.
        scope = study_scope(workspace, config)
        # Every call of the study is recorded as sent under its ledger before it leaves, with or
        # without a budget (lsqa.llm.runner._SentMarks): a kill cannot hide what was paid for.
        ctx.ledger = study_id(config)
        with store.write(workspace) as con:
            register_names(con, config)  # a redefined name stops the run here
            if config.max_cost_usd is not None:
                # The budget is the study's: what its earlier runs spent counts (a stopped run goes on
                # only with a higher max_cost_usd).
                # Calls sent and not stored count at their most: a killed run's (the provider may have
                # charged them) and another live run's of the same study.
                summary.unrecorded_usd, summary.unrecorded_calls = llm_calls.in_flight_spend(con, ctx.ledger,
                                                                                           llm.owner())
                spent = runs_store.study_spent(con, ctx.ledger, llm.owner(), legacy=legacy_study_id(config))
                ctx.budget = llm.Budget(config.max_cost_usd, spent, ledger=ctx.ledger)
        if config.questions in ("generate",):
            summary.stages.extend(generate_questions(ctx, scope))
        questions = scope.questions()
        if config.systems:
            summary.stages.append(answer_questions(ctx, questions, scope.books))
        if config.judges:
            summary.stages.extend(judge_answers(ctx, questions, scope.books))
    except BudgetStop as stop:
        summary.stopped, summary.stop_reason = "budget", f"{stop}; raise max_cost_usd and run again to go on"
        for stage in list(ctx.open_stages):
            stage.close(status="stopped: budget", error=summary.stop_reason)
        summary.stages = list(ctx.closed)
    except BaseException as exc:
        # The runs table must not claim a stage is still running: say how it ended, then re-raise.
        status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        for stage in list(ctx.open_stages):
            try:
                stage.close(status=status, error=f"{type(exc).__name__}: {exc}"[:2000])
            except Exception:  # the workspace itself may be what failed; the original error matters
                pass
        raise
    summary.seconds = time.monotonic() - t0
    return summary


DEMO_CONFIGS = shipped_folder(CONFIGS)  # configs/ of the repository


def run_demo_study(workspace: str | Path, scale: str = "full") -> Iterator[str]:
    """The demo study: NarrativeQA books with the embedded models, then questions on Les Misérables."""
    names = ("demo_narrativeqa.toml", "demo_generation.toml") if scale == "full" else ("demo_small.toml",)
    for name in names:
        yield f"running {name} ..."
        yield from run(workspace, DEMO_CONFIGS / name, show_bar=False).lines()
