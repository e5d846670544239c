"""Usage is checked before it is priced (lsqa.llm.pricing.checked_usage): a provider's negative,
non-numeric, absurd or missing token counts are recorded at the call's worst case and said so,
online and in batch mode, over real HTTP on 127.0.0.1 (tests/support/llm_server.py, tests/support/batch_api.py).
The ledger never goes down: recorded spend >= what the worst case allows and <= the budget."""

import json

import pytest
from typer.testing import CliRunner

from lsqa import store
from lsqa.cli import app
from lsqa.llm import pricing
from lsqa.llm.budget import Budget
from lsqa.store import llm_calls
from lsqa.study import pipeline
from tests.conftest import run_python
from tests.llm.test_budget_ledger import _ledger, _per_call_bound, _recorded, _study, nqa_workspace  # noqa: F401

runner = CliRunner()
MODEL = "openai/gpt-4o-mini"   # litellm's table: 128,000 tokens in, 16,384 out

BAD_USAGE = {
    "negative": {"prompt_tokens": -5000, "completion_tokens": -900, "total_tokens": -5900},
    "absurd": {"prompt_tokens": 10**12, "completion_tokens": 10**11, "total_tokens": 11 * 10**11},
    "past the output limit": {"prompt_tokens": 30, "completion_tokens": 16_385, "total_tokens": 16_415},
    "missing": None,
}


@pytest.mark.parametrize("prompt, completion, cached, words", [
    (-1, 3, None, "prompt_tokens = -1 is negative"),
    (3, -1, None, "completion_tokens = -1 is negative"),
    ("abc", 3, None, "'abc' is not a whole number"),
    (3, 2.5, None, "2.5 is not a whole number"),
    (True, 3, None, "not a whole number"),
    (128_001, 3, None, "past the model's limit of 128000"),
    (30, 16_385, None, "past the model's limit of 16384"),
    (30, 3, 31, "cached_tokens = 31 is more than prompt_tokens = 30"),
    (30, 3, -2, "cached_tokens = -2 is negative"),
    (None, None, None, "no usage"),
    (30, None, None, "no completion_tokens"),
])
def test_impossible_usage_is_named_and_not_priced(prompt, completion, cached, words):
    got = pricing.checked_usage(MODEL, prompt, completion, cached)
    assert got[:3] == (None, None, None) and words in got[3]


def test_plausible_usage_passes_and_unknown_models_get_a_sane_cap():
    assert pricing.checked_usage(MODEL, 128_000, 16_384, 64) == (128_000, 16_384, 64, "")
    assert pricing.checked_usage("openai/no-such-model-xyz", 9_000_000, 900_000) == (9_000_000, 900_000, None, "")
    assert "past the model's limit of 10000000" in pricing.checked_usage("openai/no-such-model-xyz", 10**7 + 1, 1)[3]


def test_a_budget_never_takes_a_credit():
    budget = Budget(1.0)
    for cost in (-0.5, float("nan"), None):
        amount = budget.reserve(0.1)
        budget.settle(amount, cost, 0.1)
    assert budget.spent_usd == pytest.approx(0.3) and budget.reserved_usd == pytest.approx(0.0)


def test_the_store_refuses_a_negative_run_cost(workspace):
    with store.write(workspace) as con:
        run_id = con.execute("INSERT INTO runs (stage, status) VALUES ('answers', 'running') RETURNING id").fetchone()[0]
        with pytest.raises(ValueError, match="never goes down"):
            llm_calls.add_to_run(con, run_id, made=1, cost_usd=-0.66)


def _check_run(workspace, server, tmp_path, mode: str, usage: dict | None):
    if usage is None:
        server.script(reply="Tom Kitten is a cat.", usage=False)
    else:
        server.script(reply="Tom Kitten is a cat.", usage_block=usage)
    bound = _per_call_bound(workspace, _study(tmp_path, server.api_base, mode=mode))
    budget = round(bound * 4.5, 8)
    path = _study(tmp_path, server.api_base, mode=mode, extra=f"max_cost_usd = {budget}")
    r = runner.invoke(app, ["run", path, "--workspace", str(workspace), "--json"])
    assert r.exit_code == 3, r.output                     # four worst cases fit, the fifth does not
    summary = json.loads(r.stdout)
    made = summary["calls_made"]
    assert made == summary["suspect_usage"] == 4, summary
    notes = [note for stage in summary["stages"] for note in stage["usage_notes"]]
    assert notes and all("counted at the call's worst case" in note for note in notes)
    lines = pipeline.RunSummary(stages=[pipeline.StageSummary("answers", suspect_usage=made,
                                                              usage_notes=notes)]).lines()
    assert any(f"{made} call(s) came back with missing or impossible usage" in line for line in lines)
    with store.connect(workspace) as con:
        rows = con.execute("SELECT cost_usd, usage_note, prompt_tokens, completion_tokens FROM llm_calls "
                           "WHERE status = 'ok'").fetchall()
    assert len(rows) == made
    for cost, note, prompt, completion in rows:
        assert cost >= bound * 0.9 and "worst case" in note and prompt is None and completion is None
    recorded = _recorded(workspace)
    assert made * bound * 0.9 <= recorded <= budget + 1e-12   # at least the worst cases, never past the budget
    assert recorded <= _ledger(workspace, path) <= budget + 1e-12


