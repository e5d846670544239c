"""``lsqa plan`` (issue 15, part 2): the calls, tokens and cost of a study before any call."""

import json

import pytest
from typer.testing import CliRunner

from lsqa.cli import app
from lsqa.config.study import run_config_from_dict
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.llm import pricing
from lsqa.study import pipeline
from lsqa.study.plan import plan
from lsqa.study.scope import study_scope
from tests.conftest import TEST_DATA

runner = CliRunner()
BOOK = "The Tale of Tom Kitten"


@pytest.fixture
def nqa_workspace(workspace):
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    return workspace


def _embedded_study(**extra) -> dict:
    return {"documents": [BOOK], "questions": "narrativeqa", "max_questions": 5, **extra,
            "systems": [{"name": "none", "model": "lsqa/extractive", "context": "none"},
                        {"name": "rag", "model": "lsqa/extractive", "context": "retrieval:1000"},
                        {"name": "full", "model": "lsqa/extractive", "context": "full"},
                        {"name": "ref2", "model": "human:narrativeqa", "context": "reference:2"}],
            "judges": [{"name": "sxs", "model": "lsqa/lexical-judge", "kind": "pairwise", "context": "full"},
                       {"name": "ais", "model": "lsqa/lexical-judge", "kind": "absolute", "context": "retrieval:500"},
                       {"name": "gt", "model": "lsqa/lexical-judge", "kind": "groundtruth", "reference": "1"}]}


def _requests(stage: dict) -> int:
    return stage["calls_made"] + stage["calls_cached"] + stage["calls_failed"]


@pytest.mark.slow
def test_plan_counts_the_calls_the_run_makes(nqa_workspace):
    config = run_config_from_dict(_embedded_study())
    before = plan(nqa_workspace, config)
    assert before.cached == 0 and before.cost_usd == 0.0 and before.unpriced_calls == 0
    by_stage = {}
    for s in before.stages:
        by_stage[s.stage] = by_stage.get(s.stage, 0) + s.calls
    # 5 questions × 3 model systems; 6 pairs of 4 systems × 5; 4 systems × 5 (two judges)
    assert by_stage == {"answers": 15, "judge:sxs": 30, "judge:ais": 20, "judge:gt": 20}
    summary = pipeline.run(nqa_workspace, config).to_dict()
    made = {s["stage"]: _requests(s) for s in summary["stages"]}
    assert made == by_stage                       # the plan's calls are the run's requests
    # Nothing was cached before: every planned call was made, or served by an identical request of
    # the same run (two systems gave the same answer: one judge call for both pairs).
    assert before.new_calls == summary["calls_made"] + summary["calls_cached"]
    again = plan(nqa_workspace, config)
    assert again.calls == 0                       # everything is stored: the run skips it all


@pytest.mark.slow
def test_plan_is_exact_once_the_answers_exist(nqa_workspace):
    study = _embedded_study()
    pipeline.run(nqa_workspace, run_config_from_dict({**study, "judges": []}))
    config = run_config_from_dict(study)
    planned = plan(nqa_workspace, config)
    assert [s.stage for s in planned.stages] == ["judge:sxs", "judge:ais", "judge:gt"]
    summary = pipeline.run(nqa_workspace, config).to_dict()
    for s in summary["stages"]:
        if not _requests(s):
            continue                              # the answers stage: all stored
        p = next(x for x in planned.stages if x.stage == s["stage"])
        assert (p.calls, p.calls - p.cached) == (_requests(s), s["calls_made"]), s["stage"]
    from lsqa import store
    with store.connect(nqa_workspace) as con:
        recorded = con.execute("SELECT sum(prompt_tokens) FROM llm_calls WHERE model = 'lsqa/lexical-judge'").fetchone()[0]
    assert planned.input_tokens == recorded       # same rule, same prompts: the same count


