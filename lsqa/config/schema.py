"""The shapes of a study config and of the settings file, checked whole before anything is written.

A TOML file is a tree of plain values; these pydantic models say which keys exist, their types
and their ranges. Validation is strict (``"8"`` is not a number, ``"yes"`` is not a boolean) so a
typo is refused rather than guessed at. Every problem becomes one line naming the place in the
file (``systems[2].params``) and what to write instead (``refusal``).

The study config's models live in ``lsqa.config.study`` (the one model the code uses); the
validators and the wording of refusals they share are here.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import tomllib
from typing import Annotated, Any, Literal, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

# Tables and lists inside each other (a study config is 4 deep, an imported row 2 or 3): one limit for
# every file lsqa reads, owned with the words of the table files.
from lsqa.store.importers.wording import MAX_NESTING, nested_deeper_than  # noqa: F401 (re-exported)
from lsqa.text.names import MAX_NAME_CHARS, name_problem, shown_name
from lsqa.vocabulary import judge_kind_names

QUESTION_SOURCES = ("narrativeqa", "generate", "all")
ENTITY_METHODS = ("auto", "fastcoref", "fallback")
CALL_MODES = ("online", "batch")

# Sane ceilings: far above any real study (Les Misérables is ~695k tokens), low enough that a
# mistyped number is caught instead of allocating or looping on it.
MAX_TOKENS_SETTING = 10_000_000
MAX_CONCURRENCY = 1024
MAX_COUNT = 10_000_000
MAX_SEED = 2**32 - 1

CONTEXT_RE = re.compile(r"^(none|full|retrieval:(\d{1,9})|reference:([12]))$")
MODEL_RE = r"^[^\s\x00-\x1f\x7f]+$"

Model = Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=MODEL_RE)


def check_name(value: str) -> str:
    """A system's or judge's name: the one rule of ``lsqa.text.names`` (printable, no control, bidi or
    invisible character, at most 200 characters)."""
    problem = name_problem(value)
    if problem:
        raise ValueError(f"{shown_name(value)} {problem}; use one line of visible text, at most {MAX_NAME_CHARS} "
                         "characters")
    return value


Name = Annotated[str, AfterValidator(check_name)]


def _check_finite(value: Any, where: str = "") -> Any:
    """``params`` are sent to the provider as JSON, which has no NaN or Infinity: ``temperature = nan``
    would be stored as invalid JSON and come back as a server error after the retries."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where or 'a value'} is {value!r}; write a finite number")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_finite(v, f"{where}.{k}" if where else str(k))
    if isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(v, f"{where}[{i}]")
    return value


def finite_params(value: dict) -> dict:
    return _check_finite(value)


def check_context(value: str) -> str:
    m = CONTEXT_RE.match(value.strip())
    if not m or (m.group(2) and not 1 <= int(m.group(2)) <= MAX_TOKENS_SETTING):
        raise ValueError(f"{value!r} is not none, full, retrieval:<tokens> (1 to {MAX_TOKENS_SETTING:,} tokens) "
                         "or reference:1|2; use one of them")
    return value.strip()


def check_judge_kind(value: Any) -> str:
    # The names live in lsqa.vocabulary (the words; a kind registered in lsqa.judging.kinds adds its
    # own), read when a file is checked: a Literal fixed at import would refuse a registered kind.
    # Refused as pydantic refuses a Literal, so the message reads as before: "use 'absolute', ... or 'x'".
    known = judge_kind_names()
    if not isinstance(value, str) or value not in known:
        quoted = [repr(k) for k in known]
        expected = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
    return value


def check_prompt_version(value):
    if value is not None and not re.fullmatch(r"v?\d{1,6}", str(value)):
        raise ValueError(f"{value!r} is not a prompt version: use a number such as 2 or \"v2\"")
    return value


class Strict(BaseModel):
    """Strict, frozen, no unknown key: what every table of a study config is."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SettingsFile(BaseModel):
    """``lsqa.toml``: the keys lsqa reads; any other key is refused with the closest known one (a
    typo such as ``workspce`` must not leave lsqa on the default workspace unseen)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    workspace: str = Field("db/lsqa.duckdb", min_length=1, pattern=r"^[^\x00]+$")
    data_dir: Optional[str] = Field(None, min_length=1, pattern=r"^[^\x00]+$")
    coref_model_path: str = ""
    coref_model_kind: Literal["fcoref", "lingmess"] = "fcoref"
    max_concurrency: int = Field(8, ge=1, le=MAX_CONCURRENCY)
    passage_tokens: int = Field(200, ge=20, le=100_000)
    # Behind a proxy that authenticates (oauth2-proxy and the like): the request header naming the
    # person, e.g. "X-Forwarded-User". '' (the default) ignores every such header.
    identity_header: str = Field("", max_length=100, pattern=r"^[A-Za-z0-9-]*$")
    # How many days an unused personal sign-in link works (lsqa.team.people.LINK_DAYS by default).
    link_days: int = Field(7, ge=1, le=90)


# --------------------------------------------------------------------------- messages