NOT_A_NUMBER = {"prompt_tokens": "many", "completion_tokens": [1], "total_tokens": 3}


@pytest.mark.slow
@pytest.mark.parametrize("what", list(BAD_USAGE))
def test_online_calls_with_impossible_usage_count_at_their_worst_case(nqa_workspace, llm_server, tmp_path,  # noqa: F811
                                                                      what):
    _check_run(nqa_workspace, llm_server, tmp_path, "online", BAD_USAGE[what])


@pytest.mark.slow
def test_online_usage_that_is_not_a_number_is_charged_at_the_worst_case_and_never_retried(
        nqa_workspace, llm_server, tmp_path):  # noqa: F811
    """litellm refuses to build a response whose usage is not numbers: the provider answered (and may
    bill it) but the answer cannot be read. Each call fails, is sent once (a retry would be a second bill
    nobody reserved) and counts at its worst case in the summary, the run's row and the ledger."""
    llm_server.script(reply="Tom Kitten is a cat.", usage_block=NOT_A_NUMBER)
    bound = _per_call_bound(nqa_workspace, _study(tmp_path, llm_server.api_base, mode="online"))
    budget = round(bound * 4.5, 8)
    path = _study(tmp_path, llm_server.api_base, mode="online", extra=f"max_cost_usd = {budget}")
    r = runner.invoke(app, ["run", path, "--workspace", str(nqa_workspace), "--json"])
    assert r.exit_code == 3, r.output                     # four worst cases fit, the fifth does not
    summary = json.loads(r.stdout)
    failed = summary["calls_failed"]
    assert summary["calls_made"] == 0 and failed == summary["suspect_usage"] == 4, summary
    assert len(llm_server.requests) == failed              # never retried
    with store.connect(nqa_workspace) as con:
        rows = con.execute("SELECT cost_usd, usage_note, error_kind FROM llm_calls WHERE status = 'error'").fetchall()
    assert len(rows) == failed
    assert all(cost >= bound * 0.9 and "worst case" in note and kind == "bad_usage" for cost, note, kind in rows)
    recorded = _recorded(nqa_workspace)
    assert failed * bound * 0.9 <= recorded <= budget + 1e-12
    assert recorded <= _ledger(nqa_workspace, path) <= budget + 1e-12


@pytest.mark.slow
def test_a_command_says_what_unreadable_usage_did_and_prints_no_warning_of_pydantic(
        nqa_workspace, llm_server, tmp_path):  # noqa: F811
    """litellm puts the provider's answer through pydantic, which warns on stderr about usage that is not numbers.
    ``lsqa run`` in a process of its own (pytest's warning filters do not reach it) says in its summary what the
    calls did and, on stderr, why in its own words: no warning, no traceback."""
    llm_server.script(reply="Tom Kitten is a cat.", usage_block=NOT_A_NUMBER)
    path = _study(tmp_path, llm_server.api_base, mode="online")
    command = "import sys; from lsqa.cli import main; sys.argv[0] = 'lsqa'; main()"
    out = run_python(command, "run", path, "--workspace", str(nqa_workspace), "--json", timeout=120)
    assert "Warning" not in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert "the provider answered with usage that is not a number" in out.stderr
    summary = json.loads(out.stdout)
    assert summary["calls_made"] == 0 and summary["calls_failed"] == summary["suspect_usage"] > 0, summary


@pytest.mark.slow
@pytest.mark.parametrize("what", [*BAD_USAGE, "not a number"])
def test_batch_calls_with_impossible_usage_count_at_their_worst_case(nqa_workspace, llm_server, tmp_path,  # noqa: F811
                                                                     what):
    usage = NOT_A_NUMBER if what == "not a number" else BAD_USAGE[what]
    _check_run(nqa_workspace, llm_server, tmp_path, "batch", usage)
