"""Running calls: cache lookups, bounded concurrency, retries, durable writes, progress."""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import math
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from lsqa.errors import LsqaError
from lsqa.llm import claims as _claims
from lsqa.llm import pricing
from lsqa.llm.budget import Budget
from lsqa.llm.claims import CLAIM_RENEW_S
from lsqa.llm.keys import (
    OFFLINE_PROVIDERS,
    cache_key,
    canonical_json,
    provider_of,
    remove_env_secrets,
    scrub,
    secret_env_values,
    storable_params,
)
from lsqa.llm.provider import KIND_TEXT, cache_marked, classify, error_text, litellm, router_call, usage_of
from lsqa.llm.types import RETRYABLE, LLMRequest, LLMResult, Results, RetryPolicy
from lsqa.text import prompt_parts

FLUSH_INTERVAL_S = float(os.environ.get("LSQA_LLM_FLUSH_S", "0.2"))
DEFAULT_MAX_CONCURRENCY = 8
PROGRESS_INTERVAL_S = 0.05  # the calling thread collects finished calls (and reports progress) this often
GIL_SWITCH_INTERVAL_S = float(os.environ.get("LSQA_LLM_SWITCH_INTERVAL_S", "0.0005"))

log = logging.getLogger("lsqa.llm")

# One call with retries (runs on the background event loop)
# ---------------------------------------------------------------------------------------------


@dataclass
class _Job:
    """One distinct request of a batch: its cache key and where its result goes in the output."""

    request: LLMRequest
    key: str
    indices: list[int]
    bound_usd: float = 0.0  # its worst-case cost
    reserved_usd: float = 0.0  # what the budget reserved for it while it runs (the worst case, scaled by overruns)
    overrun_at: float = 1.0    # the budget's overrun when it was reserved
    worst_usd: float | None = None  # its worst case, what it is counted at when its usage is suspect (None: unpriced)


# Records calls as sent (calls_in_flight) before they are sent: ``record([(job, usd), ...])`` is a
# future of one bool per call (False: the study's ledger in the workspace had no room for it).
Record = Callable[[list], "concurrent.futures.Future"]


class _NotRecorded(LsqaError):
    """A call could not be recorded as sent: it is not sent, and the batch stops (never a retry)."""


async def _call(job: _Job, semaphore: asyncio.Semaphore, retry: RetryPolicy, budget: Budget | None = None,
                marks: "_SentMarks | None" = None) -> LLMResult:
    result = await _attempts(job, semaphore, retry, marks)
    if budget is not None and result.error_kind != "budget":
        budget.settle(job.reserved_usd, result.cost_usd if result.ok or result.usage_note else 0.0, job.bound_usd)
    return result


async def _attempts(job: _Job, semaphore: asyncio.Semaphore, retry: RetryPolicy,
                    marks: "_SentMarks | None" = None) -> LLMResult:
    ll = litellm()
    req = job.request
    kwargs = dict(req.params)
    kwargs.setdefault("timeout", retry.timeout_s)
    kwargs["num_retries"] = 0  # the retry policy is ours; litellm and the OpenAI SDK must not add theirs
    kwargs["max_retries"] = 0
    offline = provider_of(req.model) in OFFLINE_PROVIDERS
    messages = cache_marked(req.model, req.messages, req.cache_prefix_chars)
    started = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        try:
            async with semaphore:
                # In the workspace as sent before it leaves (a kill from here on cannot hide its
                # cost), and within the budget: reserved, and on the study's ledger as the workspace
                # holds it (other runs of the study going on now included).
                if marks is not None and attempts == 1:
                    refusal = await marks.before_send(job)
                    if refusal is not None:
                        return LLMResult(text=None, status="error", error_kind="budget", cache_key=job.key,
                                         model=req.model, error_message=refusal)
                started = time.monotonic()  # latency: this attempt, not the wait for a free slot
                if isinstance(kwargs.get("api_base"), (list, tuple)):  # several servers: litellm's Router
                    response = await router_call(req.model, messages, kwargs)
                else:
                    response = await ll.acompletion(model=req.model, messages=messages, **kwargs)
        except (asyncio.CancelledError, _NotRecorded):
            raise
        except Exception as exc:  # noqa: BLE001 - every provider failure becomes a result
            kind, status, retry_after = classify(exc)
            if offline and kind == "connection":
                kind = "provider"  # an embedded model raised: a bug to report, not a network blip
            if kind in RETRYABLE and attempts < retry.max_attempts:
                await asyncio.sleep(retry.delay(attempts, retry_after))
                continue
            cost, note = (_worst_if_suspect(job, None, "usage not a number, answer unreadable")
                          if kind == "bad_usage" else (None, ""))
            return LLMResult(
                text=None, status="error", error_kind=kind,
                error_message=error_text(req.model, kind, status, exc, attempts),
                latency_s=time.monotonic() - started, cache_key=job.key, model=req.model, attempts=attempts,
                cost_usd=cost, usage_note=note,
            )
        choice = response.choices[0] if getattr(response, "choices", None) else None
        text = getattr(getattr(choice, "message", None), "content", None)
        if choice is not None and getattr(choice, "finish_reason", None) == "content_filter" and not text:
            return LLMResult(
                text=None, status="error", error_kind="content_policy",
                error_message=f"{req.model}: {KIND_TEXT['content_policy']} (finish_reason content_filter)",
                latency_s=time.monotonic() - started, cache_key=job.key, model=req.model, attempts=attempts,
            )
        note = ""
        if offline:
            prompt_tokens, completion_tokens, cached_prompt_tokens = usage_of(response)
            cost = 0.0  # embedded models are free and local
        else:
            # Checked before it is priced: litellm's response_cost prices whatever came back
            # (negative counts give a negative cost, a missing usage $0).
            prompt_tokens, completion_tokens, cached_prompt_tokens, note = pricing.checked_usage(
                req.model, *usage_of(response))
            hidden = getattr(response, "_hidden_params", None) or {}
            cost = None if note else hidden.get("response_cost")
            cost = float(cost) if cost is not None else None
            if cost is None and not note:  # litellm did not price it: the reported usage at its table's prices, if any
                cost = pricing.call_cost(req.model, prompt_tokens, completion_tokens or 0,
                                         cached_input_tokens=cached_prompt_tokens or 0)
            cost, note = _worst_if_suspect(job, cost, note)
        return LLMResult(
            text=text or "", status="ok", prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            cached_prompt_tokens=cached_prompt_tokens, cost_usd=cost, latency_s=time.monotonic() - started,
            cache_key=job.key, model=req.model, attempts=attempts, usage_note=note,
        )


