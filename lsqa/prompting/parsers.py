"""Parse raw judge and generator completions into labels (pure: no litellm, no duckdb).

The parser is chosen by the prompt's declared ``# output:`` format (prompts/README.md):

| format                    | prompts (Bohnet et al., Appendix A)          | label                         |
|---------------------------|----------------------------------------------|-------------------------------|
| ``text``                  | Figs. 9-11, 14-16 (answers)                  | none (``Parsed.text``)        |
| ``autoais-json``          | Fig. 12 (A.3), Fig. 19 (A.7)                 | ``yes`` / ``no``              |
| ``side-by-side-json``     | Fig. 13 (A.4)                                | ``A`` / ``B`` / ``none``      |
| ``side-by-side-equal-json`` | Figs. 18 and 20 (A.6, A.7)                 | ``A`` / ``B`` / ``none`` / ``tie`` |
| ``yes-no``                | Fig. 17 (A.6)                                | ``yes`` / ``no``              |
| ``question-answer-pairs`` | Fig. 8 (A.1)                                 | none (``Parsed.pairs``)       |

The paper's judges answer in pseudo-JSON (single quotes, a prefilled opening such as
``{'answer_is_entailed_by_context':`` that the model continues). Real models add prose and
markdown fences, drop the closing brace, put apostrophes inside single-quoted strings, leave
trailing commas, or give evidence as one string. We therefore read the key/value pairs with a
tolerant scanner instead of ``json.loads``. When the output does not decide the label (both
labels, the template copied back, empty or unrelated text) the result is ``status="parse_error"``
with a reason and the raw text: never a made-up label (README.md: "an output the parser cannot read is stored as `parse_error` with its text").
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from lsqa.errors import LsqaError

OK = "ok"
PARSE_ERROR = "parse_error"

OUTPUT_FORMATS = (
    "text",
    "autoais-json",
    "side-by-side-json",
    "side-by-side-equal-json",
    "yes-no",
    "question-answer-pairs",
    "reference-check-json",
)

# The opening each JSON-ish format starts with. Used when a completion is a bare continuation
# but the caller did not pass the prompt's prefill (e.g. Fig. 13 has none, yet models answer
# "A is better, ..." as if continuing the object).
DEFAULT_PREFILL = {
    "autoais-json": "{'answer_is_entailed_by_context':",
    "side-by-side-json": "{ 'system is better':",
    "side-by-side-equal-json": "{ 'system is better':",
}


class UnknownOutputFormat(LsqaError, ValueError):
    """A prompt declared an output format no parser exists for (a configuration error)."""


@dataclass(frozen=True)
class Parsed:
    """One parsed completion.

    ``label`` is normalised: ``yes``/``no`` (AutoAIS, yes/no rater), ``A``/``B``/``none``/``tie``
    (side by side; the paper's ``Equal`` becomes ``tie``); ``None`` when ``status`` is
    ``parse_error`` or the format has no label. ``reason`` says why parsing failed ("" when ok).
    ``raw`` is the completion exactly as given (without the prefill).
    """

    status: str
    label: str | None = None
    evidence: list[str] = field(default_factory=list)
    reason: str = ""
    raw: str = ""
    text: str = ""  # "text" format: the answer, trimmed of an echoed "Answer:" label
    pairs: list[tuple[str, str]] = field(default_factory=list)  # "question-answer-pairs"
    skipped: int = 0  # "question-answer-pairs": pairs dropped for a missing question or answer
    details: dict = field(default_factory=dict)  # "reference-check-json": {"answerable": yes|no|None}

    @property
    def ok(self) -> bool:
        return self.status == OK


def _error(raw: str, reason: str, **extra) -> Parsed:
    return Parsed(status=PARSE_ERROR, label=None, reason=reason, raw=raw, **extra)


# ---------------------------------------------------------------------------------------------
# Tolerant scanning of pseudo-JSON values
# ---------------------------------------------------------------------------------------------

_QUOTES = "'\""
_MAX_KEYS = 20  # key occurrences read per output: real ones have 1-3; bounds the work on junk
_ESCAPES = {"n": "\n", "t": "\t", "'": "'", '"': '"', "\\": "\\", "/": "/"}
_FENCE = re.compile(r"^[ \t]*```[\w-]*[ \t]*$", re.MULTILINE)


def _clean_markup(text: str) -> str:
    # Markdown fences carry no meaning here; "\_" is markdown-escaped "_" (the paper's own
    # appendix prints answer\_is\_entailed\_by\_context).
    return _FENCE.sub("", text).replace("\\_", "_")


def _closes_string(text: str, pos: int) -> bool:
    """Whether the quote at ``pos`` ends a string rather than being an apostrophe inside it.

    A closing quote is followed by structure: ``]``, ``}``, ``:``, a line end or the end of the
    text, or by a comma that is itself followed by another value (a quote, ``]``, ``}``, end).
    This keeps ``'Tom's mother'`` and ``'he said 'no', then left'`` whole.
    """
    n = len(text)
    i = pos + 1
    while i < n and text[i] in " \t":
        i += 1
    if i >= n or text[i] in "]}:\n\r":
        return True
    if text[i] != ",":
        return False
    i += 1
    while i < n and text[i].isspace():
        i += 1
    return i >= n or text[i] in "]}'\""


_STRING_STOP = {"'": re.compile(r"['\\]"), '"': re.compile(r'["\\]')}


def _read_string(text: str, pos: int) -> tuple[str, int]:
    """Read a quoted string starting at ``text[pos]`` (a quote); returns (value, index after it).

    An unterminated string runs to the end of the text (a truncated completion).
    """
    quote = text[pos]
    stop = _STRING_STOP[quote]
    out: list[str] = []
    i = pos + 1
    n = len(text)
    while i < n:
        m = stop.search(text, i)
        if m is None:
            break
        j = m.start()
        out.append(text[i:j])
        if text[j] == "\\":
            if j + 1 < n:
                out.append(_ESCAPES.get(text[j + 1], "\\" + text[j + 1]))
            i = j + 2
            continue
        if _closes_string(text, j):
            return "".join(out), j + 1
        out.append(quote)
        i = j + 1
    out.append(text[i:])
    return "".join(out), n


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


_BARE_ITEM_END = re.compile(r"[,\]}\n]")


def _read_list(text: str, pos: int) -> tuple[list[str], int]:
    """Read ``[ ... ]`` starting at ``text[pos] == '['``; tolerates trailing commas, bare items
    and a missing ``]``."""
    items: list[str] = []
    i = pos + 1
    n = len(text)
    while i < n:
        i = _skip_space(text, i)
        if i >= n:
            break
        ch = text[i]
        if ch == "]":
            return items, i + 1
        if ch == ",":
            i += 1
            continue
        if ch in _QUOTES:
            value, i = _read_string(text, i)
            items.append(value)
            continue
        if ch == "}":  # the object closed without closing the list
            return items, i
        m = _BARE_ITEM_END.search(text, i)
        end = m.start() if m else n
        items.append(text[i:end])
        i = max(end, i + 1)
    return items, n


_BARE_STOPS = {"}": re.compile(r"}"), ",}\n": re.compile(r"[,}\n]")}


def _read_value(text: str, pos: int, *, bare_stop: str) -> tuple[str | list[str], int]:
    """Read the value after a key's colon: a list, a quoted string or bare text up to a
    character of ``bare_stop`` (or the end)."""
    i = _skip_space(text, pos)
    if i >= len(text):
        return "", i
    if text[i] == "[":
        return _read_list(text, i)
    if text[i] in _QUOTES:
        return _read_string(text, i)
    m = _BARE_STOPS[bare_stop].search(text, i)
    end = m.start() if m else len(text)
    return text[i:end], end


def _key_pattern(*words: str) -> re.Pattern:
    # Keys may be quoted, bolded, use spaces or underscores: 'system is better', **system_is_better**.
    body = r"[\s_]*".join(re.escape(w) for w in words)
    # (no optional quote run before the key: it made the search quadratic on runs of quotes)
    return re.compile(body + r"[*'\"`]*\s*[:=]", re.IGNORECASE)


_EVIDENCE_KEY = _key_pattern("evidence")

# Placeholders of the paper's JSON templates, echoed by models that copy the format line.
_TEMPLATE_EVIDENCE = re.compile(
    r"^(\.\.\.|…|extracted passage\(s\)|passage\(s\) copied from the context|"
    r"explanations? and evidence (supporting|for) the rating.*)$",
    re.IGNORECASE,
)


def _clean_evidence(value: str | list[str]) -> list[str]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        item = item.strip().strip("`").strip()
        if item and not _TEMPLATE_EVIDENCE.match(item):
            out.append(item)
    return out


def _evidence_after(text: str, pos: int) -> list[str]:
    """Evidence of the object whose label sits at ``pos``: the first ``evidence`` key after it,
    else the last one before it (some models write evidence first)."""
    matches = list(itertools.islice(_EVIDENCE_KEY.finditer(text), _MAX_KEYS))
    after = [m for m in matches if m.start() >= pos]
    before = [m for m in matches if m.start() < pos]
    for m in after[:1] + before[::-1]:
        value, _ = _read_value(text, m.end(), bare_stop="}")
        items = _clean_evidence(value)
        if items:
            return items
    return []


_OBJECT_OPENING = re.compile(r"[\s{\[`'\"*]*(?:json)?[\s{\[`'\"*]*", re.IGNORECASE)


def _with_prefill(raw: str, prefill: str, key: re.Pattern) -> str:
    """The text to scan: the completion alone when it states the key itself near its start,
    else the prefill followed by the completion (the continuation form)."""
    m = key.search(raw)
    if m and _OBJECT_OPENING.fullmatch(raw[: m.start()]):
        return raw
    return prefill + raw


@dataclass
class _KeyScan:
    found: list[tuple[str, int]]  # (label, position of its key)
    notes: list[str]  # why other values were undecided
    refused: str = ""  # a quoted value that is definitely not a label: prose must not override it


def _scan_key(text: str, key: re.Pattern, decide) -> _KeyScan:
    """Every value of ``key`` in ``text`` run through ``decide`` (which returns (label, note))."""
    scan = _KeyScan([], [])
    for m in itertools.islice(key.finditer(text), _MAX_KEYS):
        start = _skip_space(text, m.end())
        quoted = start < len(text) and text[start] in _QUOTES + "["
        value, _ = _read_value(text, m.end(), bare_stop=",}\n")
        if isinstance(value, list):
            value = " ".join(value)
        label, note = decide(value)
        if label is not None:
            scan.found.append((label, m.start()))
            continue
        scan.notes.append(note)
        # A quoted value such as 'maybe' is an explicit non-label; template echoes
        # ('yes or no') and bare prose after a prefill are not, so other text may still decide.
        if quoted and "template" not in note and not scan.refused:
            scan.refused = note
    return scan


def _single(found: list[tuple[str, int]]) -> tuple[str | None, int, str]:
    labels = sorted({label for label, _ in found})
    if len(labels) == 1:
        # The last occurrence: models often copy the template first, then answer.
        return labels[0], found[-1][1], ""
    if len(labels) > 1:
        return None, -1, f"conflicting labels: {', '.join(labels)}"
    return None, -1, ""


def _norm(value: str) -> str:
    value = value.replace("*", " ").replace("`", " ")
    value = value.strip().strip("'\"‘’“”").strip()
    value = re.sub(r"\s+", " ", value)
    return value.lower()


# ---------------------------------------------------------------------------------------------
# yes / no (AutoAIS Figs. 12 and 19, ground-truth rater Fig. 17)
# ---------------------------------------------------------------------------------------------

_YES = {"yes", "true"}
_NO = {"no", "false"}
# The instruction echoed back ("'yes or no'") is not an answer.
_YES_NO_TEMPLATE = re.compile(r"['\"]?\byes\b['\"]?\s*(?:or|/|\|)\s*['\"]?\bno\b['\"]?", re.IGNORECASE)


def _yes_no_value(value: str) -> tuple[str | None, str]:
    """Label of a JSON value such as ``'yes'``, ``Yes.``, ``true``, ``"no, because ..."``."""
    v = _norm(value)
    if not v:
        return None, "empty value"
    if _YES_NO_TEMPLATE.search(v):
        return None, "the template value 'yes or no' was copied back"
    first = re.match(r"[a-z]+", v)
    word = first.group(0) if first else ""
    if word in _YES:
        return "yes", ""
    if word in _NO:
        return "no", ""
    return None, f"value {value.strip()[:60]!r} is neither yes nor no"


_LEAD_LABEL = re.compile(
    r"^\s*(?:final\s+)?(?:answer|response|judg(?:e)?ment|verdict|rating|output|decision|result)\s*:\s*",
    re.IGNORECASE,
)
_AFTER_LABEL = re.compile(
    r"(?:(?:answer|response|judg(?:e)?ment|verdict|decision)\s*[:\-]|(?:correct|supported)\?)\s*[*'\"]*\s*(yes|no)\b",
    re.IGNORECASE,
)


def _yes_no_free(text: str) -> tuple[str | None, str]:
    """Label of free text: the first word, the last word, or a word right after a label such
    as ``Answer:``; they must agree. Words elsewhere in prose ("there is no way ...") do not count."""
    cleaned = _YES_NO_TEMPLATE.sub(" ", _clean_markup(text))
    cleaned = re.sub(r"[{}\[\]*`#>_]", " ", cleaned)
    cleaned = _LEAD_LABEL.sub("", cleaned)
    words = re.findall(r"[A-Za-z]+", cleaned)
    if not words:
        return None, "empty output" if not text.strip() else "no words in the output"
    found = set()
    for word in (words[0], words[-1]):
        if word.lower() in ("yes", "no"):
            found.add(word.lower())
    found.update(m.group(1).lower() for m in _AFTER_LABEL.finditer(cleaned))
    if len(found) == 1:
        return found.pop(), ""
    if len(found) > 1:
        return None, "the output says both yes and no"
    # "Answer 2 is correct." / "Incorrect." with no yes or no at all.
    lead = re.sub(r"^\s*(?:answer\s*2|the\s+(?:proposed\s+)?answer|it)\s+is\s+", "", cleaned.strip(), flags=re.I)
    if re.match(r"(?:not\s+correct|incorrect|wrong)\b", lead, re.IGNORECASE):
        return "no", ""
    if re.match(r"correct\b", lead, re.IGNORECASE):
        return "yes", ""
    return None, "no yes or no found in the output"


def parse_yes_no(raw: str) -> Parsed:
    """Fig. 17 (Appendix A.6): "Respond with only yes or no".

    Accepts ``yes``, ``Yes.``, ``YES``, ``"no"``, ``**No**``, ``Answer: yes``, ``Yes, Answer 2 is
    correct.``; refuses output that says both or neither.
    """
    raw = "" if raw is None else str(raw)
    label, reason = _yes_no_free(raw)
    if label is None:
        return _error(raw, reason)
    return Parsed(status=OK, label=label, raw=raw)


_AUTOAIS_KEY = _key_pattern("answer", "is", "entailed", "by", "context")


def parse_autoais(raw: str, *, prefill: str = "") -> Parsed:
    """Figs. 12 and 19 (Appendix A.3, A.7): ``{'answer_is_entailed_by_context': 'yes'|'no',
    'evidence': [...]}``, as a full object or as the continuation of the prompt's prefill."""
    raw = "" if raw is None else str(raw)
    if not raw.strip():
        return _error(raw, "empty output")
    text = _with_prefill(_clean_markup(raw), prefill or DEFAULT_PREFILL["autoais-json"], _AUTOAIS_KEY)
    scan = _scan_key(text, _AUTOAIS_KEY, _yes_no_value)
    label, pos, conflict = _single(scan.found)
    if conflict:
        return _error(raw, conflict)
    if label is None:
        if scan.refused:
            return _error(raw, f"answer_is_entailed_by_context: {scan.refused}")
        # No usable key: a model that just says "Yes." (with or without prose after it).
        label, free_reason = _yes_no_free(raw)
        if label is None:
            why = "; ".join(dict.fromkeys(n for n in scan.notes if n)) or free_reason
            return _error(raw, f"no answer_is_entailed_by_context label: {why}")
        pos = 0
    return Parsed(status=OK, label=label, evidence=_evidence_after(text, pos), raw=raw)


