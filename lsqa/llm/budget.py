"""A study's spending limit (``max_cost_usd``): no call starts that could take the total past it.

Before each call the budget reserves the call's worst case (its input tokens plus its maximum
output, at litellm's prices, :mod:`lsqa.llm.pricing`; batch-mode calls at the batch rates); when
the call ends the reservation is replaced by what the call cost (the worst case again when the
provider reported no usage, or usage that cannot be true: :func:`lsqa.llm.pricing.checked_usage`). A call that does not fit is not sent: it comes back as a result with
``error_kind = "budget"``, is not stored, and the pipeline stops the run (``stopped: budget``); its
finished calls are cached, so a run with a higher ``max_cost_usd`` goes on from there.

The budget is the study's: ``ledger`` names its spend ledger (the study id, which no
transport setting changes), ``spent_usd`` starts at what the ledger holds
(:func:`lsqa.store.runs.study_spent`: earlier runs, calls a killed run sent without storing their
answers, batches not collected), and every call is recorded in the workspace as sent, at its
worst case, before it leaves (``calls_in_flight``; a wave ahead of its turn, with its reservation:
lsqa.llm.runner._SentMarks), so a ``kill -9`` cannot hide it. Runs without a budget keep the same
record.

A provider may report more completion tokens than ``max_tokens`` allows: the call is counted at
what the provider reported (``over_limit`` counts them), and from then on every reservation is
scaled by the largest overrun seen, so the calls started after it keep to the budget; the calls in
flight at that moment can pass it by their own overrun (docs/cost-and-scale.md).
"""

from __future__ import annotations

import threading

from lsqa.errors import LsqaError
from lsqa.llm import pricing
from lsqa.llm.types import LLMRequest


class UnpricedModel(LsqaError):
    """A budget was set for a model whose price (or output limit) litellm does not know."""


class Budget:
    def __init__(self, max_usd: float, spent_usd: float = 0.0, ledger: str | None = None):
        self.max_usd = float(max_usd)
        self.spent_usd = float(spent_usd)   # calls finished, in this run and the study's earlier runs
        self.reserved_usd = 0.0             # worst cases of the calls in flight
        self.refused = 0
        self.ledger = ledger                # the study id the calls are paid from (calls_in_flight.ledger)
        self.overrun = 1.0                  # the largest cost / worst case seen (>1: usage past max_tokens)
        self.over_limit = 0                 # calls that cost more than their worst case
        self._counter = pricing.TokenCounter()
        self._lock = threading.Lock()

    def bound(self, request: LLMRequest) -> float:
        """The most ``request`` can cost (at the batch rates in batch mode); UnpricedModel when that is unknown."""
        limit = pricing.max_output_tokens(request)
        cost = pricing.call_cost(request.model, self._counter.request_tokens(request), limit,
                                 batch=request.mode == "batch")
        if cost is None:
            what = "price" if pricing.price_of(request.model) is None else "output limit (set max_tokens)"
            raise UnpricedModel(f"max_cost_usd is set but litellm's table has no {what} for {request.model}; "
                                "remove max_cost_usd or use a model litellm prices")
        return cost

    def reserve(self, bound: float, *, ahead: bool = False) -> float | None:
        """Reserve ``bound`` (scaled by the overrun seen so far); the amount reserved, or None when
        it does not fit (the call must not be sent). ``ahead``: for a call recorded as sent before
        its turn (lsqa.llm.runner records calls a wave ahead); not fitting then is no refusal yet."""
        with self._lock:
            amount = bound * self.overrun
            if self.spent_usd + self.reserved_usd + amount > self.max_usd + 1e-12:
                if not ahead:
                    self.refused += 1
                return None
            self.reserved_usd += amount
            return amount

    def top_up(self, reserved: float, bound: float) -> float | None:
        """A call reserved ``reserved`` ahead of its turn and an overrun was seen since: reserve the
        difference to ``bound`` at today's overrun. The call's new reservation, or None (refused:
        its old reservation is released)."""
        with self._lock:
            extra = bound * self.overrun - reserved
            if extra <= 0:
                return reserved
            if self.spent_usd + self.reserved_usd + extra > self.max_usd + 1e-12:
                self.reserved_usd -= reserved
                self.refused += 1
                return None
            self.reserved_usd += extra
            return reserved + extra

    def settle(self, reserved: float, cost: float | None, bound: float | None = None) -> None:
        """A call that had ``reserved`` came back costing ``cost`` (None: unknown, counted at
        ``reserved``, and so is a negative or NaN cost: spending never goes down); ``bound`` is its worst case before scaling (to notice an overrun)."""
        with self._lock:
            self.reserved_usd -= reserved
            if cost is None or not cost >= 0:  # unknown, negative or NaN: never a credit
                cost = reserved
            self.spent_usd += cost
            if cost is not None and bound and cost > bound * (1 + 1e-9):
                self.over_limit += 1
                self.overrun = max(self.overrun, cost / bound)

    def describe(self) -> str:
        return f"${self.spent_usd:.4f} spent of max_cost_usd ${self.max_usd:.4f}"