def _worst_if_suspect(job: _Job, cost: float | None, note: str) -> tuple[float | None, str]:
    """The cost to record for a call answered with ``cost`` (None: not priced) and usage ``note``
    (:func:`lsqa.llm.pricing.checked_usage`; '' when plausible): the call's worst case when its
    usage was suspect or missing or its price came out negative or not a number, said so in the
    note. None only when the worst case is unknown too (a model litellm does not price)."""
    if not note and cost is not None and not (cost >= 0 and math.isfinite(cost)):
        note = f"suspect usage: priced at {cost!r}"
    if not note:
        return cost, ""
    worst = job.worst_usd
    if worst is None:
        return None, f"{note}; cost unknown (litellm has no price for {job.request.model})"
    return worst, f"{note}; counted at the call's worst case, ${worst:.6f}"


# ---------------------------------------------------------------------------------------------
# The background event loop
# ---------------------------------------------------------------------------------------------

_LOOP_THREAD = "lsqa-llm-loop"
_loop: asyncio.AbstractEventLoop | None = None
_loop_pid: int | None = None
_loop_lock = threading.Lock()


def _event_loop() -> asyncio.AbstractEventLoop:
    """One event loop per process, in a daemon thread: litellm caches async HTTP clients bound
    to the loop that made them, so every batch must run on the same loop."""
    global _loop, _loop_pid
    with _loop_lock:
        if _loop is None or _loop_pid != os.getpid() or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name=_LOOP_THREAD, daemon=True)
            thread.start()
            _loop, _loop_pid = loop, os.getpid()
        return _loop


def _limit_for(model: str, max_concurrency: int | Mapping[str, int]) -> int:
    if isinstance(max_concurrency, Mapping):
        return max(1, int(max_concurrency.get(model, max_concurrency.get("*", DEFAULT_MAX_CONCURRENCY))))
    return max(1, int(max_concurrency))


async def _run_jobs(jobs: list[_Job], max_concurrency, retry: RetryPolicy, on_done: Callable[[_Job, LLMResult], None],
                   budget: Budget | None = None, marks: "_SentMarks | None" = None) -> None:
    semaphores: dict[str, asyncio.Semaphore] = {}
    for job in jobs:
        if job.request.model not in semaphores:
            semaphores[job.request.model] = asyncio.Semaphore(_limit_for(job.request.model, max_concurrency))

    async def one(job: _Job) -> None:
        result = await _call(job, semaphores[job.request.model], retry, budget, marks)
        on_done(job, result)

    tasks = [asyncio.ensure_future(one(job)) for job in jobs]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise


class _FineGilSwitching:
    """Lowers CPython's GIL switch interval while any batch of calls runs in this process.

    litellm's ``acompletion`` prepares each request on a worker thread (``run_in_executor``) and
    finishes it on the event loop, so every call hands the GIL between threads several times, and
    the writer and calling threads want it too. With CPython's default interval
    (``sys.getswitchinterval()``) a thread that becomes ready can wait a whole interval for the GIL at
    each handoff, a visible share of a batch's wall time (docs/BENCHMARKS.md, "LLM layer";
    docs/benchmarks-log/2026-11-30-llm-layer.md). The interval
    is process-wide, so batches count themselves in and the last one out restores the old value.
    """

    def __init__(self, interval_s: float):
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._active = 0
        self._previous: float | None = None

    def __enter__(self) -> "_FineGilSwitching":
        with self._lock:
            if self._active == 0 and self.interval_s > 0:
                self._previous = sys.getswitchinterval()
                sys.setswitchinterval(min(self.interval_s, self._previous))
            self._active += 1
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0 and self._previous is not None:
                sys.setswitchinterval(self._previous)
                self._previous = None


_gil_switching = _FineGilSwitching(GIL_SWITCH_INTERVAL_S)


# ---------------------------------------------------------------------------------------------
# Recording calls as sent before they are sent
# ---------------------------------------------------------------------------------------------