# ---------------------------------------------------------------------------------------------
# reference check (not in the paper): is the question answerable, does the reference answer it
# ---------------------------------------------------------------------------------------------

_REFERENCE_KEY = _key_pattern("reference", "answers", "question")
_ANSWERABLE_KEY = _key_pattern("question", "is", "answerable")


def parse_reference_check(raw: str) -> Parsed:
    """``{'question_is_answerable': 'yes'|'no', 'reference_answers_question': 'yes'|'no', 'evidence': [...]}``.

    The label is ``reference_answers_question`` (required); ``details["answerable"]`` is the other key's
    yes/no, or None when the output leaves it out (a question the check did not call unanswerable).
    """
    raw = "" if raw is None else str(raw)
    if not raw.strip():
        return _error(raw, "empty output")
    text = _clean_markup(raw)
    scan = _scan_key(text, _REFERENCE_KEY, _yes_no_value)
    label, pos, conflict = _single(scan.found)
    if conflict:
        return _error(raw, f"reference_answers_question: {conflict}")
    if label is None:
        why = scan.refused or "; ".join(dict.fromkeys(n for n in scan.notes if n)) or "the key is missing"
        return _error(raw, f"no reference_answers_question label: {why}")
    answerable, _, conflict = _single(_scan_key(text, _ANSWERABLE_KEY, _yes_no_value).found)
    if conflict:
        return _error(raw, f"question_is_answerable: {conflict}")
    return Parsed(status=OK, label=label, evidence=_evidence_after(text, pos), raw=raw,
                  details={"answerable": answerable})


