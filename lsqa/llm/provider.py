"""litellm itself (the only module in lsqa that imports it) and the meaning of its errors."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
import warnings

from lsqa.llm.keys import provider_of, scrub

# ---------------------------------------------------------------------------------------------
# litellm, imported lazily and configured once
# ---------------------------------------------------------------------------------------------

_litellm_module = None
_litellm_lock = threading.Lock()


def litellm():
    """The litellm module, imported on first use (it takes seconds) and configured for lsqa:
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
                # litellm puts a provider's answer through pydantic's model_dump before reading it; usage that is
                # not numbers makes pydantic print a warning about litellm's own model to stderr, in the middle of
                # a run whose summary already says what happened, in lsqa's words (``bad_usage``).
                warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning,
                                        module=r"pydantic\.main")
                for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx", "openai", "aiohttp"):
                    logging.getLogger(name).setLevel(logging.CRITICAL)
                from lsqa.llm import embedded as offline

                offline.register(module)
                _litellm_module = module
    return _litellm_module


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

KIND_TEXT = {
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
    "bad_usage": "the provider answered with usage that is not a number (litellm cannot read the answer)",
    "provider": "provider error",
}


_MISSING_KEY = re.compile(r"(?i)missing (?:\w+ )?(?:credentials|api[ _]?key)|no api[ _]?key|api[ _]?key (?:is )?not (?:found|set)")
_NO_CONNECTION = re.compile(r"(?i)connection error|connection refused|cannot connect|name or service not known|"
                            r"nodename nor servname|temporary failure in name resolution|connect call failed")


# litellm refuses to build a response whose usage block is not numbers: the provider answered (and may
# bill the call), but neither the answer nor its usage can be read through litellm.
_UNREADABLE_USAGE = re.compile(r"(?is)invalid response object.*validation errors? for Usage")


def classify(exc: BaseException) -> tuple[str, int | None, float | None]:
    """(error kind, HTTP status if any, Retry-After seconds if any) for an exception from litellm."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = None
    kind, status = _kind_and_status(exc, str(exc), status)
    return kind, status, _retry_after(exc)


def _retry_after(exc: BaseException) -> float | None:
    """Seconds of the Retry-After header of the error's response; None when absent or unreadable."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        if headers and headers.get("retry-after"):
            return float(headers.get("retry-after"))
    except (TypeError, ValueError):
        pass
    return None


def _kind_and_status(exc: BaseException, message: str, status: int | None) -> tuple[str, int | None]:
    """(kind, status) by the exception's class and message, then by its HTTP status; no status when none came back."""
    ll = litellm()
    if isinstance(exc, (ll.Timeout, asyncio.TimeoutError, TimeoutError)):
        return "timeout", status
    if _MISSING_KEY.search(message):
        return "auth", None  # litellm reports some missing keys as 500s; retrying cannot help
    if _NO_CONNECTION.search(message):
        return "connection", None
    kind = _kind_by_class(ll, exc, message)
    if kind is not None:
        return kind, status
    if isinstance(exc, ll.APIConnectionError):
        return "connection", None  # litellm labels these 500; no HTTP answer came back
    return _kind_by_status(status), status


def _kind_by_class(ll, exc: BaseException, message: str) -> str | None:
    """The kind litellm's exception class (or an unreadable-response message) names; None when neither does."""
    if isinstance(exc, ll.RateLimitError):
        return "rate_limit"
    if isinstance(exc, ll.ContextWindowExceededError):
        return "context_window"
    if isinstance(exc, ll.ContentPolicyViolationError):
        return "content_policy"
    if isinstance(exc, (ll.AuthenticationError, ll.PermissionDeniedError)):
        return "auth"
    if isinstance(exc, ll.NotFoundError):
        return "not_found"
    if isinstance(exc, (ll.BadRequestError, ll.UnprocessableEntityError)):
        return "bad_request"
    if _UNREADABLE_USAGE.search(message):
        return "bad_usage"
    if "invalid response" in message.lower() or "no 'choices'" in message or "JSONDecodeError" in message:
        return "bad_response"
    if isinstance(exc, (ll.InternalServerError, ll.ServiceUnavailableError)):
        return "server"
    return None