@pytest.mark.slow
def test_plan_prices_from_litellm_and_counts_with_its_tokenizer(nqa_workspace, llm_server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-0000")
    params = {"api_base": llm_server.api_base, "max_tokens": 30}
    study = {"documents": [BOOK], "questions": "narrativeqa", "max_questions": 4,
             "systems": [{"name": "mini", "model": "openai/gpt-4o-mini", "context": "full", "params": params},
                         {"name": "local", "model": "openai/lsqa-test-unpriced-model", "context": "none",
                          "params": params}]}
    config = run_config_from_dict(study)
    planned = plan(nqa_workspace, config)
    mini = next(s for s in planned.stages if s.model == "openai/gpt-4o-mini")
    local = next(s for s in planned.stages if s.model.endswith("unpriced-model"))
    # The exact count litellm gives for each whole prompt (the plan counts the book once and adds).
    from lsqa.study import pipeline as pl
    scope = study_scope(nqa_workspace, config)
    tasks, _, _ = pl.answer_tasks(nqa_workspace, config, scope.questions(), scope.books)
    exact = sum(pricing.litellm().token_counter(model="openai/gpt-4o-mini", messages=t.request.messages)
                for t in tasks if t.system.name == "mini")
    assert abs(mini.input_tokens - exact) <= 4 * mini.calls
    price = pricing.price_of("openai/gpt-4o-mini")
    assert mini.max_output_tokens == 30 * 4
    assert mini.cost_usd == pytest.approx(mini.input_tokens * price.input + 120 * price.output, rel=1e-6)
    assert local.cost_usd is None and local.tokens_estimated  # no price: unknown, never 0
    assert planned.unpriced_calls == 4 and planned.cost_usd == pytest.approx(mini.cost_usd)

    config_path = tmp_path / "study.toml"
    config_path.write_text(_toml(study))
    r = runner.invoke(app, ["plan", str(config_path), "--workspace", str(nqa_workspace), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert set(data) == {"stages", "calls", "cached", "input_tokens", "cost_usd", "unpriced_calls"}
    assert all(set(s) == {"stage", "model", "calls", "cached", "input_tokens", "max_output_tokens", "cost_usd"}
               for s in data["stages"])
    assert data["calls"] == 8 and data["unpriced_calls"] == 4
    assert [s["cost_usd"] for s in data["stages"] if s["model"].endswith("unpriced-model")] == [None]
    text = runner.invoke(app, ["plan", str(config_path), "--workspace", str(nqa_workspace)])
    assert "estimated at 4 characters per token" in text.stdout and "4 calls without a price" in text.stdout
    assert len(llm_server.requests) == 0            # planning calls nothing


def _toml(study: dict) -> str:
    lines = [f"documents = {json.dumps(study['documents'])}", f"questions = \"{study['questions']}\"",
             f"max_questions = {study['max_questions']}"]
    for key in ("max_cost_usd", "max_concurrency"):
        if key in study:
            lines.append(f"{key} = {study[key]}")
    for s in study["systems"]:
        params = ", ".join(f"{k} = {json.dumps(v)}" for k, v in s.get("params", {}).items())
        lines += ["[[systems]]", f"name = \"{s['name']}\"", f"model = \"{s['model']}\"",
                  f"context = \"{s['context']}\"", f"params = {{ {params} }}"]
    return "\n".join(lines) + "\n"


def test_plan_prices_cached_prefixes_and_batch_calls(nqa_workspace):
    """Issue 15, parts 3-4: with prompt caching every full-book call after the first reads the
    book at the cache-read rate; batch calls cost the batch rate (half where the table has none)."""
    params = {"max_tokens": 30}
    base = {"documents": [BOOK], "questions": "narrativeqa", "max_questions": 4}

    def cost(**system) -> float:
        study = {**base, "systems": [{"name": "mini", "model": "openai/gpt-4o-mini", "context": "full",
                                      "params": params, **system}]}
        return plan(nqa_workspace, run_config_from_dict(study))

    online, cached, batched = cost(), cost(prompt_caching=True), cost(mode="batch")
    price = pricing.price_of("openai/gpt-4o-mini")
    assert price.cached_input is not None and price.cached_input < price.input
    assert online.calls == cached.calls == batched.calls == 4
    # The context-first prompt has the same words in another order: about the same tokens.
    assert cached.input_tokens == pytest.approx(online.input_tokens, rel=0.02)
    # Three of four calls read most of their prompt (the book) from the cache: clearly cheaper,
    # yet never below all four calls' input at the cached rate.
    assert cached.cost_usd < 0.75 * online.cost_usd
    assert cached.cost_usd > cached.input_tokens * price.cached_input
    batch_in = price.batch_input if price.batch_input is not None else price.input / 2
    batch_out = price.batch_output if price.batch_output is not None else price.output / 2
    assert batched.cost_usd == pytest.approx(batched.input_tokens * batch_in + 4 * 30 * batch_out, rel=1e-6)