# ---------------------------------------------------------------------------------------------
# side by side (Fig. 13 without Equal; Figs. 18, 20 with Equal)
# ---------------------------------------------------------------------------------------------

_SBS_KEY = _key_pattern("system", "is", "better")
_SBS_TEMPLATE = re.compile(r"a\s+is\s+better\s*\|\s*b\s+is\s+better", re.IGNORECASE)
_WHO = r"(?:(?:system|answer|response|model|candidate|option|assistant)\s+)?"
# A letter counts only when it is clearly a label: alone, before punctuation, before "is better".
# This keeps the article "a" in "a better answer is B" from reading as system A, and a colon is
# left out so that an echoed "Answer A: ..." line is not a verdict.
_AB_VALUE = re.compile(_WHO + r"([ab])(?:\s*$|\s*[,.;!)(\-]|\s+is\s+(?:the\s+|clearly\s+|slightly\s+)?better\b)")
_BOTH = r"(?:both|both answers|both systems|a and b|both a and b)"
_NONE_VALUE = re.compile(
    r"(?:none|neither|(?:none|neither) (?:is|of them is) better|neither system|neither answer|none of them|"
    r"neither of them|" + _BOTH + r" (?:are )?(?:incorrect|wrong))\W*"
)
_TIE_VALUE = re.compile(
    r"(?:equal|equally good|tie|tied|same|the same|"
    + _BOTH + r"|" + _BOTH + r" (?:are )?(?:equal|equally good|correct|equally correct))\W*"
)
# In free text, only explicit verdicts count: "Answer B is better", "A is better", "**B**".
_AB_FREE = [
    re.compile(r"\b(?:system|answer|response|assistant)\s+([AB])\s+is\s+(?:the\s+|clearly\s+|slightly\s+)?better\b", re.I),
    re.compile(r"(?<![\w'])([AB])\s+is\s+(?:the\s+|clearly\s+|slightly\s+)?better\b"),
    re.compile(r"\b(?:better|best|winner|verdict|rating)\s+(?:system|answer|response)?\s*(?:is|:)\s*\**"
               r"(?:system\s+|answer\s+)?((?-i:[AB]))\b", re.I),
]


