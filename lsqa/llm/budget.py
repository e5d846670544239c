"""A study's spending limit (``max_cost_usd``): no call starts that could take the total past it.

Before each call the budget reserves the call's worst case (its input tokens plus its maximum
output, at litellm's prices, :mod:`lsqa.llm.pricing`); when the call ends the reservation is
replaced by what the call cost (the worst case again when the provider reported no usage). A call
that does not fit is not sent: it comes back as a result with ``error_kind = "budget"``, is not
stored, and the pipeline stops the run (``stopped: budget``); its finished calls are cached, so a
run with a higher ``max_cost_usd`` goes on from there.
"""

from __future__ import annotations

import threading

from lsqa.errors import LsqaError
from lsqa.llm import pricing
from lsqa.llm.types import LLMRequest


class UnpricedModel(LsqaError):
    """A budget was set for a model whose price (or output limit) litellm does not know."""


class Budget:
    def __init__(self, max_usd: float, spent_usd: float = 0.0):
        self.max_usd = float(max_usd)
        self.spent_usd = float(spent_usd)   # calls finished, in this run and the study's earlier runs
        self.reserved_usd = 0.0             # worst cases of the calls in flight
        self.refused = 0
        self._counter = pricing.TokenCounter()
        self._lock = threading.Lock()

    def bound(self, request: LLMRequest) -> float:
        """The most ``request`` can cost; UnpricedModel when that is unknown."""
        limit = pricing.max_output_tokens(request)
        cost = pricing.call_cost(request.model, self._counter.request_tokens(request), limit)
        if cost is None:
            what = "price" if pricing.price_of(request.model) is None else "output limit (set max_tokens)"
            raise UnpricedModel(f"max_cost_usd is set but litellm's table has no {what} for {request.model}; "
                                "remove max_cost_usd or use a model litellm prices")
        return cost

    def reserve(self, bound: float) -> bool:
        with self._lock:
            if self.spent_usd + self.reserved_usd + bound > self.max_usd + 1e-12:
                self.refused += 1
                return False
            self.reserved_usd += bound
            return True

    def settle(self, bound: float, cost: float | None) -> None:
        with self._lock:
            self.reserved_usd -= bound
            self.spent_usd += bound if cost is None else cost

    def describe(self) -> str:
        return f"${self.spent_usd:.4f} spent of max_cost_usd ${self.max_usd:.4f}"
