"""LLM access for every stage: one call shape, any litellm provider, cached, resumable, fault-tolerant.

Question generation (Bohnet et al. §2, Fig. 8), the QA systems (§4, Figs. 9-11, 14-16) and the
judges (§3, Figs. 12-13, 17-20) all call :func:`complete_many` (or :func:`complete`) with
:class:`LLMRequest` objects; this is the only module in lsqa that imports litellm.

* **Models**: any litellm model string (``gemini/...``, ``openai/...``, ``anthropic/...``,
  ``hosted_vllm/...``, ``ollama/...``, ``openai/<name>`` + ``api_base``), or an embedded one
  (``lsqa/extractive``, ``lsqa/lexical-judge``, ``lsqa/template-questions``,
  ``local/smollm2-135m``; see :mod:`lsqa.offline`). API keys come from litellm's usual
  environment variables only and are never stored or logged.
* **Cache**: every finished call is a row of ``llm_calls`` keyed by the sha256 of (model,
  messages, parameters without transport settings such as ``api_base`` or ``timeout``). A repeated
  call returns the stored completion (``cached=True``) and costs nothing; only ``ok`` rows are
  served, failed calls are recorded and tried again next time. ``use_cache=False`` forces a call.
* **Retries**: exponential backoff with jitter on rate limits, timeouts, connection errors, 5xx
  and unreadable responses; none on other 4xx (bad key, bad request). litellm's own retries are
  off, the policy is :class:`RetryPolicy`.
* **Concurrency**: asyncio with at most ``max_concurrency`` calls in flight per model, on one
  background event loop per process (litellm's async HTTP clients stay bound to it).
* **Resume**: each finished call is written as it finishes (a writer thread commits what has
  finished every ``FLUSH_INTERVAL_S`` with a short-lived connection, so the workspace stays free
  for the dashboard in between). A killed run loses only the calls in flight; the next run
  answers the finished ones from the cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import queue
import random
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from lsqa.errors import LsqaError

OFFLINE_PROVIDERS = ("lsqa", "local")

# Settings that change how a request travels, not what it asks: left out of the cache key.
TRANSPORT_PARAMS = frozenset(
    {
        "api_base", "base_url", "api_key", "api_version", "organization", "timeout", "request_timeout",
        "stream_timeout", "num_retries", "max_retries", "extra_headers", "headers", "metadata",
        "aws_access_key_id", "aws_secret_access_key", "aws_session_token", "aws_region_name",
        "vertex_project", "vertex_location", "vertex_credentials", "azure_ad_token",
    }
)
# Parameter names that may hold a secret: never stored (their value is sent, of course).
_SECRET_PARAM = re.compile(r"api_key|secret|password|credential|session_token|ad_token|access_key|authorization|^headers$|^extra_headers$", re.I)
# Key-looking strings in provider error text (the exact values of secret env variables are removed too).
_SECRET_TEXT = (
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"\b(?:hf|gsk|xai|ghp|gho|glpat)[_-][A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]+=*"),
    re.compile(r"(?i)\b((?:api[_-]?)?key|token|secret|password)(\s*[=:]\s*)['\"]?[^\s'\"&,;]{6,}"),
)
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)

FLUSH_INTERVAL_S = float(os.environ.get("LSQA_LLM_FLUSH_S", "0.2"))
DEFAULT_MAX_CONCURRENCY = 8
PROGRESS_INTERVAL_S = 0.05  # the calling thread collects finished calls (and reports progress) this often

log = logging.getLogger("lsqa.llm")


# ---------------------------------------------------------------------------------------------
# Public data types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LLMRequest:
    """One call: a litellm model string, chat messages and generation parameters.

    ``params`` may also carry transport settings (``api_base``, ``timeout``); they are sent but
    do not enter the cache key. ``prompt_id``/``prompt_version`` are stored with the call.
    """

    model: str
    messages: list[dict]
    params: dict = field(default_factory=dict)
    prompt_id: str = ""
    prompt_version: str = ""


@dataclass
class LLMResult:
    """The outcome of one request. ``status`` is ``ok`` or ``error``; on error ``text`` is None,
    ``error_kind`` one of ``rate_limit``, ``timeout``, ``connection``, ``server``, ``bad_response``,
    ``auth``, ``bad_request``, ``not_found``, ``context_window``, ``content_policy``, ``provider``,
    and ``error_message`` names the model and the cause.

    Tokens and cost are None when unknown, never a made-up 0. ``latency_s`` is the duration of
    the last attempt. A cached result carries the token counts of the original call, ``cost_usd``
    0.0 and ``latency_s`` 0.0 (nothing was paid or waited for); ``attempts`` counts the tries
    this call took (0 when cached).
    """

    text: str | None
    status: str
    error_kind: str = ""
    error_message: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float = 0.0
    cached: bool = False
    cache_key: str = ""
    model: str = ""
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def raise_for_status(self) -> "LLMResult":
        if not self.ok:
            raise LLMError(self.error_message or f"{self.model}: {self.error_kind}")
        return self


class LLMError(LsqaError):
    """A call that failed for good (raised only by :meth:`LLMResult.raise_for_status`)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How failures are retried. The n-th retry waits ``initial_delay_s * multiplier**(n-1)``
    capped at ``max_delay_s``, scaled by a random factor in ``[1 - jitter, 1]`` (so parallel
    callers spread out), and at least as long as a ``Retry-After`` header asks (within the cap).
    ``timeout_s`` bounds each attempt unless the request's params give ``timeout``."""

    max_attempts: int = 6
    initial_delay_s: float = 1.0
    max_delay_s: float = 60.0
    multiplier: float = 2.0
    jitter: float = 0.5
    timeout_s: float = 600.0

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        base = min(self.max_delay_s, self.initial_delay_s * self.multiplier ** max(0, retry - 1))
        wait = base * (1.0 - self.jitter * random.random())
        if retry_after:
            wait = max(wait, min(retry_after, self.max_delay_s))
        return wait