def _kind_by_status(status: int | None) -> str:
    """The kind an HTTP status alone says ("provider" when it says nothing)."""
    if status and status >= 500:
        return "server"
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status and 400 <= status < 500:
        return "bad_request"
    return "provider"


# A Python traceback's heading and each of its frames as text (a "File" line and the source and caret lines under
# it); litellm glues the traceback's first line to the end of its own words.
_TRACEBACK_FRAME = re.compile(r'Traceback \(most recent call last\):\n|^  File ".*", line \d+.*\n(?:    .*\n)*', re.M)

# litellm's messages begin with exception class names, two or three deep ("litellm.RateLimitError: RateLimitError:
# OpenAIException - ..."); the error names the class once, before the message.
_CLASS_NAMES = re.compile(r"^(?:(?:litellm\.)?(?:[A-Z]\w*)?(?:Error|Timeout): )+")


def error_text(model: str, kind: str, status: int | None, exc: BaseException, attempts: int) -> str:
    """One line for a failed call: the model, the kind in words (HTTP status, attempts), then what the provider
    or litellm said, without the Python traceback litellm writes into some of its messages (its frames say
    where litellm's code failed, not what to do; the exception it ends with stays) and without its repeated
    class names."""
    cause = f"{KIND_TEXT.get(kind, kind)}" + (f" (HTTP {status})" if status else "")
    detail = _CLASS_NAMES.sub("", " ".join(_TRACEBACK_FRAME.sub("", str(exc) + "\n").split()))[:1000]
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return scrub(f"{model}: {cause}{tries}: {type(exc).__name__}: {detail}")


# ---------------------------------------------------------------------------------------------
# Prompt caching
# ---------------------------------------------------------------------------------------------

# Providers that cache a prompt prefix only where the request marks it with ``cache_control``
# (litellm passes the mark on: Anthropic's cache breakpoints, Bedrock's cache points, Gemini's
# and Vertex AI's context caching). OpenAI, Azure OpenAI, DeepSeek and vLLM cache repeated
# prefixes on their own; they are sent the plain prompt.
MARKED_CACHE_PROVIDERS = frozenset({"anthropic", "bedrock", "vertex_ai", "gemini"})
_CACHE_MARK = {"type": "ephemeral"}


def cache_marked(model: str, messages: list[dict], prefix_chars: int) -> list[dict]:
    """``messages`` as sent to ``model``: for a provider in :data:`MARKED_CACHE_PROVIDERS`, the
    first user message split after ``prefix_chars`` characters, the prefix marked for caching.
    Gemini caches whole messages, so there the prefix becomes a message of its own; Claude
    (Anthropic, Bedrock, Vertex AI) takes two blocks of one message. The text is unchanged."""
    provider = provider_of(model)
    if prefix_chars <= 0 or provider not in MARKED_CACHE_PROVIDERS:
        return messages
    out = list(messages)
    for i, message in enumerate(out):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, str) or len(content) <= prefix_chars:
            continue
        head = {"type": "text", "text": content[:prefix_chars], "cache_control": dict(_CACHE_MARK)}
        tail = {"type": "text", "text": content[prefix_chars:]}
        if provider == "gemini" or (provider == "vertex_ai" and "claude" not in model):
            out[i:i + 1] = [{**message, "content": [head]}, {**message, "content": [tail]}]
        else:
            out[i] = {**message, "content": [head, tail]}
        break
    return out


def usage_of(response) -> tuple[int | None, int | None, int | None]:
    """(prompt, completion, cached prompt) tokens a response reports; None when not reported.
    litellm puts every provider's cache reads (OpenAI's and vLLM's ``cached_tokens``,
    Anthropic's ``cache_read_input_tokens``, Gemini's ``cachedContentTokenCount``) in
    ``usage.prompt_tokens_details.cached_tokens``."""
    return usage_numbers(getattr(response, "usage", None))