_WHAT_TO_WRITE = {
    "int_type": "write a whole number without quotes",
    "float_type": "write a number without quotes",
    "bool_type": "write true or false without quotes",
    "string_type": "write a text in double quotes",
    "dict_type": "write a table, e.g. params = { temperature = 0 }",
    "list_type": "write a list, e.g. [\"a\", \"b\"]",
    "model_type": "write a table",
    "missing": "add it; see README, \"Running a study\"",
    "too_short": "it must not be empty",
    "string_too_short": "write a non-empty text",
    "string_too_long": f"use at most {MAX_NAME_CHARS} characters",
    "string_pattern_mismatch": "use one line of text without control characters (and no spaces in a model name)",
    "finite_number": "write a finite number",
}



class NestedTooDeep(ValueError):
    """TOML whose tables or lists nest more than ``MAX_NESTING`` levels."""


def toml_loads(text: str) -> dict:
    """``text`` parsed as TOML, refused first (NestedTooDeep) when its brackets nest deeper than ``MAX_NESTING``.

    tomllib recurses once per level: thousands of brackets would run it into the interpreter's recursion
    limit, where whatever else runs meanwhile (a finaliser the garbage collector calls) fails too. The
    depth is counted on the text first, in one loop, outside strings and comments."""
    if _bracket_depth(text) > MAX_NESTING:
        raise NestedTooDeep(text[:40])
    return tomllib.loads(text)


def _bracket_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in TOML ``text``, skipping strings (basic, literal, multi-line)
    and comments. A table header ``[[a]]`` opens and closes on its line, so it counts as 2 at most."""
    depth = deepest = i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            i += len(quote)
            while i < n and not text.startswith(quote, i):
                if c == '"' and text[i] == "\\":
                    i += 1  # an escape in a basic string: the next character is not its end
                elif len(quote) == 1 and text[i] == "\n":
                    break  # an unclosed one-line string: tomllib will say so
                i += 1
            i += len(quote)
            continue
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return deepest

def place(loc: tuple) -> str:
    """``('systems', 2, 'params')`` → ``systems[2].params``. A key that is not a plain word (a newline, a
    space, a quote, as any TOML key may hold) is shown quoted with its escapes, as TOML writes it, so the
    message stays one line and names the key exactly."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            key = str(part)
            shown = key if key.replace("_", "").replace("-", "").isalnum() and key.isascii() else json.dumps(key)
            out += ("." if out else "") + shown
    return out or "config"


def _known_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    """The keys allowed at the table that holds ``loc``'s last key."""
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        annotation = model.model_fields[part].annotation
        inner = getattr(annotation, "__args__", (annotation,))[0]
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            model = inner
    return list(model.model_fields)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def refusal(error: dict, model: type[BaseModel]) -> str:
    """One pydantic error as ``place: problem (what to do)``."""
    loc, kind = tuple(error["loc"]), error["type"]
    # A union reports each alternative; the place is the field itself.
    loc = tuple(p for p in loc if not (isinstance(p, str) and ("[" in p or p.startswith(("int", "str", "literal")))))
    where = place(loc)
    if kind == "extra_forbidden":
        known = _known_keys(model, loc)
        typed = str(loc[-1])
        close = difflib.get_close_matches(typed, known, n=3)
        # Swapped letters first: "modle" is "model", though "mode" is as close by difflib's ratio.
        close.sort(key=lambda k: sorted(k) != sorted(typed))
        hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(known)}"
        return f"{where}: unknown key ({hint})"
    if kind in ("value_error", "assertion_error"):
        return f"{where}: {str(error['msg']).removeprefix('Value error, ')}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        limits = error.get("ctx", {})
        bound = next(iter(limits.values()), "")
        word = "at least" if kind.startswith("greater") else "at most"
        return f"{where} = {_shown(error['input'])}: must be {word} {bound:,}" if isinstance(bound, int) else \
            f"{where} = {_shown(error['input'])}: must be {word} {bound}"
    if kind == "literal_error":
        return f"{where} = {_shown(error['input'])}: {error['msg'].replace('Input should be', 'use')}"
    todo = _WHAT_TO_WRITE.get(kind, "see README, \"Running a study\"")
    if kind == "too_short":
        return f"{where} = {_shown(error['input'])}: {todo}"
    shown = "" if kind == "missing" else f" = {_shown(error['input'])}"
    msg = str(error["msg"]).replace("Input should be", "should be")
    return f"{where}{shown}: {msg.lower() if kind == 'missing' else msg} ({todo})"


def first_refusal(exc: ValidationError, model: type[BaseModel]) -> str:
    """The first problem of a refused file, and how many others there are (one line in all)."""
    errors = exc.errors(include_url=False)
    # Union alternatives repeat one mistake; keep one message per place.
    seen: dict[str, str] = {}
    for e in errors:
        line = refusal(e, model)
        seen.setdefault(line.split(":")[0].split(" = ")[0], line)
    lines = list(seen.values())
    more = f" (and {len(lines) - 1} more problem{'s' if len(lines) > 2 else ''}: {'; '.join(lines[1:3])})" \
        if len(lines) > 1 else ""
    return lines[0] + more
