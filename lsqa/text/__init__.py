"""Pure text handling every floor shares: words and sentences, book passages with offsets, prompts as parts, excerpts marked in text."""

from lsqa.text.book import Passage, count_tokens, read_text, sha1, split_passages, story_span, word_count
from lsqa.text.csv_cells import FORMULA_START, PLAIN_NUMBER, QUOTE, safe_cell, safe_row
from lsqa.text.highlight import (
    escape,
    find_evidence,
    find_excerpt,
    marked_html,
    md_escape,
    sentence_window,
    text_html,
    window,
    word_bounds,
)
from lsqa.text.names import MAX_NAME_CHARS, lookalike_warnings, lookalikes, name_problem, shown_name, skeleton
from lsqa.text.prompt_parts import (
    canonical_json,
    find_contexts,
    find_spans,
    join_messages,
    refs_of,
    split_content,
    split_messages,
)
from lsqa.text.units import (
    NUMBER_WORDS,
    STOPWORDS,
    approx_tokens,
    content_words,
    one_line,
    sentence_spans,
    words,
)

__all__ = [
    "count_tokens", "Passage", "read_text", "sha1", "split_passages", "story_span", "word_count", "FORMULA_START",
    "PLAIN_NUMBER", "QUOTE", "safe_cell", "safe_row", "escape",
    "find_evidence", "find_excerpt", "marked_html", "md_escape", "sentence_window", "text_html", "window",
    "word_bounds", "lookalike_warnings", "lookalikes", "MAX_NAME_CHARS", "name_problem", "shown_name", "skeleton",
    "canonical_json", "find_contexts", "find_spans", "join_messages", "refs_of",
    "split_content", "split_messages", "approx_tokens", "content_words", "NUMBER_WORDS", "one_line",
    "sentence_spans", "STOPWORDS", "words",
]