class _SentMarks:
    """Records each call in the workspace as sent (``calls_in_flight``) before it leaves, a wave ahead.

    In every mode: a ``kill -9`` must not hide a call the provider answered and charged.
    Recording each call alone when its turn came made it wait for a transaction, which made a batch
    markedly slower than unrecorded (docs/benchmarks-log/2026-12-02-sent-records.md). Here a
    model's calls are recorded in waves of its concurrency limit, in the order they go out (the
    order of the model's semaphore), and the next wave is recorded while a wave is still ahead, so
    a call whose turn comes finds its record made: one transaction per wave, and no call waits for
    one once the first wave is in. The price: a kill may leave up to two waves per model recorded
    and never sent; they stay on the ledger at their worst case like the calls that did leave (the
    record errs towards spend, never hides it). A run that ends normally removes the records of
    calls it did not send.

    With a budget a call is reserved when it is recorded, and recorded only while the study's
    ledger as the workspace holds it has room for it. A call recorded ahead whose turn comes after
    an overrun was seen tops its reservation up (or is refused). Once a wave meets the budget the
    model's calls go one at a time, each reserved and recorded at its turn, as before.

    Runs on the event loop (one task at a time: no locks). Embedded models cost nothing and are
    not recorded.
    """

    def __init__(self, jobs: list[_Job], max_concurrency, budget: Budget | None, record: Record):
        self.budget, self.record = budget, record
        self.waiting: dict[str, dict[int, _Job]] = {}  # per model: calls not recorded yet, in their order
        for job in jobs:
            if provider_of(job.request.model) not in OFFLINE_PROVIDERS:
                self.waiting.setdefault(job.request.model, {})[id(job)] = job
        self.wave = {model: _limit_for(model, max_concurrency) for model in self.waiting}
        self.ahead = dict.fromkeys(self.waiting, 0)      # recorded, their turn not come
        self.busy = dict.fromkeys(self.waiting, 0)       # waves being recorded
        self.tight: set[str] = set()                     # models whose waves met the budget
        self.recording: dict[int, asyncio.Future] = {}   # call -> the wave being recorded with it
        self.recorded: dict[int, _Job] = {}              # recorded as sent, not sent (yet)
        self.transactions = 0

    def _refusal(self, model: str, others: bool = False) -> str:
        assert self.budget is not None
        where = " with the study's other runs" if others else ""
        return f"{model}: not sent, it could pass the budget{where} ({self.budget.describe()})"

    async def before_send(self, job: _Job) -> str | None:
        """Wait until ``job`` is recorded as sent (and reserved); a refusal (budget) or None: send it."""
        model, key, budget = job.request.model, id(job), self.budget
        if model not in self.waiting:  # an embedded model: free, only the budget's bookkeeping
            if budget is not None:
                amount = budget.reserve(job.bound_usd)
                if amount is None:
                    return self._refusal(model)
                job.reserved_usd = amount
            return None
        while key in self.recording:
            await asyncio.shield(self.recording[key])  # shared by the wave: one call cancelled must not cancel it
        if key in self.recorded:
            del self.recorded[key]
            self.ahead[model] -= 1
            if budget is not None and budget.overrun > job.overrun_at:
                amount = budget.top_up(job.reserved_usd, job.bound_usd)
                if amount is None:
                    self.recorded[key] = job  # not sent: its record goes at the end (unsent_keys)
                    return self._refusal(model)
                job.reserved_usd = amount
        else:  # its turn came first: recorded now, with the next wave unless the budget is tight
            self.waiting[model].pop(key, None)
            if budget is not None:
                amount = budget.reserve(job.bound_usd)
                if amount is None:
                    return self._refusal(model)
                job.reserved_usd, job.overrun_at = amount, budget.overrun
            await asyncio.shield(self._start_wave(model, job))
            if key not in self.recorded:  # the ledger had no room for it (its reservation is released)
                if budget is not None:
                    budget.refused += 1
                return self._refusal(model, others=True)
            del self.recorded[key]
            self.ahead[model] -= 1
        if not self.busy[model] and self.ahead[model] < self.wave[model] and model not in self.tight:
            self._start_wave(model)
        return None

    def _start_wave(self, model: str, first: _Job | None = None) -> asyncio.Future:
        """Record ``first`` (its turn has come) and the next calls waiting, up to a wave."""
        budget = self.budget
        entries = [first] if first is not None else []
        if model not in self.tight:
            waiting = self.waiting[model]
            for job in list(itertools.islice(waiting.values(), self.wave[model] - len(entries))):
                if budget is not None:
                    amount = budget.reserve(job.bound_usd, ahead=True)
                    if amount is None:
                        self.tight.add(model)
                        break
                    job.reserved_usd, job.overrun_at = amount, budget.overrun
                del waiting[id(job)]
                entries.append(job)
        task = asyncio.ensure_future(self._wave(model, entries))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # awaited by the calls, if any
        for job in entries:
            self.recording[id(job)] = task
        return task

    async def _wave(self, model: str, entries: list[_Job]) -> None:
        if not entries:
            return
        self.busy[model] += 1
        amounts = [job.reserved_usd if self.budget is not None else job.bound_usd for job in entries]
        try:
            fits = await asyncio.wrap_future(self.record(list(zip(entries, amounts, strict=False))))
        finally:
            self.busy[model] -= 1
            for job in entries:
                self.recording.pop(id(job), None)
        self.transactions += 1
        for job, fit in zip(entries, fits, strict=False):
            if fit:
                self.recorded[id(job)] = job
                self.ahead[model] += 1
            else:  # not recorded: at its turn it tries alone (and is refused if it still does not fit)
                if self.budget is not None:
                    self.budget.settle(job.reserved_usd, 0.0)
                    job.reserved_usd = 0.0
                self.tight.add(model)

    def unsent_keys(self) -> list[str]:
        """Calls recorded as sent that were not sent (refused at their turn): their records go."""
        return [job.key for job in self.recorded.values()]


# ---------------------------------------------------------------------------------------------
# Writing finished calls
# ---------------------------------------------------------------------------------------------