def usage_numbers(usage) -> tuple[int | None, int | None, int | None]:
    """:func:`usage_of` for a usage object, or the plain dict of a batch output line."""
    if isinstance(usage, dict):
        details = usage.get("prompt_tokens_details") or {}
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
    else:
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
        cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
    if not prompt and not completion:
        return None, None, None  # litellm reports 0/0 when the provider sent no usage: unknown, not free
    return prompt, completion, cached  # as reported: lsqa.llm.pricing.checked_usage checks them before pricing


# ---------------------------------------------------------------------------------------------
# Several servers for one model
# ---------------------------------------------------------------------------------------------

ROUTER_COOLDOWN_S = float(os.environ.get("LSQA_ROUTER_COOLDOWN_S", "30"))
# Settings that belong to one server (a deployment of litellm's Router), not to the call.
_DEPLOYMENT_PARAMS = frozenset({"api_base", "api_key", "api_version", "organization", "extra_headers", "headers",
                                "aws_region_name", "vertex_project", "vertex_location"})
_routers: dict[tuple, object] = {}
_routers_lock = threading.Lock()


def router_for(model: str, params: dict):
    """litellm's Router over the servers in ``params["api_base"]`` (a list), one per process
    and set of servers: calls are spread over them at random, a server that fails is left alone
    for ``LSQA_ROUTER_COOLDOWN_S`` seconds (30) and the call is retried at once on another."""
    bases = [str(b) for b in params["api_base"]]
    deployment = {k: v for k, v in params.items() if k in _DEPLOYMENT_PARAMS and k != "api_base"}
    key = (model, tuple(bases), repr(sorted(deployment.items())))
    with _routers_lock:
        router = _routers.get(key)
        if router is None:
            router = litellm().Router(
                model_list=[{"model_name": model, "litellm_params": {"model": model, "api_base": base, **deployment}}
                            for base in bases],
                routing_strategy="simple-shuffle", num_retries=len(bases) - 1, retry_after=0,
                allowed_fails=0, cooldown_time=ROUTER_COOLDOWN_S,
            )
            _routers[key] = router
    return router


async def router_call(model: str, messages: list[dict], kwargs: dict):
    """One completion through :func:`router_for`: up to one try per server within the call
    (lsqa's own retry policy comes on top when every server failed)."""
    router = router_for(model, kwargs)
    call = {k: v for k, v in kwargs.items() if k not in _DEPLOYMENT_PARAMS}
    call["num_retries"] = len(kwargs["api_base"]) - 1  # the Router's failover to the next server
    return await router.acompletion(model=model, messages=messages, **call)


# ---------------------------------------------------------------------------------------------
# Prices
# ---------------------------------------------------------------------------------------------

# What batch APIs charge, as a share of the online price, when litellm's table has no batch price
# (OpenAI, Anthropic, Gemini: 50 %). lsqa.llm.pricing prices a planned batch call with it; litellm's
# batch_cost_calculator (batch_cost below) applies the same rule to a finished one.
BATCH_DISCOUNT = 0.5


def model_price(model: str) -> dict | None:
    """litellm's price-table entry for ``model`` (input/output/cached/batch rates), or None."""
    ll = litellm()
    try:
        info = ll.get_model_info(model=model)
    except Exception:  # noqa: BLE001 - litellm raises for models it has no entry for
        return None
    return dict(info) if info and info.get("input_cost_per_token") is not None else None


def batch_cost(model: str, prompt_tokens: int | None, completion_tokens: int | None,
               cached_prompt_tokens: int | None = None) -> float | None:
    """The price of one call answered in a batch: litellm's ``batch_cost_calculator`` (its
    ``*_batches`` rates where the table has them, else half the normal rates, cached tokens at
    half the cached rate); None for a model without a price or a call without usage."""
    if prompt_tokens is None or model_price(model) is None:
        return None
    ll = litellm()
    from litellm.cost_calculator import batch_cost_calculator

    usage = ll.Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens or 0,
                     total_tokens=prompt_tokens + (completion_tokens or 0),
                     prompt_tokens_details={"cached_tokens": cached_prompt_tokens or 0})
    prompt_cost, completion_cost = batch_cost_calculator(usage=usage, model=model)
    return float(prompt_cost + completion_cost)
