"""Cache keys of full-book requests are computed from the book's remembered encoding and hash
state (lsqa.llm.keys), and must equal the sha256 of the whole canonical JSON, as before."""

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsqa.llm import keys
from lsqa.llm.keys import cache_key, semantic_params
from lsqa.llm.types import LLMRequest
from lsqa.prompting import templates as prompts
from lsqa.text.prompt_parts import canonical_json


def whole_key(request: LLMRequest) -> str:
    """The cache key's definition: the whole prompt rendered and encoded."""
    payload = canonical_json({"model": request.model, "messages": request.messages,
                              "params": semantic_params(request.params)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@pytest.fixture(scope="module")
def book(shared_data) -> str:
    return (shared_data / "books" / "pg135_les_miserables.txt").read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["paper", "context-first"])
def test_full_book_judge_keys_equal_the_whole_rendering(book, layout):
    prompt = prompts.load_prompt("side_by_side", layout=layout)
    answers = ['He steals the "silver" candlesticks\\ and\nruns.', "Jean Valjean — 24601 \u2028 \x07 \U0001F56F",
               "I don't know."]
    seen = set()
    for question in ("Who is Fantine's daughter?", 'What does "Javert" do at the end?'):
        for a in answers:
            for b in answers:
                request = prompts.request(prompt, "lsqa/lexical-judge", {"temperature": 0, "api_base": "http://x"},
                                          contexts=(book,), context=book, question=question,
                                          system_answer_A=a, system_answer_B=b)
                key = cache_key(request)
                assert key == whole_key(request)
                seen.add(key)
    assert len(seen) == 2 * 3 * 3  # distinct requests keep distinct keys (no state mixed up)
    # a copy of the book (another string object) gives the same key
    copy = LLMRequest(request.model, [{"role": "user", "content": "".join(request.messages[0]["content"])}],
                      request.params, contexts=(book[:100] + book[100:],))
    assert cache_key(copy) == key


@settings(max_examples=200, deadline=None)
@given(before=st.text(max_size=30), after=st.text(max_size=30), middle=st.text(max_size=10),
       ctx_a=st.text(min_size=8, max_size=40), ctx_b=st.text(min_size=8, max_size=40),
       system=st.booleans(), second_has_ctx=st.booleans())
def test_keys_by_pieces_equal_whole_keys_for_any_text(monkeypatch_module, before, after, middle, ctx_a, ctx_b,
                                                      system, second_has_ctx):
    content = before + ctx_a + middle + ctx_b + after
    messages = ([{"role": "system", "content": ctx_b + "!" if second_has_ctx else "be brief"}] if system else [])
    messages.append({"role": "user", "content": content})
    request = LLMRequest("openai/gpt-4o-mini", messages, {"max_tokens": 5}, contexts=(ctx_a, ctx_b))
    assert cache_key(request) == whole_key(request)
    assert cache_key(request) == whole_key(request)  # again, from the memos


@pytest.fixture(scope="module")
def monkeypatch_module():
    # small contexts take the pieces path too, so hypothesis can try every kind of character
    mp = pytest.MonkeyPatch()
    mp.setattr(keys, "_MEMO_MIN_CHARS", 8)
    mp.setattr("lsqa.text.prompt_parts.MIN_REF_CHARS", 8)
    yield mp
    mp.undo()