class _Writer:
    """Commits finished calls to the workspace from its own thread, in batches: each commit opens
    a short-lived connection, and commits are at least ``interval_s`` apart so that other
    processes (the dashboard) get the file in between."""

    _STOP = object()

    def __init__(self, workspace: Path, run_id: int | None, interval_s: float = FLUSH_INTERVAL_S):
        self.workspace, self.run_id, self.interval_s = workspace, run_id, interval_s
        self.renewed_at = time.monotonic()
        self.env_secrets = secret_env_values()
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.error: BaseException | None = None
        self.writes = 0
        self.mark_transactions = 0  # calls recorded as sent, in this many transactions (set at the end)
        self.write_seconds = 0.0   # how long the workspace was held, in total
        self.max_delay_s = 0.0     # longest time from a call finishing to its commit
        self.thread = threading.Thread(target=self._loop, name="lsqa-llm-writer", daemon=True)
        self.thread.start()

    def put(self, job: "_Job", result: LLMResult) -> None:
        self.queue.put((job, result, time.monotonic()))

    def mark_sent(self, entries: list[tuple["_Job", float]], ledger: str,
                  max_usd: float | None) -> concurrent.futures.Future:
        """Record the calls ``entries`` (each with the USD it is counted at) in ``calls_in_flight``
        at once (not after the flush interval) — with ``max_usd``, only those for which the ledger
        as the workspace holds it has room under it. The future's result, once committed, says for
        each call whether it was recorded (and may leave)."""
        done: concurrent.futures.Future = concurrent.futures.Future()
        self.queue.put(_Mark(entries, ledger, max_usd, done))
        return done

    def close(self) -> None:
        self.queue.put(self._STOP)
        self.thread.join()

    def _loop(self) -> None:
        pending: list[tuple[_Job, LLMResult, float]] = []
        free_until = 0.0  # no write before this time: the file stays free for others meanwhile
        while True:
            wait = CLAIM_RENEW_S if not pending else max(0.0, free_until - time.monotonic())
            try:
                item = self.queue.get(timeout=wait)
            except queue.Empty:
                item = None
            stop = item is self._STOP
            if isinstance(item, _Mark):
                marks = [item]
                while True:  # every call waiting to leave, in one transaction
                    try:
                        more = self.queue.get_nowait()
                    except queue.Empty:
                        break
                    if more is self._STOP:
                        stop = True
                    elif isinstance(more, _Mark):
                        marks.append(more)
                    else:
                        pending.append(more)
                self._mark(marks)
                item = None
            if item is not None and not stop:
                pending.append(item)
            if pending and (stop or time.monotonic() >= free_until):
                self._write(pending)
                pending = []
                free_until = time.monotonic() + self.interval_s
            if stop:
                return
            if time.monotonic() - self.renewed_at >= CLAIM_RENEW_S:
                self._renew()

    def _mark(self, marks: list["_Mark"]) -> None:
        from lsqa.store import llm_calls, runs, write

        try:
            with _save_lock, write(self.workspace) as con:
                # The whole ledger, this process's calls included (stored ones in runs.cost_usd, the
                # others in calls_in_flight until their result is stored, in the same transaction).
                # Without a budget nothing is checked: the record alone.
                checked = {m.ledger for m in marks if m.max_usd is not None}
                spent = {ledger: runs.study_spent(con, ledger) for ledger in checked}
                fits, rows = [], []
                for m in marks:
                    fits.append([])
                    for job, usd in m.entries:
                        fit = m.max_usd is None or spent[m.ledger] + usd <= m.max_usd + 1e-12
                        if fit:
                            rows.append((job.key, _claims.owner(), m.ledger, usd, self.run_id))
                            if m.max_usd is not None:
                                spent[m.ledger] += usd
                        fits[-1].append(fit)
                llm_calls.mark_in_flight(con, rows)
        except BaseException as exc:  # noqa: BLE001 - the calls are not sent; the run reports it
            self.error = self.error or exc
            for m in marks:
                if not m.done.done():  # a cancelled run stopped waiting for it
                    m.done.set_exception(_NotRecorded(f"could not record a call as sent in {self.workspace}: {exc}"))
            return
        for m, fit in zip(marks, fits, strict=False):
            if not m.done.done():
                m.done.set_result(fit)

    def _renew(self) -> None:
        """Extend this process's claims on the calls it still has in flight (a long call must not
        look abandoned to another run)."""
        try:
            with _save_lock:
                _claims.renew(self.workspace)
            self.renewed_at = time.monotonic()
        except Exception as exc:  # noqa: BLE001 - reported to the caller at close
            self.error = self.error or exc

    def _write(self, finished: list[tuple["_Job", LLMResult, float]]) -> None:
        try:
            # Rows are built here, not on the event loop: serialising a book-length prompt takes
            # milliseconds that the calls in flight should not wait for.
            rows = [_row(job, result, self.run_id, self.env_secrets) for job, result, _ in finished]
            with _save_lock:
                started = time.monotonic()
                _save(self.workspace, rows, self.run_id)
                done = time.monotonic()
            self.renewed_at = done  # _save renewed the claims too
            self.writes += 1
            self.write_seconds += done - started
            self.max_delay_s = max(self.max_delay_s, done - min(at for _, _, at in finished))
        except BaseException as exc:  # noqa: BLE001 - reported to the caller at close
            self.error = self.error or exc


@dataclass
class _Mark:
    """Calls to record as sent before they are sent (see :meth:`_Writer.mark_sent`)."""

    entries: list[tuple[_Job, float]]
    ledger: str
    max_usd: float | None
    done: concurrent.futures.Future


_save_lock = _claims.write_lock  # writers of concurrent batches in one process take turns (no write conflicts)


def _save(workspace: Path, rows: list[dict], run_id: int | None) -> None:
    from lsqa.store import llm_calls, prompt_texts, write

    with write(workspace) as con:
        texts: dict[str, str] = {}
        for row in rows:
            texts.update(row["texts"])
        prompt_texts.save_texts(con, texts)
        llm_calls.save_calls(con, rows)
        _claims.release_in(con, [r["cache_key"] for r in rows])
        llm_calls.resolve_in_flight(con, [r["cache_key"] for r in rows], _claims.owner())
        _claims.renew_in(con)
        if run_id is not None:
            made = [r for r in rows if r["status"] == "ok"]
            # Charged: the answered calls, and the failed ones the provider answered (usage_note says so).
            charged = [r for r in rows if r["status"] == "ok" or r["usage_note"]]
            known = [r["cost_usd"] for r in charged if r["cost_usd"] is not None]
            llm_calls.add_to_run(
                con, run_id, made=len(made), failed=len(rows) - len(made),
                prompt_tokens=sum(r["prompt_tokens"] or 0 for r in made),
                completion_tokens=sum(r["completion_tokens"] or 0 for r in made),
                cached_prompt_tokens=sum(r["cached_prompt_tokens"] or 0 for r in made),
                cost_usd=sum(known) if known else None, cost_unknown=len(charged) - len(known),
            )