RETRYABLE = frozenset({"rate_limit", "timeout", "connection", "server", "bad_response"})


@dataclass
class RunTotals:
    """What a batch of calls cost.

    ``calls_made`` were sent and answered, ``calls_failed`` were sent and failed for good,
    ``calls_cached`` came from the workspace (made + cached + failed = requests). Tokens and cost
    count calls made now only. ``cost_usd`` is None when any call made had no known price (an
    unknown model or no usage reported); ``cost_usd_known`` is the sum of the known prices and
    ``calls_cost_unknown`` says how many are missing from it. ``elapsed_s`` is the wall time of
    the batch (None if unknown).
    """

    calls_made: int = 0
    calls_cached: int = 0
    calls_failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    cost_usd_known: float = 0.0
    calls_cost_unknown: int = 0
    elapsed_s: float | None = None


class Results(list):
    """The results of :func:`complete_many`, in request order, with the batch's wall time and
    how it used the workspace: ``store_writes`` commits holding the file ``store_write_s`` seconds
    in total, a finished call committed at most ``store_max_delay_s`` after it finished."""

    elapsed_s: float | None = None
    store_writes: int = 0
    store_write_s: float = 0.0
    store_max_delay_s: float = 0.0

    def totals(self) -> RunTotals:
        return totals(self)


def totals(results: Iterable[LLMResult], elapsed_s: float | None = None) -> RunTotals:
    """Counts, tokens and cost of ``results`` (see :class:`RunTotals`)."""
    t = RunTotals(elapsed_s=elapsed_s if elapsed_s is not None else getattr(results, "elapsed_s", None))
    for r in results:
        if r.cached:
            t.calls_cached += 1
            continue
        if not r.ok:
            t.calls_failed += 1
            continue
        t.calls_made += 1
        t.prompt_tokens += r.prompt_tokens or 0
        t.completion_tokens += r.completion_tokens or 0
        if r.cost_usd is None:
            t.calls_cost_unknown += 1
        else:
            t.cost_usd_known += r.cost_usd
    t.cost_usd = None if t.calls_cost_unknown else t.cost_usd_known
    return t


# ---------------------------------------------------------------------------------------------
# Keys, parameters, secrets
# ---------------------------------------------------------------------------------------------


