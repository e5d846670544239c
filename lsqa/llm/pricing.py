"""What a call will cost before it is made: tokens, maximum output and price from litellm's table.

Input tokens are counted with litellm's token counter (the model's own tokenizer where litellm
has it) when litellm knows the model; the embedded models count four characters per token, as
they report themselves; any other model gets the same four-characters estimate, *said to be an
estimate*. Long contexts (a book sent 4,200 times) are counted once per text: a request's count is
the sum over its parts (:mod:`lsqa.text.prompt_parts`), which differs from counting the joined prompt
by at most a token or two at each joint.

Prices come from litellm's bundled table (``model_cost``); a model it does not list has no price
(``None``), never a made-up 0. :func:`call_cost` takes cached input tokens and a batch flag, priced
at the table's ``cache_read_input_token_cost`` and ``*_batches`` rates where it gives them, so the
prompt-caching and batch modes price their calls here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache

from lsqa.llm.keys import OFFLINE_PROVIDERS, provider_of
from lsqa.llm.provider import BATCH_DISCOUNT, litellm
from lsqa.llm.types import LLMRequest
from lsqa.text.prompt_parts import find_spans

CHARS_PER_TOKEN = 4
OUTPUT_PARAMS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


@lru_cache(maxsize=256)
def model_info(model: str) -> dict | None:
    """litellm's entry for ``model`` (prices, windows), or None when it has none."""
    if provider_of(model) in OFFLINE_PROVIDERS:
        return None
    try:
        return dict(litellm().get_model_info(model))
    except Exception:  # noqa: BLE001 - litellm raises several kinds for an unmapped model
        return None


def is_free(model: str) -> bool:
    """The embedded models: local, and priced at exactly 0."""
    return provider_of(model) in OFFLINE_PROVIDERS


def counts_exactly(model: str) -> bool:
    """Whether :func:`request_tokens` uses the model's own count (litellm's tokenizer or the
    embedded models' rule) rather than an estimate."""
    return is_free(model) or model_info(model) is not None


class TokenCounter:
    """Counts tokens of requests for one process; each long context text is counted once."""

    def __init__(self):
        self._memo: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many texts it has counted (and keeps)."""
        return len(self._memo)

    def text_tokens(self, model: str, text: str) -> int:
        if not counts_exactly(model) or is_free(model):
            return len(text)  # characters: divided once per request (the embedded models' rule)
        key = (model, text)
        with self._lock:
            hit = self._memo.get(key)
        if hit is None:
            hit = int(litellm().token_counter(model=model, text=text))
            with self._lock:
                self._memo[key] = hit
        return hit

    def request_tokens(self, request: LLMRequest) -> int:
        """Input tokens of ``request`` (see the module docstring for how they are counted)."""
        model = request.model
        total = 0
        for message in request.messages:
            content = message.get("content")
            if not isinstance(content, str):
                content = str(content or "")
            pos = 0
            for start, end in find_spans(content, request.contexts):
                total += self.text_tokens(model, content[pos:start]) + self.text_tokens(model, content[start:end])
                pos = end
            total += self.text_tokens(model, content[pos:])
        if is_free(model) or not counts_exactly(model):
            return (total + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
        return total + _message_overhead(model) * len(request.messages)


@lru_cache(maxsize=256)
def _message_overhead(model: str) -> int:
    """Tokens a chat message adds around its text (role markers), as litellm counts them."""
    ll = litellm()
    empty = ll.token_counter(model=model, messages=[{"role": "user", "content": ""}])
    return max(0, int(empty) - int(ll.token_counter(model=model, text="")))


def max_output_tokens(request: LLMRequest) -> int | None:
    """The most tokens the reply may have: the request's own limit, else the model's (None: unknown)."""
    for name in OUTPUT_PARAMS:
        if request.params.get(name):
            return int(request.params[name])
    info = model_info(request.model) or {}
    limit = info.get("max_output_tokens") or info.get("max_tokens")
    return int(limit) if limit else None


@dataclass(frozen=True)
class Price:
    """USD per token, from litellm's table."""

    input: float
    output: float
    cached_input: float | None = None
    batch_input: float | None = None
    batch_output: float | None = None


