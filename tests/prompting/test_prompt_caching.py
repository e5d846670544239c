"""Prompt caching for long contexts (issue 15, part 3): context-first prompt versions, the
provider's cache mark, cached prompt tokens recorded and priced — over real HTTP on 127.0.0.1."""

import json
import re

import pytest

from lsqa import llm, store
from lsqa.config.definitions import DefinitionChanged
from lsqa.config.study import run_config_from_dict
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.prompting import templates as prompts
from lsqa.study import pipeline
from tests.conftest import TEST_DATA

# The paper's prompts (Appendix A) with a context: each has a paper-order and a context-first version. A
# prompt of lsqa's own (the reference check, issue 32) is written context first from its v1.
PAPER = {p.id for p in prompts.list_prompts() if "Bohnet et al." in p.implements}
CONTEXT_PROMPTS = sorted({p.id for p in prompts.list_prompts() if p.layout == "context-first" and p.id in PAPER})
BOOK = "The Tale of Tom Kitten"


def test_every_prompt_with_a_context_has_a_context_first_version():
    with_context = {p.id for p in prompts.list_prompts()
                    if {"context", "context_text"} & set(p.placeholders) and p.id in PAPER}
    assert set(CONTEXT_PROMPTS) == with_context and len(with_context) == 9


def _context_intro(body: str, first: bool) -> str:
    """The line that introduces the context: just before its block in the paper's order, just after
    it in the context-first one."""
    lines = [line for line in body.split("\n") if line.strip()]
    if first:
        return lines[lines.index("# CONTEXT END") + 1]
    return lines[lines.index("# CONTEXT") - 1]


@pytest.mark.parametrize("prompt_id", CONTEXT_PROMPTS)
def test_context_first_version_moves_the_context_block_and_points_up_at_it(prompt_id):
    paper = prompts.load_prompt(prompt_id)
    first = prompts.load_prompt(prompt_id, layout="context-first")
    assert (paper.layout, first.layout) == ("paper", "context-first") and first.version > paper.version
    assert (first.placeholders, first.output, first.prefill) == (paper.placeholders, paper.output, paper.prefill)
    assert first.body.startswith("# CONTEXT\n{")
    # The paper's lines in another order, but for the one that introduced the context: it now
    # follows the context, so it speaks of it as above (v2 said "below", or ended in a colon).
    intro_paper, intro_first = _context_intro(paper.body, False), _context_intro(first.body, True)
    lines = lambda body, drop: sorted(line for line in body.split("\n") if line.strip() and line != drop)  # noqa: E731
    assert lines(first.body, intro_first) == lines(paper.body, intro_paper)
    assert "above" in intro_first and "below" not in intro_first and not intro_first.endswith(":")


@pytest.mark.parametrize("prompt_id", CONTEXT_PROMPTS)
def test_the_first_context_first_version_stays_loadable_for_workspaces_that_used_it(prompt_id):
    v2 = prompts.load_prompt(prompt_id, 2)
    assert v2.layout == "context-first" and v2.body.startswith("# CONTEXT\n{")


def test_layouts_are_chosen_not_mixed():
    assert prompts.load_prompt("side_by_side").version == 1  # the default stays the paper's order
    assert prompts.load_prompt("side_by_side", layout="context-first").version == 3
    # a prompt without a context has no context-first version: the paper's is used
    assert prompts.load_prompt("groundtruth_yes_no", layout="context-first").version == 1