def _side_value(allow_equal: bool):
    def decide(value: str) -> tuple[str | None, str]:
        v = _norm(value)
        if not v:
            return None, "empty value"
        if "|" in v or _SBS_TEMPLATE.search(v):
            return None, "the template value 'A is better|B is better|...' was copied back"
        m = _AB_VALUE.match(v)
        if m:
            return m.group(1).upper(), ""
        if _NONE_VALUE.fullmatch(v):
            return "none", ""
        if _TIE_VALUE.fullmatch(v):
            if allow_equal:
                return "tie", ""
            return None, "the judge answered Equal, which this prompt does not allow"
        return None, f"value {value.strip()[:60]!r} is not one of A is better / B is better / None" + (
            " / Equal" if allow_equal else ""
        )

    return decide


def _side_free(raw: str, allow_equal: bool) -> tuple[str | None, str]:
    text = _clean_markup(raw)
    text = re.sub(r"'?A is better'?\s*[,|]\s*'?B is better'?[^.\n]*", " ", text)  # echoed instructions
    short = re.sub(r"[{}\[\]#>]", " ", text).strip()
    if len(short) <= 40:  # the entire output is a label: "A", "None", "**B is better**"
        whole, _ = _side_value(allow_equal)(short)
        if whole is not None:
            return whole, ""
    found = {m.group(1).upper() for pattern in _AB_FREE for m in pattern.finditer(text)}
    if len(found) == 1:
        return found.pop(), ""
    if len(found) > 1:
        return None, "the output names both A and B as better"
    return None, "no 'system is better' rating found in the output"