def _stored_prompt(request: LLMRequest, env_secrets: Sequence[str]) -> tuple[str | None, str | None, dict]:
    """(messages, prompt_parts, texts) as stored: long contexts by reference when the request names
    them, the whole prompt otherwise or when a secret value would have to be removed."""
    contents = [m.get("content") for m in request.messages]
    has_secret = any(isinstance(c, str) and v in c for c in contents for v in env_secrets)
    if request.contexts and not has_secret:
        parts, texts = prompt_parts.split_messages(request.messages, request.contexts)
        if parts is not None:
            return None, canonical_json(parts), texts
    return remove_env_secrets(canonical_json(request.messages), env_secrets), None, {}


def _row(job: _Job, result: LLMResult, run_id: int | None, env_secrets: Sequence[str]) -> dict:
    req = job.request
    messages, parts, texts = _stored_prompt(req, env_secrets)
    return {
        "cache_key": job.key,
        "model": req.model,
        "prompt_id": req.prompt_id or "",
        "prompt_version": str(req.prompt_version or ""),
        "messages": messages,
        "prompt_parts": parts,
        "texts": texts,
        "params": scrub(canonical_json(storable_params(req.params)), env_secrets),
        "response": remove_env_secrets(result.text, env_secrets),
        "status": result.status,
        "error_kind": result.error_kind,
        "error_message": scrub(result.error_message, env_secrets),
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "cached_prompt_tokens": result.cached_prompt_tokens,
        "cost_usd": result.cost_usd,
        "latency_s": result.latency_s,
        "run_id": run_id,
        "attempts": result.attempts,
        "usage_note": result.usage_note,
    }


def _from_cache(row: dict, key: str) -> LLMResult:
    return LLMResult(
        text=row["response"], status="ok", prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"], cached_prompt_tokens=row["cached_prompt_tokens"], cost_usd=0.0, latency_s=0.0, cached=True,
        cache_key=key, model=row["model"], attempts=0,
    )


# ---------------------------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------------------------