def test_stable_prefix_is_the_context_block_and_the_same_for_every_question():
    book = "Once upon a time there were three little kittens. " * 50
    for layout in ("paper", "context-first"):
        prompt = prompts.load_prompt("nqa_side_by_side", layout=layout)
        reqs = [prompts.request(prompt, "openai/x", {}, prompt_caching=True, context=book, question=q,
                                system_answer_A="a", system_answer_B="b") for q in ("Who?", "Why?")]
        n = reqs[0].cache_prefix_chars
        text = reqs[0].messages[0]["content"]
        assert n == reqs[1].cache_prefix_chars and text[:n] == reqs[1].messages[0]["content"][:n]
        assert text[:n].endswith(book + "\n# CONTEXT END") and "Who?" not in text[:n]
        assert text.startswith("# CONTEXT\n") == (layout == "context-first")
    assert prompts.request(prompt, "openai/x", {}, context=book, question="Who?", system_answer_A="a",
                           system_answer_B="b").cache_prefix_chars == 0  # caching off: nothing marked


def _reply(request: dict) -> str:
    prompt = " ".join(str(m.get("content", "")) for m in request.get("messages", []))
    if "system is better" in prompt:
        return "{'system is better': 'A is better', 'evidence': ['Tom Kitten']}"
    return "Tom Kitten lost his clothes."


def _study(server, prompt_caching: bool) -> dict:
    model = {"model": "openai/gpt-4o-mini", "prompt_caching": prompt_caching,
             "params": {"api_base": server.api_base, "temperature": 0}}
    return {
        "documents": [BOOK], "questions": "narrativeqa", "max_questions": 3, "sample": 3,
        "systems": [{"name": "gpt-fullbook", "context": "full", **model},
                    {"name": "nocontext", "model": "lsqa/extractive", "context": "none"}],
        "judges": [{"name": "gpt-sxs", "kind": "pairwise", "context": "full", **model}],
    }


def _calls(workspace) -> list[dict]:
    with store.connect(workspace) as con:
        cur = con.execute("SELECT prompt_id, prompt_version, prompt_tokens, completion_tokens, cached_prompt_tokens, "
                          "cost_usd, run_id FROM llm_calls WHERE model = 'openai/gpt-4o-mini' ORDER BY created_at")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=False)) for row in cur.fetchall()]


@pytest.mark.slow
def test_study_with_prompt_caching_counts_and_prices_cached_tokens(workspace, llm_server, monkeypatch):
    """OpenAI-style automatic prefix caching: the book is the shared prefix of the answering and
    the judging calls, the server reports it as cached tokens, litellm prices them at the cached
    rate, and the run totals add them up."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    llm_server.script(reply=_reply, prefix_cache=True, cache_block=16)
    summary = pipeline.run(workspace, run_config_from_dict(_study(llm_server, True))).to_dict()
    calls = _calls(workspace)
    answers = [c for c in calls if c["prompt_id"] == "nqa_answer_full_context"]
    verdicts = [c for c in calls if c["prompt_id"] == "nqa_side_by_side"]
    assert len(answers) == 3 and len(verdicts) == 3 and {c["prompt_version"] for c in calls} == {"3"}
    # the call that reached the server first wrote the cache; every other one, the judge's calls
    # included, read the book (~800 of its 830-980 words) from it (what follows the book differs)
    first, *later = sorted(answers + verdicts, key=lambda c: c["cached_prompt_tokens"])
    assert first["cached_prompt_tokens"] == 0 and first["prompt_id"] == "nqa_answer_full_context"
    assert all(c["cached_prompt_tokens"] >= 0.75 * c["prompt_tokens"] for c in later)
    price = llm.litellm().model_cost["gpt-4o-mini"]
    for c in calls:
        expected = ((c["prompt_tokens"] - c["cached_prompt_tokens"]) * price["input_cost_per_token"]
                    + c["cached_prompt_tokens"] * price["cache_read_input_token_cost"]
                    + c["completion_tokens"] * price["output_cost_per_token"])
        assert c["cost_usd"] == pytest.approx(expected, rel=1e-9)
    assert summary["cached_prompt_tokens"] == sum(c["cached_prompt_tokens"] for c in calls)
    with store.connect(workspace) as con:
        run_totals = con.execute("SELECT sum(cached_prompt_tokens), sum(cost_usd) FROM runs").fetchone()
    assert run_totals[0] == summary["cached_prompt_tokens"]
    assert run_totals[1] == pytest.approx(sum(c["cost_usd"] for c in calls))
    assert any("prompt tokens from the providers' caches" in line for line in pipeline.RunSummary(
        [pipeline.StageSummary("x", cached_prompt_tokens=5)]).lines())


@pytest.mark.slow
def test_paper_order_shares_no_prefix_between_prompts(workspace, llm_server, monkeypatch):
    """The reason for the context-first versions: in the paper's order each prompt opens with its
    own sentence, so the judge's first call cannot reuse the book the answering calls sent."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    llm_server.script(reply=_reply, prefix_cache=True, cache_block=16)
    pipeline.run(workspace, run_config_from_dict(_study(llm_server, False)))
    verdicts = [c for c in _calls(workspace) if c["prompt_id"] == "nqa_side_by_side"]
    assert {c["prompt_version"] for c in verdicts} == {"1"}
    cached = sorted(c["cached_prompt_tokens"] for c in verdicts)
    assert cached[0] == 0 and cached[1] > 0  # the first judge call to arrive found no prefix to reuse