def parse_side_by_side(raw: str, allow_equal: bool, *, prefill: str = "") -> Parsed:
    """Fig. 13 (Appendix A.4; ``allow_equal=False``) and Figs. 18, 20 (A.6, A.7;
    ``allow_equal=True``): ``{'system is better': 'A is better|B is better|None[|Equal]',
    'evidence': [...]}``. Labels: ``A``, ``B``, ``none``, ``tie`` (the paper's Equal)."""
    raw = "" if raw is None else str(raw)
    if not raw.strip():
        return _error(raw, "empty output")
    fmt = "side-by-side-equal-json" if allow_equal else "side-by-side-json"
    text = _with_prefill(_clean_markup(raw), prefill or DEFAULT_PREFILL[fmt], _SBS_KEY)
    scan = _scan_key(text, _SBS_KEY, _side_value(allow_equal))
    label, pos, conflict = _single(scan.found)
    if conflict:
        return _error(raw, conflict)
    if label is None:
        # An explicit non-label (or Equal where the prompt forbids it) is not overridden by prose.
        refused = scan.refused or next((n for n in scan.notes if "does not allow" in n), "")
        if refused:
            return _error(raw, f"'system is better': {refused}")
        label, free_reason = _side_free(raw, allow_equal)
        if label is None:
            why = "; ".join(dict.fromkeys(n for n in scan.notes if n)) or free_reason
            return _error(raw, f"no 'system is better' label: {why}")
        pos = 0
    return Parsed(status=OK, label=label, evidence=_evidence_after(text, pos), raw=raw)