def price_of(model: str) -> Price | None:
    if is_free(model):
        return Price(0.0, 0.0, 0.0, 0.0, 0.0)
    info = model_info(model)
    if not info or info.get("input_cost_per_token") is None or info.get("output_cost_per_token") is None:
        return None
    return Price(float(info["input_cost_per_token"]), float(info["output_cost_per_token"]),
                 info.get("cache_read_input_token_cost"), info.get("input_cost_per_token_batches"),
                 info.get("output_cost_per_token_batches"))


def call_cost(model: str, input_tokens: int, output_tokens: int | None, *, cached_input_tokens: int = 0,
              batch: bool = False) -> float | None:
    """USD for one call, or None when the model has no price or the output bound is unknown.

    ``cached_input_tokens`` (part of ``input_tokens``) are priced at the provider's cache-read
    rate, ``batch`` at its batch rates (half the online rates where the table has none); without a
    cache-read rate, cached tokens cost the full input rate.
    """
    price = price_of(model)
    if price is None:
        return None
    if is_free(model):
        return 0.0
    if output_tokens is None:
        return None
    # Batch calls: the model's batch rates where litellm's table has them, else the online rates
    # times BATCH_DISCOUNT (the providers' documented batch discount; litellm's
    # batch_cost_calculator, which prices batches after the fact in lsqa.llm.provider, does the same).
    in_rate = price.input if not batch else price.batch_input if price.batch_input is not None else price.input * BATCH_DISCOUNT
    out_rate = (price.output if not batch else price.batch_output if price.batch_output is not None
                else price.output * BATCH_DISCOUNT)
    cached = min(max(0, cached_input_tokens), input_tokens)
    cached_rate = price.cached_input if price.cached_input is not None else in_rate
    return (input_tokens - cached) * in_rate + cached * float(cached_rate) + output_tokens * out_rate


# Token counts beyond which a report is absurd for a model litellm knows no limits of: no model
# served today reads ten million tokens in one prompt or writes one million in one reply.
SANE_PROMPT_TOKENS = 10_000_000
SANE_COMPLETION_TOKENS = 1_000_000


def _count(value) -> int | None:
    """``value`` as a token count if it is a whole non-negative number, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if value >= 0 else None


def checked_usage(model: str, prompt, completion, cached=None) -> tuple[int | None, int | None, int | None, str]:
    """The usage a provider reported, checked before it is priced: ``(prompt, completion,
    cached, problem)``. ``problem`` is '' for plausible counts; otherwise it says what was wrong
    (missing, negative, not a number, past the model's context or output limit as litellm's
    table knows them, or past :data:`SANE_PROMPT_TOKENS` / :data:`SANE_COMPLETION_TOKENS` when it
    knows none), the counts come back None, and the caller counts the call at its worst case —
    never at the reported (possibly negative) price nor at $0 (litellm validates usage the same
    way before its own cost tracking: ``litellm.cost_calculator``)."""
    if prompt is None and completion is None:
        return None, None, None, "the provider reported no usage"
    info = model_info(model) or {}
    context = info.get("max_input_tokens") or info.get("max_tokens") or SANE_PROMPT_TOKENS
    output = info.get("max_output_tokens") or info.get("max_tokens") or SANE_COMPLETION_TOKENS
    problems = []
    counts = []
    for name, value, limit in (("prompt_tokens", prompt, context), ("completion_tokens", completion, output),
                               ("cached_tokens", cached, None)):
        if value is None and name == "cached_tokens":
            counts.append(None)
            continue
        n = _count(value)
        if value is None:
            problems.append(f"no {name}")
        elif n is None:
            problems.append(f"{name} = {repr(value)[:40]} is not a whole number of tokens"
                            if not isinstance(value, (int, float)) or isinstance(value, bool) or value >= 0
                            else f"{name} = {value} is negative")
        elif limit is not None and n > limit:
            problems.append(f"{name} = {n} is past the model's limit of {int(limit)}")
        counts.append(n)
    if not problems and counts[2] is not None and counts[2] > counts[0]:
        problems.append(f"cached_tokens = {counts[2]} is more than prompt_tokens = {counts[0]}")
    if problems:
        return None, None, None, "suspect usage: " + "; ".join(problems)
    return counts[0], counts[1], counts[2], ""
