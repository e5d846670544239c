"""The paper's prompts (Appendix A) as versioned templates, and the parsers of their declared output formats."""

from lsqa.prompting.parsers import (
    OK,
    OUTPUT_FORMATS,
    PARSE_ERROR,
    UnknownOutputFormat,
    parse,
    parse_autoais,
    parse_qa_pairs,
    parse_side_by_side,
    parse_yes_no,
    split_qa_pairs,
)
from lsqa.prompting.templates import (
    Prompt,
    PromptError,
    layout_for,
    list_prompts,
    load_prompt,
    messages,
    parse_prompt_file,
    render,
    request,
)

__all__ = [
    "OK", "OUTPUT_FORMATS", "parse", "parse_autoais", "PARSE_ERROR", "parse_qa_pairs", "parse_side_by_side",
    "parse_yes_no", "split_qa_pairs", "UnknownOutputFormat", "layout_for", "list_prompts", "load_prompt",
    "messages", "parse_prompt_file", "Prompt", "PromptError", "render", "request",
]