# ---------------------------------------------------------------------------------------------
# question / answer pairs (Fig. 8, Appendix A.1)
# ---------------------------------------------------------------------------------------------

# Leading list markers, headings, quote marks and numbering before a label: "1. ", "- ", "### ".
# One character class (not a nested repeat) keeps this linear on lines like "--------x".
_LEAD = r"^[-*•#>\s]*(?:\(?\d+[.):]\s*)?"
_Q_LABEL = re.compile(_LEAD + r"(?:question\s*\d*\s*[:.)]|q\s*\d*\s*:)\s*(.*)$", re.IGNORECASE)
_A_LABEL = re.compile(_LEAD + r"(?:answer\s*\d*\s*[:.)]|a\s*\d*\s*:)\s*(.*)$", re.IGNORECASE)
# "Question: ...? Answer: ..." on one line; not "a:" (the article), not inside a word.
_INLINE_ANSWER = re.compile(r"(?:(?<=\s)|(?<=[?.!\"']))(?:[Aa]nswer|ANSWER|A)\s*:\s*")
_SEPARATOR = re.compile(r"^\s*(?:[-=_*]{3,}|#{1,6}\s.*|```.*)$")


def _strip_field(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    if len(text) >= 2 and text[0] == "“" and text[-1] == "”":
        text = text[1:-1].strip()
    return text


def _close_pair(question: list[str] | None, answer: list[str] | None, pairs: list[tuple[str, str]]) -> int:
    """Append the open question and its answer to ``pairs`` when both have text; 1 when the pair is dropped, else 0."""
    if question is None:
        return 0
    q = _strip_field(" ".join(question))
    a = _strip_field(" ".join(answer or []))
    if q and a:
        pairs.append((q, a))
        return 0
    return 1


def _opened_question(text: str) -> tuple[list[str], list[str] | None, str]:
    """(question, answer, mode) after a question label, split at an ``Answer:`` on the same line."""
    inline = _INLINE_ANSWER.search(text)
    if inline:  # "Question: ...? Answer: ..." on one line
        return [text[: inline.start()]], [text[inline.end():]], "a"
    return [text], None, "q"


def split_qa_pairs(raw: str) -> tuple[list[tuple[str, str]], int]:
    """(pairs, skipped): every ``Question:`` with its ``Answer:``, and how many were dropped
    because the question or the answer was missing.

    Accepts numbering (``1. Question:``, ``Question 1:``), bold labels (``**Question:**``),
    ``Q:``/``A:``, a label on its own line, answers wrapped over several lines, and a question
    written without a label directly before an ``Answer:`` line. A blank line ends an answer:
    models append chatter ("I hope these help!") after the last pair, and it must not leak in.
    """
    raw = "" if raw is None else str(raw)
    pairs: list[tuple[str, str]] = []
    skipped = 0
    question: list[str] | None = None
    answer: list[str] | None = None
    mode = None  # "q" | "a" | None
    last_free = ""  # an unlabelled line, in case the model left out "Question:"

    def flush():
        nonlocal question, answer, skipped
        skipped += _close_pair(question, answer, pairs)
        question, answer = None, None

    for line in raw.replace("\r\n", "\n").split("\n"):
        plain = line.replace("**", "").replace("__", "")
        q = _Q_LABEL.match(plain)
        a = None if q else _A_LABEL.match(plain)
        if not (q or a) and _SEPARATOR.match(plain):  # "---", "## Themes", fences
            if mode == "a":
                mode = None
            last_free = ""
            continue
        if q:
            flush()
            question, answer, mode = _opened_question(q.group(1))
        elif a:
            if question is None or answer is not None:
                flush()
                if not last_free.rstrip().endswith("?"):
                    mode = None
                    skipped += 1  # an answer with no question
                    continue
                question = [re.sub(_LEAD, "", last_free)]
            answer, mode = [a.group(1)], "a"
        elif not plain.strip():
            if mode == "a" and answer and any(x.strip() for x in answer):
                mode = None
            continue  # keeps last_free: "**How does ...?**", blank line, "Answer: ..."
        else:
            if mode == "q":
                question.append(plain)
            elif mode == "a":
                answer.append(plain)
            else:
                last_free = plain
                continue
        last_free = ""
    flush()
    return pairs, skipped


def parse_qa_pairs(raw: str) -> list[tuple[str, str]]:
    """The (question, answer) pairs of a Fig. 8 completion; see :func:`split_qa_pairs`."""
    return split_qa_pairs(raw)[0]


# ---------------------------------------------------------------------------------------------
# text answers (Figs. 9-11, 14-16)
# ---------------------------------------------------------------------------------------------

def parse_text(raw: str) -> Parsed:
    """A free-text answer: trimmed, with an echoed leading ``Answer:`` removed."""
    raw = "" if raw is None else str(raw)
    text = re.sub(r"^\s*\**answer\**\s*:\**\s*", "", raw.strip(), flags=re.IGNORECASE).strip()
    if not text:
        return _error(raw, "empty answer")
    return Parsed(status=OK, raw=raw, text=text)


def parse(output_format: str, raw: str, *, prefill: str = "") -> Parsed:
    """Parse ``raw`` with the parser for the prompt's declared ``output_format``.

    ``prefill`` is the opening the prompt ended with (``Prompt.prefill``), so a completion that
    continues it can be read; a completion that restates the whole object is read as well.
    Never raises on model output: an unexpected failure is reported as a ``parse_error``.
    """
    if output_format not in OUTPUT_FORMATS:
        raise UnknownOutputFormat(
            f"unknown output format {output_format!r}; known formats: {', '.join(OUTPUT_FORMATS)}"
        )
    raw = "" if raw is None else str(raw)
    try:
        if output_format == "text":
            return parse_text(raw)
        if output_format == "autoais-json":
            return parse_autoais(raw, prefill=prefill)
        if output_format == "side-by-side-json":
            return parse_side_by_side(raw, False, prefill=prefill)
        if output_format == "side-by-side-equal-json":
            return parse_side_by_side(raw, True, prefill=prefill)
        if output_format == "yes-no":
            return parse_yes_no(raw)
        if output_format == "reference-check-json":
            return parse_reference_check(raw)
        pairs, skipped = split_qa_pairs(raw)
        if not pairs:
            return _error(raw, "no 'Question:' / 'Answer:' pairs found", skipped=skipped)
        return Parsed(status=OK, raw=raw, pairs=pairs, skipped=skipped)
    except Exception as exc:  # a parser bug must not stop a batch: report it with the raw text
        return _error(raw, f"internal parser error ({type(exc).__name__}: {exc})")
