"""split_context finds the context by a search; it must cut exactly as splitting into lines did."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsqa.llm.embedded.prompt_reading import split_context


def by_lines(text: str) -> tuple[str | None, str]:
    """The definition: the first line that strips to '# CONTEXT' up to the next '# CONTEXT END'."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == "# CONTEXT"), None)
    if start is None:
        return None, text
    end = next((j for j in range(start + 1, len(lines)) if lines[j].strip() == "# CONTEXT END"), None)
    if end is None:
        return "\n".join(lines[start + 1:]), "\n".join(lines[:start])
    return "\n".join(lines[start + 1: end]), "\n".join(lines[:start] + lines[end + 1:])


LINES = st.lists(st.one_of(
    st.sampled_from(["# CONTEXT", "# CONTEXT END", " # CONTEXT\t", "\u2003# CONTEXT END\r", "#  CONTEXT",
                     "# CONTEXT ENDS", "", " ", "Question: who?", "# CONTEXT\x1c", "x # CONTEXT"]),
    st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=12)), max_size=9)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(lines=LINES)
def test_split_context_equals_the_line_by_line_definition(lines):
    text = "\n".join(lines)
    assert split_context(text) == by_lines(text)


def test_a_full_book_prompt(shared_data):
    book = (shared_data / "books" / "pg135_les_miserables.txt").read_text(encoding="utf-8")
    text = f"Intro\n# CONTEXT\n{book}\n# CONTEXT END\n\nQuestion: \"Who?\"\nAnswer A: \"x\""
    assert split_context(text) == by_lines(text) == (book, "Intro\n\nQuestion: \"Who?\"\nAnswer A: \"x\"")
