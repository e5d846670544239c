"""The call shape every stage uses: requests, results, retry policy, totals."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Iterable

from lsqa.errors import LsqaError

# ---------------------------------------------------------------------------------------------
# Public data types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LLMRequest:
    """One call: a litellm model string, chat messages and generation parameters.

    ``params`` may also carry transport settings (``api_base``, ``timeout``); they are sent but
    do not enter the cache key. ``prompt_id``/``prompt_version`` are stored with the call.
    ``contexts`` are the long texts inside the messages (a book, retrieved passages in order):
    the call log stores each once and refers to it (:mod:`lsqa.text.prompt_parts`); they change
    neither what is sent nor the cache key.

    ``cache_prefix_chars`` > 0 says the first user message's first that-many characters are a
    prefix shared by many calls (a book): providers that cache only marked prefixes (Anthropic,
    Bedrock, Gemini/Vertex AI) get a ``cache_control`` mark there; it changes neither the
    completion nor the cache key. ``mode="batch"`` sends the call through the provider's batch
    API (:mod:`lsqa.llm.batch`): the same completion, at the batch price, within hours.
    """

    model: str
    messages: list[dict]
    params: dict = field(default_factory=dict)
    prompt_id: str = ""
    prompt_version: str = ""
    contexts: tuple[str, ...] = field(default=(), compare=False, repr=False)
    cache_prefix_chars: int = 0
    mode: str = "online"


@dataclass
class LLMResult:
    """The outcome of one request. ``status`` is ``ok`` or ``error``; on error ``text`` is None,
    ``error_kind`` one of ``rate_limit``, ``timeout``, ``connection``, ``server``, ``bad_response``,
    ``bad_usage`` (answered with usage that is not a number: unreadable, charged at its worst case),
    ``auth``, ``bad_request``, ``not_found``, ``context_window``, ``content_policy``, ``provider``,
    or, for a call not sent, ``budget`` (it could pass the budget) or ``in_batch`` (an unfinished
    provider batch holds it); ``error_message`` names the model and the cause.

    Tokens and cost are None when unknown, never a made-up 0. ``cached_prompt_tokens`` are the
    prompt tokens the provider served from its prompt cache (part of ``prompt_tokens``, priced
    at the provider's cached rate in ``cost_usd``). ``latency_s`` is the duration of
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
    cached_prompt_tokens: int | None = None
    cache_key: str = ""
    model: str = ""
    attempts: int = 0
    usage_note: str = ""  # why the reported usage was not priced (suspect or missing): the call counts at its worst case

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
    count calls made now only (``cached_prompt_tokens``: the part of ``prompt_tokens`` the
    providers served from their prompt caches). ``cost_usd`` is None when any call made had no known price (an
    unknown model or no usage reported); ``cost_usd_known`` is the sum of the known prices and
    ``calls_cost_unknown`` says how many are missing from it. ``elapsed_s`` is the wall time of
    the batch (None if unknown).
    """

    calls_made: int = 0
    calls_cached: int = 0
    calls_failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cost_usd: float | None = 0.0
    cost_usd_known: float = 0.0
    calls_cost_unknown: int = 0
    elapsed_s: float | None = None


class Results(list):
    """The results of :func:`complete_many`, in request order, with the batch's wall time and
    how it used the workspace: ``store_writes`` commits holding the file ``store_write_s`` seconds
    in total, a finished call committed at most ``store_max_delay_s`` after it finished; the calls
    were recorded as sent in ``sent_record_writes`` transactions (one per wave of calls)."""

    elapsed_s: float | None = None
    sent_record_writes: int = 0
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
        t.cached_prompt_tokens += r.cached_prompt_tokens or 0
        if r.cost_usd is None:
            t.calls_cost_unknown += 1
        else:
            t.cost_usd_known += r.cost_usd
    t.cost_usd = None if t.calls_cost_unknown else t.cost_usd_known
    return t


