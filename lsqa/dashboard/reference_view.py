"""What the Reference errors page shows of one row so a person can decide in seconds: the
systems that disagreed with their abilities, the summary sentence with the reference's words marked,
the LLM reference check's verdict and quote, and how the score was made. Plain data and escaped HTML;
the page only lays them out."""

from __future__ import annotations

from lsqa.audit import reference_errors

# The suspects' table, the errata and the score's words, as the page takes them (lsqa.audit.reference_errors).
from lsqa.audit.reference_errors import (
    COLUMN_HELP,
    COLUMNS,
    ERRATA_COLUMNS,
    ERRATA_LISTS,
    FORMULA,
    errata,
    errata_csv,
    errata_jsonl,
    find,
    row_key,
    suspects,
)
from lsqa.text.highlight import escape, marked_html
from lsqa.text.highlight import md_escape as md
from lsqa.text.sentence_support import shared_word_spans

__all__ = ["COLUMNS", "ERRATA_LISTS", "FLAGGED_COLUMNS", "FORMULA_IN_WORDS", "column_config", "errata", "errata_csv", "errata_jsonl",
           "evidence", "find", "in_words", "llm_lines", "row_key", "summary_caption", "summary_html", "suspects",
           "systems_caption", "systems_table"]


def in_words(text: str) -> str:
    """A column's name, or a text that names columns, as the page shows it: the names with spaces (``systems
    confirm``). The CLI, the JSON and the downloads keep the names as they are."""
    return text.replace("_", " ")


# The flagged list's columns as the page shows them: the errata's, a link to the verdicts in place of the id.
FLAGGED_COLUMNS = ["open", *(c for c in ERRATA_COLUMNS if c != "question_id")]

# The score's formula as the caption above the table writes it, in the words of the table's headings.
FORMULA_IN_WORDS = in_words(FORMULA)


def column_config(columns) -> dict:
    """A table's column_config for ``columns``: each headed in words, a signal with what it means (hovered)."""
    return {c: {"label": in_words(c), **({"help": in_words(COLUMN_HELP[c])} if c in COLUMN_HELP else {})}
            for c in columns}


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def systems_table(row: dict) -> list[dict]:
    """One line per independent system, strongest first: its ability (share right on a question of
    typical difficulty), the agreement the fit expected on this question, the agreement it showed."""
    return [{"system": d["system"], "ability": _pct(d["ability"]), "expected": _pct(d["expected"]),
             "agrees": _pct(d["agrees"]), "reads": "agrees" if d["agrees"] >= 0.5 else "contradicts"}
            for d in row.get("systems") or []]


def systems_caption(row: dict) -> str:
    if not row.get("systems"):
        return "No system answered this question: the systems say nothing about this reference."
    against = sum(d["agrees"] < 0.5 for d in row["systems"])
    strongest = row["systems"][0]
    lead = (f"the strongest, {md(strongest['system'])}, {'contradicts' if strongest['agrees'] < 0.5 else 'agrees'}"
            if row["systems"] else "")
    return (f"{against} of {len(row['systems'])} systems contradict this reference ({lead}); "
            f"systems contradict {row['systems_contradict']:.2f}: the agreement their abilities led to expect "
            f"and that did not come.")


def summary_html(row: dict) -> str:
    """The summary sentence that supports the reference best, its words marked ("" without a summary)."""
    sentence = row.get("summary_sentence") or ""
    if not sentence:
        return ""
    return marked_html(sentence, shared_word_spans(row["reference_text"], sentence))


def summary_caption(row: dict) -> str:
    if row.get("summary_support") is None:
        return "This story has no summary in the workspace."
    if not row.get("summary_sentence"):
        return "No sentence of the summary shares a word with this reference (summary support 0)."
    q = row.get("question_in_summary")
    question = "" if q is None else f"; the question's words in one summary sentence: {_pct(q)}"
    return (f"The summary sentence holding most of the reference's words ({_pct(row['summary_support'])} of "
            f"them){question}. NarrativeQA's annotators wrote from the summary: a reference it supports may "
            "still be wrong by the book.")


def llm_lines(row: dict) -> list[str]:
    """Each LLM reference check's verdict with its first quote, or why there is none."""
    if row.get("llm_accepts") is None:
        return ["No LLM reference check has run (a judge of kind reference-check in a study; "
                "docs/reference-errors.md)."]
    return [md(line.strip()) for line in row["llm_evidence"].split(" | ")]


def evidence(row: dict) -> dict:
    """Everything the page's evidence panel shows for ``row``."""
    return {"systems": systems_table(row), "systems_caption": systems_caption(row),
            "summary_html": summary_html(row), "summary_caption": summary_caption(row),
            "llm": llm_lines(row), "explain": md(reference_errors.explain(row)),
            "reference_html": f'<div class="lsqa-text">{escape(row["reference_text"])}</div>'}
