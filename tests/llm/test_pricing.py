"""A planned batch call's price (lsqa.llm.pricing, issue 15 part 4) where litellm's table has no
batch rate: the online rates times BATCH_DISCOUNT, the same rule litellm's batch_cost_calculator
applies to a finished batch call (lsqa.llm.provider.batch_cost)."""

from __future__ import annotations

import pytest

from lsqa.llm.pricing import call_cost, price_of
from lsqa.llm.provider import batch_cost

MODEL = "openai/gpt-3.5-turbo"  # in litellm's bundled table, without *_batches rates


def test_batch_price_without_batch_rates_is_what_litellm_charges():
    price = price_of(MODEL)
    assert price is not None and price.batch_input is None and price.batch_output is None
    planned = call_cost(MODEL, 1000, 100, batch=True)
    # The providers' documented batch discount is 50 %, and litellm prices the finished call so.
    assert planned == pytest.approx((1000 * price.input + 100 * price.output) / 2, rel=1e-12)
    assert planned == pytest.approx(batch_cost(MODEL, 1000, 100), rel=1e-12)
    assert call_cost(MODEL, 1000, 100) == pytest.approx(2 * planned, rel=1e-12)