def semantic_params(params: Mapping) -> dict:
    """The parameters that shape the completion (what the cache key covers)."""
    return {k: v for k, v in params.items() if k not in TRANSPORT_PARAMS}


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def cache_key(request: LLMRequest) -> str:
    """sha256 of (model, messages, parameters without transport settings)."""
    payload = _canonical({"model": request.model, "messages": request.messages, "params": semantic_params(request.params)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _secret_env_values() -> list[str]:
    return sorted(
        {v for k, v in os.environ.items() if _SECRET_ENV.search(k) and v and len(v) >= 8},
        key=len,
        reverse=True,
    )


def scrub(text: str, env_values: Sequence[str] | None = None) -> str:
    """``text`` with API-key-looking strings and the values of secret env variables removed."""
    if not text:
        return text
    for value in _secret_env_values() if env_values is None else env_values:
        text = text.replace(value, "[redacted]")
    for pattern in _SECRET_TEXT:
        if pattern.groups >= 2:
            text = pattern.sub(lambda m: m.group(1) + m.group(2) + "[redacted]", text)
        else:
            text = pattern.sub("[redacted]", text)
    return text


def storable_params(params: Mapping) -> dict:
    """Parameters as stored with a call: secret-bearing settings dropped."""
    return {k: v for k, v in params.items() if not _SECRET_PARAM.search(k)}


def _remove_env_secrets(text: str | None, env_values: Sequence[str]) -> str | None:
    if not text:
        return text
    for value in env_values:
        if value in text:
            text = text.replace(value, "[redacted]")
    return text


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


# ---------------------------------------------------------------------------------------------
# litellm, imported lazily and configured once
# ---------------------------------------------------------------------------------------------

_litellm_module = None
_litellm_lock = threading.Lock()


def litellm():
    """The litellm module, imported on first use (it takes ~3 s) and configured for lsqa:
    the bundled price map (no download), no telemetry, no log output, no retries of its own,
    the embedded providers registered."""
    global _litellm_module
    if _litellm_module is None:
        with _litellm_lock:
            if _litellm_module is None:
                # Never fetch the price map at import: nothing downloads at run time.
                os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
                os.environ.setdefault("LITELLM_DISABLE_BUG_REPORT_LINK", "true")
                os.environ.setdefault("LITELLM_LOG", "CRITICAL")
                import litellm as module

                module.telemetry = False
                module.suppress_debug_info = True
                module.set_verbose = False
                module.num_retries = 0
                for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx", "openai", "aiohttp"):
                    logging.getLogger(name).setLevel(logging.CRITICAL)
                from lsqa import offline

                offline.register(module)
                _litellm_module = module
    return _litellm_module


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

_KIND_TEXT = {
    "rate_limit": "rate limited",
    "timeout": "timed out",
    "connection": "could not connect",
    "server": "server error",
    "bad_response": "unreadable response",
    "auth": "authentication failed (check the API key variable)",
    "bad_request": "bad request",
    "not_found": "model or endpoint not found",
    "context_window": "prompt longer than the model's context window",
    "content_policy": "refused by the provider's content policy",
    "provider": "provider error",
}


_MISSING_KEY = re.compile(r"(?i)missing (?:\w+ )?(?:credentials|api[ _]?key)|no api[ _]?key|api[ _]?key (?:is )?not (?:found|set)")
_NO_CONNECTION = re.compile(r"(?i)connection error|connection refused|cannot connect|name or service not known|"
                            r"nodename nor servname|temporary failure in name resolution|connect call failed")


def classify(exc: BaseException) -> tuple[str, int | None, float | None]:
    """(error kind, HTTP status if any, Retry-After seconds if any) for an exception from litellm."""
    ll = litellm()
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = None
    retry_after = None
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        if headers and headers.get("retry-after"):
            retry_after = float(headers.get("retry-after"))
    except (TypeError, ValueError):
        retry_after = None
    message = str(exc)
    if isinstance(exc, (ll.Timeout, asyncio.TimeoutError, TimeoutError)):
        kind = "timeout"
    elif _MISSING_KEY.search(message):
        kind, status = "auth", None  # litellm reports some missing keys as 500s; retrying cannot help
    elif _NO_CONNECTION.search(message):
        kind, status = "connection", None
    elif isinstance(exc, ll.RateLimitError):
        kind = "rate_limit"
    elif isinstance(exc, ll.ContextWindowExceededError):
        kind = "context_window"
    elif isinstance(exc, ll.ContentPolicyViolationError):
        kind = "content_policy"
    elif isinstance(exc, (ll.AuthenticationError, ll.PermissionDeniedError)):
        kind = "auth"
    elif isinstance(exc, ll.NotFoundError):
        kind = "not_found"
    elif isinstance(exc, (ll.BadRequestError, ll.UnprocessableEntityError)):
        kind = "bad_request"
    elif "invalid response" in message or "no 'choices'" in message or "JSONDecodeError" in message:
        kind = "bad_response"
    elif isinstance(exc, (ll.InternalServerError, ll.ServiceUnavailableError)):
        kind = "server"
    elif isinstance(exc, ll.APIConnectionError):
        kind, status = "connection", None  # litellm labels these 500; no HTTP answer came back
    elif status and status >= 500:
        kind = "server"
    elif status == 429:
        kind = "rate_limit"
    elif status in (401, 403):
        kind = "auth"
    elif status == 404:
        kind = "not_found"
    elif status and 400 <= status < 500:
        kind = "bad_request"
    else:
        kind = "provider"
    return kind, status, retry_after


def _error_text(model: str, kind: str, status: int | None, exc: BaseException, attempts: int) -> str:
    cause = f"{_KIND_TEXT.get(kind, kind)}" + (f" (HTTP {status})" if status else "")
    detail = " ".join(str(exc).split())[:1000]
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return scrub(f"{model}: {cause}{tries}: {type(exc).__name__}: {detail}")


# ---------------------------------------------------------------------------------------------
# One call with retries (runs on the background event loop)
# ---------------------------------------------------------------------------------------------


@dataclass
class _Job:
    """One distinct request of a batch: its cache key and where its result goes in the output."""

    request: LLMRequest
    key: str
    indices: list[int]


def _usage(response) -> tuple[int | None, int | None]:
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if not prompt and not completion:
        return None, None  # litellm reports 0/0 when the provider sent no usage: unknown, not free
    return prompt, completion


async def _call(job: _Job, semaphore: asyncio.Semaphore, retry: RetryPolicy) -> LLMResult:
    ll = litellm()
    req = job.request
    kwargs = dict(req.params)
    kwargs.setdefault("timeout", retry.timeout_s)
    kwargs["num_retries"] = 0  # the retry policy is ours; litellm and the OpenAI SDK must not add theirs
    kwargs["max_retries"] = 0
    offline = provider_of(req.model) in OFFLINE_PROVIDERS
    started = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        try:
            async with semaphore:
                started = time.monotonic()  # latency: this attempt, not the wait for a free slot
                response = await ll.acompletion(model=req.model, messages=req.messages, **kwargs)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every provider failure becomes a result
            kind, status, retry_after = classify(exc)
            if offline and kind == "connection":
                kind = "provider"  # an embedded model raised: a bug to report, not a network blip
            if kind in RETRYABLE and attempts < retry.max_attempts:
                await asyncio.sleep(retry.delay(attempts, retry_after))
                continue
            return LLMResult(
                text=None, status="error", error_kind=kind,
                error_message=_error_text(req.model, kind, status, exc, attempts),
                latency_s=time.monotonic() - started, cache_key=job.key, model=req.model, attempts=attempts,
            )
        choice = response.choices[0] if getattr(response, "choices", None) else None
        text = getattr(getattr(choice, "message", None), "content", None)
        if choice is not None and getattr(choice, "finish_reason", None) == "content_filter" and not text:
            return LLMResult(
                text=None, status="error", error_kind="content_policy",
                error_message=f"{req.model}: {_KIND_TEXT['content_policy']} (finish_reason content_filter)",
                latency_s=time.monotonic() - started, cache_key=job.key, model=req.model, attempts=attempts,
            )
        prompt_tokens, completion_tokens = _usage(response)
        if offline:
            cost = 0.0  # embedded models are free and local
        elif prompt_tokens is None:
            cost = None
        else:
            hidden = getattr(response, "_hidden_params", None) or {}
            cost = hidden.get("response_cost")
            cost = float(cost) if cost is not None else None
        return LLMResult(
            text=text or "", status="ok", prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            cost_usd=cost, latency_s=time.monotonic() - started, cache_key=job.key, model=req.model,
            attempts=attempts,
        )


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


async def _run_jobs(jobs: list[_Job], max_concurrency, retry: RetryPolicy, on_done: Callable[[_Job, LLMResult], None]) -> None:
    semaphores: dict[str, asyncio.Semaphore] = {}
    for job in jobs:
        if job.request.model not in semaphores:
            semaphores[job.request.model] = asyncio.Semaphore(_limit_for(job.request.model, max_concurrency))

    async def one(job: _Job) -> None:
        result = await _call(job, semaphores[job.request.model], retry)
        on_done(job, result)

    tasks = [asyncio.ensure_future(one(job)) for job in jobs]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise


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
        self.env_secrets = _secret_env_values()
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.error: BaseException | None = None
        self.writes = 0
        self.write_seconds = 0.0   # how long the workspace was held, in total
        self.max_delay_s = 0.0     # longest time from a call finishing to its commit
        self.thread = threading.Thread(target=self._loop, name="lsqa-llm-writer", daemon=True)
        self.thread.start()

    def put(self, job: "_Job", result: LLMResult) -> None:
        self.queue.put((job, result, time.monotonic()))

    def close(self) -> None:
        self.queue.put(self._STOP)
        self.thread.join()

    def _loop(self) -> None:
        pending: list[tuple[_Job, LLMResult, float]] = []
        free_until = 0.0  # no write before this time: the file stays free for others meanwhile
        while True:
            wait = None if not pending else max(0.0, free_until - time.monotonic())
            try:
                item = self.queue.get(timeout=wait)
            except queue.Empty:
                item = None
            stop = item is self._STOP
            if item is not None and not stop:
                pending.append(item)
            if pending and (stop or time.monotonic() >= free_until):
                self._write(pending)
                pending = []
                free_until = time.monotonic() + self.interval_s
            if stop:
                return

    def _write(self, finished: list[tuple["_Job", LLMResult, float]]) -> None:
        try:
            # Rows are built here, not on the event loop: serialising a book-length prompt takes
            # milliseconds that the calls in flight should not wait for.
            rows = [_row(job, result, self.run_id, self.env_secrets) for job, result, _ in finished]
            with _save_lock:
                started = time.monotonic()
                _save(self.workspace, rows, self.run_id)
                done = time.monotonic()
            self.writes += 1
            self.write_seconds += done - started
            self.max_delay_s = max(self.max_delay_s, done - min(at for _, _, at in finished))
        except BaseException as exc:  # noqa: BLE001 - reported to the caller at close
            self.error = self.error or exc


_save_lock = threading.Lock()  # writers of concurrent batches in one process take turns (no write conflicts)


def _save(workspace: Path, rows: list[dict], run_id: int | None) -> None:
    from lsqa.store import llm_calls, write

    with write(workspace) as con:
        llm_calls.save_calls(con, rows)
        if run_id is not None:
            made = [r for r in rows if r["status"] == "ok"]
            known = [r["cost_usd"] for r in made if r["cost_usd"] is not None]
            llm_calls.add_to_run(
                con, run_id, made=len(made), failed=len(rows) - len(made),
                prompt_tokens=sum(r["prompt_tokens"] or 0 for r in made),
                completion_tokens=sum(r["completion_tokens"] or 0 for r in made),
                cost_usd=sum(known) if known else None, cost_unknown=len(made) - len(known),
            )


def _row(job: _Job, result: LLMResult, run_id: int | None, env_secrets: Sequence[str]) -> dict:
    req = job.request
    return {
        "cache_key": job.key,
        "model": req.model,
        "prompt_id": req.prompt_id or "",
        "prompt_version": str(req.prompt_version or ""),
        "messages": _remove_env_secrets(_canonical(req.messages), env_secrets),
        "params": scrub(_canonical(storable_params(req.params)), env_secrets),
        "response": _remove_env_secrets(result.text, env_secrets),
        "status": result.status,
        "error_kind": result.error_kind,
        "error_message": scrub(result.error_message, env_secrets),
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "cost_usd": result.cost_usd,
        "latency_s": result.latency_s,
        "run_id": run_id,
        "attempts": result.attempts,
    }


def _from_cache(row: dict, key: str) -> LLMResult:
    return LLMResult(
        text=row["response"], status="ok", prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"], cost_usd=0.0, latency_s=0.0, cached=True,
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
) -> Results:
    """Answer ``requests`` (results in the same order), each at most once per workspace.

    Cached calls are looked up in one query; the rest run concurrently, at most
    ``max_concurrency`` in flight per model (an int, or a mapping model → limit with an optional
    ``"*"`` default). Identical requests in one batch are sent once (the copies count as cached).
    ``progress(done, total)`` is called in the calling thread as calls finish (cache hits first);
    ``show_bar`` draws a tqdm bar on stderr. With ``run_id``, the run's counters in ``runs`` are
    updated in the same transactions that store the calls. Failures are results with
    ``status="error"``, never exceptions; an exception means the workspace could not be written.
    """
    workspace = Path(workspace)
    requests = list(requests)
    for request in requests:
        _validate(request)
    started = time.monotonic()
    results: list[LLMResult | None] = [None] * len(requests)
    jobs: dict[str, _Job] = {}
    for i, request in enumerate(requests):
        key = cache_key(request)
        if key in jobs:
            jobs[key].indices.append(i)
        else:
            jobs[key] = _Job(request, key, [i])

    hits: dict[str, dict] = {}
    if use_cache and jobs:
        from lsqa.store import connect, llm_calls

        with connect(workspace) as con:
            hits = llm_calls.cached_ok(con, list(jobs))
    tracker = _Progress(len(requests), progress, show_bar)
    writer = None
    try:
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
        if jobs:
            writer = _run_calls(workspace, list(jobs.values()), results, max_concurrency, retry, run_id, tracker)
    finally:
        tracker.close()
    out = Results(results)  # type: ignore[arg-type]
    out.elapsed_s = time.monotonic() - started
    if writer is not None:
        out.store_writes, out.store_write_s, out.store_max_delay_s = writer.writes, writer.write_seconds, writer.max_delay_s
    return out


def _run_calls(workspace, jobs, results, max_concurrency, retry, run_id, tracker) -> "_Writer":
    litellm()  # import and configure before the loop needs it (and before timing starts)
    loop = _event_loop()
    if threading.current_thread().name == _LOOP_THREAD:
        raise RuntimeError("lsqa.llm.complete_many was called from its own event loop; use a worker thread")
    writer = _Writer(workspace, run_id)
    finished: queue.SimpleQueue = queue.SimpleQueue()

    def on_done(job: _Job, result: LLMResult) -> None:  # on the event loop thread
        writer.put(job, result)
        finished.put((job, result))

    future = asyncio.run_coroutine_threadsafe(_run_jobs(jobs, max_concurrency, retry, on_done), loop)
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
                first, *copies = job.indices
                results[first] = result
                for i in copies:  # the same request twice in one batch: sent once
                    results[i] = LLMResult(**{**result.__dict__, "cached": result.ok,
                                              "cost_usd": 0.0 if result.ok else None, "latency_s": 0.0})
                    extra_copies += result.ok
            tracker.advance(sum(len(job.indices) for job, _ in batch))
            if remaining:
                time.sleep(PROGRESS_INTERVAL_S)  # wake up a few times a second, not once per call
        future.result()
    except BaseException:
        future.cancel()  # Ctrl-C or an error: stop the calls in flight, keep what finished
        raise
    finally:
        writer.close()
        if run_id is not None and extra_copies:
            from lsqa.store import llm_calls, write

            with write(workspace) as con:
                llm_calls.add_to_run(con, run_id, cached=extra_copies)
    if writer.error is not None:
        raise LsqaError(f"could not store LLM calls in {workspace}: {writer.error}") from writer.error
    log.debug("stored %d calls in %d writes (%.3f s)", len(jobs), writer.writes, writer.write_seconds)
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
    from lsqa.offline import EMBEDDED_MODELS

    return dict(EMBEDDED_MODELS)