class _Progress:
    def __init__(self, total: int, callback: Callable[[int, int], None] | None, show_bar: bool):
        self.total, self.done, self.callback = total, 0, callback
        self.bar = None
        if show_bar:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="LLM calls", unit="call", dynamic_ncols=True)

    def advance(self, n: int) -> None:
        if n <= 0:
            return
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        if self.callback is not None:
            self.callback(self.done, self.total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ---------------------------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------------------------


def _validate(request: LLMRequest) -> None:
    if not isinstance(request, LLMRequest):
        raise TypeError(f"expected an LLMRequest, got {type(request).__name__}")
    if not request.model or not isinstance(request.model, str):
        raise ValueError("LLMRequest.model must be a litellm model string such as 'openai/gpt-4o-mini'")
    if not isinstance(request.messages, list) or not all(isinstance(m, dict) and "role" in m for m in request.messages):
        raise ValueError(f"LLMRequest.messages for {request.model} must be a list of {{'role', 'content'}} dicts")


def complete_many(
    workspace: str | Path,
    requests: Iterable[LLMRequest],
    *,
    max_concurrency: int | Mapping[str, int] = DEFAULT_MAX_CONCURRENCY,
    use_cache: bool = True,
    run_id: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    show_bar: bool = False,
    retry: RetryPolicy = RetryPolicy(),
    budget: Budget | None = None,
    ledger: str | None = None,
) -> Results:
    """Answer ``requests`` (results in the same order), each at most once per workspace.

    Cached calls are looked up in one query; the rest run concurrently, at most
    ``max_concurrency`` in flight per model (an int, or a mapping model → limit with an optional
    ``"*"`` default). Identical requests in one batch are sent once (the copies count as cached).
    ``progress(done, total)`` is called in the calling thread as calls finish (cache hits first);
    ``show_bar`` draws a tqdm bar on stderr. Requests with ``mode="batch"`` go through the
    providers' batch APIs after the others (:mod:`lsqa.llm.batch`; this call then waits until
    their batches are done, and a rerun after a kill picks the batches up). With ``run_id``, the run's counters in ``runs`` are
    updated in the same transactions that store the calls. Failures are results with
    ``status="error"``, never exceptions; an exception means the workspace could not be written.

    A call another process is making right now (claimed in the workspace, :mod:`lsqa.llm.claims`)
    is not sent again: this call waits for its result (returned as cached). With ``budget``, a
    call that could take the spending past it is not sent: its result has ``error_kind="budget"``.

    Every call to a paid model is recorded in the workspace as sent before it is sent
    (``calls_in_flight``, under ``ledger`` — the study id whose spending it is, the budget's
    ledger when there is a budget — at its worst case when litellm prices the model), so a
    ``kill -9`` cannot hide what the provider answered (:class:`_SentMarks`).
    """
    workspace = Path(workspace)
    requests = list(requests)
    for request in requests:
        _validate(request)
    started = time.monotonic()
    results: list[LLMResult | None] = [None] * len(requests)
    jobs = _jobs_of(requests)
    hits: dict[str, dict] = {}
    if use_cache and jobs:
        from lsqa.store import connect, llm_calls

        with connect(workspace) as con:
            hits = llm_calls.cached_ok(con, list(jobs))
    tracker = _Progress(len(requests), progress, show_bar)
    writers: list[_Writer] = []
    try:
        _take_hits(workspace, jobs, hits, results, run_id, tracker)
        ledger = _price_jobs(jobs.values(), budget, ledger)
        pending = [job for job in jobs.values() if job.request.mode != "batch"]
        with _gil_switching:
            while pending:
                pending = _send_or_wait(workspace, jobs, pending, results, writers, max_concurrency, retry, run_id,
                                        tracker, budget, ledger, use_cache)
        # Batch-mode calls go through the providers' batch APIs after the online ones; a rerun
        # picks up their open batches, and a second run at once waits for and adopts the first
        # run's batch (lsqa.llm.batch claims each batch's submission).
        batched = [job for job in jobs.values() if job.request.mode == "batch"]
        if batched:
            _run_batch_jobs(workspace, batched, results, run_id, tracker, budget)
    finally:
        tracker.close()
    out = Results(results)  # type: ignore[arg-type]
    out.elapsed_s = time.monotonic() - started
    for writer in writers:
        out.store_writes += writer.writes
        out.sent_record_writes += writer.mark_transactions
        out.store_write_s += writer.write_seconds
        out.store_max_delay_s = max(out.store_max_delay_s, writer.max_delay_s)
    return out


def _jobs_of(requests: list[LLMRequest]) -> dict[str, _Job]:
    """The distinct calls of ``requests`` by cache key, each with the indices it answers: identical
    requests in one batch are sent once."""
    jobs: dict[str, _Job] = {}
    for i, request in enumerate(requests):
        key = cache_key(request)
        if key in jobs:
            jobs[key].indices.append(i)
        else:
            jobs[key] = _Job(request, key, [i])
    return jobs


def _take_hits(workspace: Path, jobs: dict[str, _Job], hits: dict[str, dict], results: list, run_id: int | None,
               tracker: "_Progress") -> None:
    """Answer the jobs found in the cache (``hits``) from it and drop them from ``jobs``, counting
    them as cached in the run and the progress."""
    n_hits = 0
    for key, row in hits.items():
        for i in jobs.pop(key).indices:
            results[i] = _from_cache(row, key)
            n_hits += 1
    if run_id is not None and n_hits:
        from lsqa.store import llm_calls, write

        with write(workspace) as con:
            llm_calls.add_to_run(con, run_id, cached=n_hits)
    tracker.advance(n_hits)


def _price_jobs(jobs: Iterable[_Job], budget: Budget | None, ledger: str | None) -> str | None:
    """Set each job's bound (what the budget reserves) and worst case (what its record of being sent
    counts), and return the ledger the calls are recorded under (the budget's when it names one).
    With a budget an unpriced model stops here, before any call."""
    if budget is not None:
        for job in jobs:
            job.bound_usd = budget.bound(job.request)
            job.worst_usd = job.bound_usd
        return budget.ledger or ledger
    counter = _bound_counter()
    for job in jobs:
        if provider_of(job.request.model) not in OFFLINE_PROVIDERS:
            job.worst_usd = _worst_case(job.request, counter)
            if job.request.mode != "batch":
                job.bound_usd = job.worst_usd or 0.0
    return ledger


def _send_or_wait(workspace: Path, jobs: dict[str, _Job], pending: list[_Job], results: list, writers: list,
                  max_concurrency, retry: RetryPolicy, run_id: int | None, tracker: "_Progress",
                  budget: Budget | None, ledger: str | None, use_cache: bool) -> list[_Job]:
    """One round of the online calls: claim the pending ones, make those claimed here (their writer
    appended to ``writers``), mark those an open provider batch holds, and wait for those another
    process claimed; returns the jobs to claim again (their claimant failed or died)."""
    mine, batched = (_claims.claim_unbatched(workspace, [j.key for j in pending]) if use_cache
                     else ({j.key for j in pending}, {}))
    for job in pending:
        if job.key in batched:
            _place(job, _in_batch(job, batched[job.key]), results)
            tracker.advance(len(job.indices))
    try:
        ours = [j for j in pending if j.key in mine]
        if ours:
            writers.append(_run_calls(workspace, ours, results, max_concurrency, retry, run_id, tracker,
                                      budget, ledger or ""))
    finally:
        # Kept claims are those of calls not stored: refused by the budget, or interrupted.
        _claims.release(workspace, [k for k in mine if results[jobs[k].indices[0]] is None
                                    or results[jobs[k].indices[0]].error_kind == "budget"])
    return _wait_for_others(workspace, [j for j in pending if j.key not in mine and j.key not in batched],
                            results, run_id, tracker)


_counter: pricing.TokenCounter | None = None
_COUNTER_TEXTS = 20_000


def _bound_counter() -> pricing.TokenCounter:
    """The token counter of the records made without a budget, shared by the calls of a process:
    a run sends its requests in chunks (lsqa.study.pipeline), and a whole book's tokens, counted
    once, take seconds (docs/benchmarks-log/2026-12-06-figures-from-code-comments.md). A fresh one after
    ``_COUNTER_TEXTS`` texts, so a long-lived dashboard process keeps no more than that."""
    global _counter
    if _counter is None or len(_counter) > _COUNTER_TEXTS:
        _counter = pricing.TokenCounter()
    return _counter


def _worst_case(request: LLMRequest, counter: "pricing.TokenCounter") -> float | None:
    """The most ``request`` can cost (at the batch rates in batch mode), as its record of being sent
    counts it without a budget; None when litellm cannot price it (the record then counts the call
    at no amount)."""
    cost = pricing.call_cost(request.model, counter.request_tokens(request), pricing.max_output_tokens(request),
                             batch=request.mode == "batch")
    return float(cost) if cost is not None else None


def _place(job: _Job, result: LLMResult, results: list) -> int:
    """Put ``result`` at every index of ``job``; the copies of a request sent once count as
    cached. Returns how many copies got an answer."""
    first, *copies = job.indices
    results[first] = result
    for i in copies:  # the same request twice in one batch: sent once
        results[i] = LLMResult(**{**result.__dict__, "cached": result.ok,
                                  "cost_usd": 0.0 if result.ok else None, "latency_s": 0.0,
                                  "usage_note": ""})
    return len(copies) if result.ok else 0


def _run_batch_jobs(workspace: Path, jobs: list[_Job], results: list, run_id: int | None, tracker: "_Progress",
                    budget: Budget | None = None) -> None:
    """The calls of ``mode = "batch"`` requests, through the providers' batch APIs
    (:mod:`lsqa.llm.batch`), stored in ``llm_calls`` and counted in the run like any other.

    With ``budget``, a new batch holds only the calls whose worst cases fit in it, reserved before
    the batch is written (and counted at their worst case in the ledger while it is open); the
    others come back with ``error_kind="budget"``, never submitted."""
    from lsqa.llm import batch

    run = _BatchRun(workspace, jobs, results, run_id, tracker, budget)
    batch.run_batches(workspace, [batch.BatchJob(job.key, job.request.model, job.request.messages,
                                                 dict(job.request.params)) for job in jobs],
                      run.store, run_id=run_id, adopt_results=run.adopt, admit=run.admit,
                      ledger=budget.ledger if budget is not None else None, held_elsewhere=run.held_elsewhere)


class _BatchRun:
    """What ``_run_batch_jobs`` hands :func:`lsqa.llm.batch.run_batches`: the callbacks that admit
    calls into a new batch, store a collected one, adopt another run's and mark those held elsewhere."""

    def __init__(self, workspace: Path, jobs: list[_Job], results: list, run_id: int | None, tracker: "_Progress",
                 budget: Budget | None):
        self.workspace, self.results, self.run_id, self.tracker, self.budget = (workspace, results, run_id,
                                                                                 tracker, budget)
        self.by_key = {job.key: job for job in jobs}
        self.env_secrets = secret_env_values()
        self.reserved: dict[str, float] = {}

    def admit(self, keys: list[str], ledger_usd: float) -> tuple[list[str], float]:
        """The keys a new batch may hold, and the most they can cost together: each fits this run's
        budget and the ledger as the workspace holds it (``ledger_usd``, other runs included)."""
        budget = self.budget
        if budget is None:
            return keys, 0.0
        kept, total = [], 0.0
        for key in keys:
            job = self.by_key[key]
            amount = budget.reserve(job.bound_usd)
            if amount is not None and ledger_usd + total + amount > budget.max_usd + 1e-12:
                budget.settle(amount, 0.0)
                budget.refused += 1
                amount = None
            if amount is None:
                _place(job, LLMResult(text=None, status="error", error_kind="budget", cache_key=key,
                                      model=job.request.model,
                                      error_message=f"{job.request.model}: not put in a batch, it could pass the "
                                                    f"budget ({budget.describe()})"), self.results)
                self.tracker.advance(len(job.indices))
                continue
            job.reserved_usd = self.reserved[key] = amount
            kept.append(key)
            total += amount
        return kept, total

    def store(self, finished: list[tuple[str, LLMResult]]) -> None:
        """Store a batch's collected calls (a suspect usage counted at its worst case), settle their
        reservations and answer their requests, counted in the run and the progress."""
        by_key = self.by_key
        for i, (key, result) in enumerate(finished):
            if result.ok:
                cost, note = _worst_if_suspect(by_key[key], result.cost_usd, result.usage_note)
                if note:
                    finished[i] = (key, LLMResult(**{**result.__dict__, "cost_usd": cost, "usage_note": note}))
        rows = [_row(by_key[key], result, self.run_id, self.env_secrets) for key, result in finished]
        with _save_lock:
            _save(self.workspace, rows, self.run_id)
        if self.budget is not None:
            for key, result in finished:
                if key in self.reserved:
                    self.budget.settle(self.reserved.pop(key), result.cost_usd if result.ok else 0.0,
                                       by_key[key].bound_usd)
        copies = sum(_place(by_key[key], result, self.results) for key, result in finished)
        if self.run_id is not None and copies:
            from lsqa.store import llm_calls, write

            with write(self.workspace) as con:
                llm_calls.add_to_run(con, self.run_id, cached=copies)
        self.tracker.advance(sum(len(by_key[key].indices) for key, _ in finished))

    def adopt(self, keys: list[str], batch_id: str) -> None:
        """Calls of a batch another run submitted and collected: taken from the cache, like hits."""
        from lsqa.store import connect, llm_calls, write

        with connect(self.workspace) as con:
            hits = llm_calls.cached_ok(con, keys)
        n_hits = 0
        for key in keys:
            job = self.by_key[key]
            if key in hits:
                for i in job.indices:
                    self.results[i] = _from_cache(hits[key], key)
                n_hits += len(job.indices)
            else:  # a failed line: the run that collected the batch stored the failure
                _place(job, LLMResult(text=None, status="error", error_kind="provider", cache_key=key,
                                      model=job.request.model, error_message=f"{job.request.model}: batch "
                                      f"{batch_id} (collected by another run) has no answer for this call"),
                       self.results)
        if self.run_id is not None and n_hits:
            with write(self.workspace) as con:
                llm_calls.add_to_run(con, self.run_id, cached=n_hits)
        self.tracker.advance(sum(len(self.by_key[key].indices) for key in keys))

    def held_elsewhere(self, batches: dict[str, dict]) -> None:
        """Calls a batch sent through another server holds: not sent again, not stored."""
        for key, held in batches.items():
            _place(self.by_key[key], _in_batch(self.by_key[key], held), self.results)
            self.tracker.advance(len(self.by_key[key].indices))


def _in_batch(job: _Job, batch: dict) -> LLMResult:
    """The result of a call that an unfinished provider batch holds and this run cannot collect (it
    sends one by one, or through another server): not sent (it would be paid twice), not stored; a
    run once that batch is collected finds its answer in the cache."""
    model = job.request.model
    which = f"provider batch {batch['batch_id']}" if batch["batch_id"] else f"a batch being submitted ({batch['id']})"
    study = f" of study {batch['ledger']}" if batch.get("ledger") else ""
    return LLMResult(text=None, status="error", error_kind="in_batch", cache_key=job.key, model=model,
                     error_message=f"{model}: not sent: this call is in {which}{study}, still open; a run of "
                                   "that study collects it, and a run after that finds the answer in the cache")


def _wait_for_others(workspace: Path, theirs: list[_Job], results, run_id, tracker) -> list[_Job]:
    """Wait until another run's claimed calls are stored (taken from the cache, like hits) or their
    claims go away; return the jobs to claim again (their maker failed or died)."""
    from lsqa.store import llm_calls, write

    while theirs:
        hits, gone = _claims.poll_claimed(workspace, [j.key for j in theirs])
        n_hits = 0
        for job in theirs:
            if job.key in hits:
                for i in job.indices:
                    results[i] = _from_cache(hits[job.key], job.key)
                    n_hits += 1
        if run_id is not None and n_hits:
            with write(workspace) as con:
                llm_calls.add_to_run(con, run_id, cached=n_hits)
        tracker.advance(n_hits)
        theirs = [j for j in theirs if j.key not in hits]
        if gone:
            return theirs  # some claim went away without a result: claim and make those calls here
    return []

def _run_calls(workspace, jobs, results, max_concurrency, retry, run_id, tracker, budget=None,
               ledger: str = "") -> "_Writer":
    litellm()  # import and configure before the loop needs it (and before timing starts)
    loop = _event_loop()
    if threading.current_thread().name == _LOOP_THREAD:
        raise RuntimeError("lsqa.llm.complete_many was called from its own event loop; use a worker thread")
    writer = _Writer(workspace, run_id)
    finished: queue.SimpleQueue = queue.SimpleQueue()

    def on_done(job: _Job, result: LLMResult) -> None:  # on the event loop thread
        if result.error_kind != "budget":  # not sent: nothing to store
            writer.put(job, result)
        finished.put((job, result))

    # Checked against the workspace's ledger only when the budget names one (a study's).
    max_usd = budget.max_usd if budget is not None and budget.ledger else None
    marks = _SentMarks(jobs, max_concurrency, budget,
                       lambda entries: writer.mark_sent(entries, ledger, max_usd))
    future = asyncio.run_coroutine_threadsafe(_run_jobs(jobs, max_concurrency, retry, on_done, budget, marks), loop)
    remaining = len(jobs)
    extra_copies = 0
    try:
        while remaining:
            try:
                batch = [finished.get(timeout=0.2)]
            except queue.Empty:
                if future.done() and finished.empty():
                    future.result()  # raises what broke the batch
                    break
                continue
            while True:
                try:
                    batch.append(finished.get_nowait())
                except queue.Empty:
                    break
            for job, result in batch:
                remaining -= 1
                extra_copies += _place(job, result, results)
            tracker.advance(sum(len(job.indices) for job, _ in batch))
            if remaining:
                time.sleep(PROGRESS_INTERVAL_S)  # wake up a few times a second, not once per call
        future.result()
    except BaseException:
        future.cancel()  # Ctrl-C or an error: stop the calls in flight, keep what finished
        raise
    finally:
        writer.close()
        unsent = marks.unsent_keys() if future.done() and not future.cancelled() else []
        if (run_id is not None and extra_copies) or unsent:
            from lsqa.store import llm_calls, write

            with _save_lock, write(workspace) as con:
                if run_id is not None and extra_copies:
                    llm_calls.add_to_run(con, run_id, cached=extra_copies)
                # Recorded ahead and refused at their turn (budget): never sent. After an error or a
                # Ctrl-C the records stay (a call may be leaving as this runs): spend over-stated.
                llm_calls.resolve_in_flight(con, unsent, _claims.owner())
    if writer.error is not None:
        raise LsqaError(f"could not store LLM calls in {workspace}: {writer.error}") from writer.error
    log.debug("stored %d calls in %d writes (%.3f s); recorded as sent in %d", len(jobs), writer.writes,
              writer.write_seconds, marks.transactions)
    writer.mark_transactions = marks.transactions
    return writer


def complete(
    workspace: str | Path,
    request: LLMRequest,
    *,
    use_cache: bool = True,
    run_id: int | None = None,
    retry: RetryPolicy = RetryPolicy(),
) -> LLMResult:
    """One request (see :func:`complete_many`)."""
    return complete_many(workspace, [request], use_cache=use_cache, run_id=run_id, retry=retry)[0]


async def acomplete(workspace: str | Path, request: LLMRequest, **kwargs) -> LLMResult:
    """:func:`complete` for async callers (runs in a worker thread; the calls themselves run on
    lsqa's own event loop)."""
    return await asyncio.to_thread(complete, workspace, request, **kwargs)


async def acomplete_many(workspace: str | Path, requests: Iterable[LLMRequest], **kwargs) -> Results:
    """:func:`complete_many` for async callers; ``progress`` is called from a worker thread."""
    return await asyncio.to_thread(complete_many, workspace, list(requests), **kwargs)


def embedded_models() -> dict[str, str]:
    """The embedded offline models, name → what it does (no litellm import needed)."""
    from lsqa.llm.embedded import EMBEDDED_MODELS

    return dict(EMBEDDED_MODELS)

