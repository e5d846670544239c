"""LLM access for every stage: one call shape, any litellm provider, cached, resumable, fault-tolerant.

Question generation (Bohnet et al. §2, Fig. 8), the QA systems (§4, Figs. 9-11, 14-16) and the
judges (§3, Figs. 12-13, 17-20) all call :func:`complete_many` (or :func:`complete`) with
:class:`LLMRequest` objects. Only :mod:`lsqa.llm.provider` imports litellm.

* **Models**: any litellm model string (``gemini/...``, ``openai/...``, ``anthropic/...``,
  ``hosted_vllm/...``, ``ollama/...``, ``openai/<name>`` + ``api_base``), or an embedded one
  (``lsqa/extractive``, ``lsqa/lexical-judge``, ``lsqa/template-questions``,
  ``local/smollm2-135m``; see :mod:`lsqa.llm.embedded`). API keys come from litellm's usual
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
  for the dashboard in between). A killed run loses only the answers of the calls in flight; the
  next run answers the finished ones from the cache.
* **Spend on record**: every call to a paid model is recorded as sent (``calls_in_flight``, under
  the study's ledger) before it leaves, a wave of calls per transaction, so a ``kill -9`` cannot
  hide what the provider answered and charged (:mod:`lsqa.llm.budget`; docs/cost-and-scale.md).
"""

# Eager: these modules are what any LLM call loads anyway, and none imports litellm at import
# time (``litellm()`` does, on first use). The embedded models are the subpackage
# lsqa.llm.embedded, with their own names (numpy loads with them).

from lsqa.llm.batch import BatchJob, check_batch_model, input_file, transport_key
from lsqa.llm.budget import Budget, UnpricedModel
from lsqa.llm.claims import claim, now, owner
from lsqa.llm.keys import (
    TRANSPORT_PARAMS,
    cache_key,
    provider_of,
    scrub,
    secret_in_setting,
    semantic_params,
    storable_params,
)
from lsqa.llm.pricing import TokenCounter, call_cost, counts_exactly, max_output_tokens, price_of
from lsqa.llm.provider import cache_marked, classify, litellm
from lsqa.llm.runner import acomplete, acomplete_many, complete, complete_many, embedded_models
from lsqa.llm.types import LLMError, LLMRequest, LLMResult, Results, RetryPolicy, RunTotals, totals

__all__ = [
    "BatchJob", "check_batch_model", "input_file", "transport_key", "Budget", "UnpricedModel", "claim",
    "now", "owner", "cache_key", "provider_of", "scrub", "secret_in_setting", "semantic_params",
    "storable_params", "TRANSPORT_PARAMS", "call_cost", "counts_exactly", "max_output_tokens", "price_of",
    "TokenCounter", "cache_marked", "classify", "litellm", "acomplete", "acomplete_many", "complete",
    "complete_many", "embedded_models", "LLMError", "LLMRequest", "LLMResult", "Results", "RetryPolicy",
    "RunTotals", "totals",
]