def test_switching_prompt_caching_is_a_new_definition(workspace, llm_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    llm_server.script(reply=_reply)
    pipeline.run(workspace, run_config_from_dict({**_study(llm_server, False), "judges": []}))
    with pytest.raises(DefinitionChanged, match=r"gpt-fullbook.*prompt_caching: null → true"):
        pipeline.run(workspace, run_config_from_dict({**_study(llm_server, True), "judges": []}))


@pytest.mark.slow
def test_anthropic_cache_control_reaches_the_server_and_is_priced(workspace, llm_server, monkeypatch):
    """Anthropic caches only what the request marks: lsqa marks the book, the Messages API
    answers with cache_creation/cache_read tokens, litellm prices reads at the cached rate."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    book = "It was a bright cold day in April and the clocks were striking thirteen. " * 120
    prompt = prompts.load_prompt("autoais", layout="context-first")
    model = "anthropic/claude-haiku-4-5"
    params = {"api_base": f"http://127.0.0.1:{llm_server.port}", "max_tokens": 50}

    def requests(caching: bool, questions):
        return [prompts.request(prompt, model, params, prompt_caching=caching, context=book, question=q, answer="x")
                for q in questions]

    llm_server.script(reply="{'answer_is_entailed_by_context': 'no', 'evidence': []}")
    results = llm.complete_many(workspace, requests(True, ["Q1?", "Q2?", "Q3?"]), max_concurrency=1)
    assert all(r.ok for r in results)
    sent = [r.body for r in llm_server.requests]
    assert all(r.path.endswith("/v1/messages") for r in llm_server.requests)
    blocks = sent[0]["messages"][0]["content"]
    assert blocks[0]["cache_control"] == {"type": "ephemeral"} and "cache_control" not in blocks[1]
    assert blocks[0]["text"].endswith(book + "\n# CONTEXT END") and "Q1?" in blocks[1]["text"]
    assert "".join(b["text"] for b in blocks) == requests(True, ["Q1?"])[0].messages[0]["content"]
    book_tokens = len(blocks[0]["text"].split())
    assert [r.cached_prompt_tokens for r in results] == [0, book_tokens, book_tokens]
    price = llm.litellm().model_cost["claude-haiku-4-5"]
    rest = results[1].prompt_tokens - book_tokens
    expected = (rest * price["input_cost_per_token"] + book_tokens * price["cache_read_input_token_cost"]
                + results[1].completion_tokens * price["output_cost_per_token"])
    assert results[1].cost_usd == pytest.approx(expected, rel=1e-9)
    # the first call wrote the cache, priced at the cache-write rate, so it cost more
    assert results[0].cost_usd > results[1].cost_usd
    assert llm.totals(results).cached_prompt_tokens == 2 * book_tokens

    # without prompt_caching nothing is marked and Anthropic caches nothing
    llm_server.script(reply="{'answer_is_entailed_by_context': 'no', 'evidence': []}")
    plain = llm.complete_many(workspace, requests(False, ["Q4?", "Q5?"]), max_concurrency=1)
    assert [r.cached_prompt_tokens for r in plain] == [0, 0]
    assert not any("cache_control" in json.dumps(r.body) for r in llm_server.requests)
    # the mark changes neither the cache key nor the stored prompt
    assert requests(True, ["Q1?"])[0].messages == requests(False, ["Q1?"])[0].messages
    assert llm.cache_key(requests(True, ["Q1?"])[0]) == llm.cache_key(requests(False, ["Q1?"])[0])
    with store.connect(workspace) as con:
        stored = con.execute("SELECT cached_prompt_tokens FROM llm_calls WHERE cache_key = ?",
                             [results[2].cache_key]).fetchone()
    assert stored == (book_tokens,)
    cached_again = llm.complete_many(workspace, requests(True, ["Q2?"]))[0]
    assert cached_again.cached and cached_again.cached_prompt_tokens == book_tokens


def test_gemini_gets_the_prefix_as_a_message_of_its_own():
    from lsqa.llm.provider import cache_marked

    messages = [{"role": "user", "content": "BOOK\n# CONTEXT END\nQuestion: who?"}]
    n = len("BOOK\n# CONTEXT END")
    gemini = cache_marked("gemini/gemini-2.0-flash", messages, n)
    assert [m["content"][0]["text"] for m in gemini] == ["BOOK\n# CONTEXT END", "\nQuestion: who?"]
    assert "cache_control" in gemini[0]["content"][0] and "cache_control" not in gemini[1]["content"][0]
    assert cache_marked("openai/gpt-4o", messages, n) == messages  # automatic prefix caching: sent as is
    assert cache_marked("hosted_vllm/llama", messages, n) == messages
    assert re.search("cache_control", str(cache_marked("bedrock/anthropic.claude-3-5-sonnet", messages, n)))


@pytest.mark.slow
def test_embedded_models_read_context_first_prompts_the_same_way(workspace):
    """The label contract (prompts/README.md) holds in both layouts: the offline models give the
    same answers and verdicts whichever order the blocks come in."""
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")

    def study(caching: bool, suffix: str) -> dict:
        return {
            "documents": [BOOK], "questions": "narrativeqa", "max_questions": 5, "sample": 5,
            "systems": [{"name": f"full{suffix}", "model": "lsqa/extractive", "context": "full", "prompt_caching": caching},
                        {"name": f"rag{suffix}", "model": "lsqa/extractive", "context": "retrieval:500",
                         "prompt_caching": caching}],
            "judges": [{"name": f"ais{suffix}", "model": "lsqa/lexical-judge", "kind": "absolute", "context": "full",
                        "prompt_caching": caching}],
        }

    pipeline.run(workspace, run_config_from_dict(study(False, "")))
    pipeline.run(workspace, run_config_from_dict(study(True, "-cf")))
    with store.connect(workspace) as con:
        answers = con.execute("SELECT system_name, question_id, text FROM answers").fetchall()
        verdicts = con.execute("SELECT judge, question_id, system_a, label FROM judgments").fetchall()
        versions = con.execute("SELECT DISTINCT prompt_id, prompt_version FROM llm_calls").fetchall()
    paper_answers = {(r[0], r[1], r[2]) for r in answers if not r[0].endswith("-cf")}
    assert {(n.removesuffix("-cf"), q, t) for n, q, t in answers if n.endswith("-cf")} == paper_answers
    paper_verdicts = {(q, a.removesuffix("-cf"), label) for j, q, a, label in verdicts if not j.endswith("-cf")}
    assert {(q, a.removesuffix("-cf"), label) for j, q, a, label in verdicts if j.endswith("-cf")} == paper_verdicts
    assert len(paper_answers) == 10 and len(paper_verdicts) == 10
    assert {v for _, v in versions} == {"1", "3"}
