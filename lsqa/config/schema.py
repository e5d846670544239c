"""The shapes of a study config and of the settings file, checked whole before anything is written.

A TOML file is a tree of plain values; these pydantic models say which keys exist, their types
and their ranges. Validation is strict (``"8"`` is not a number, ``"yes"`` is not a boolean) so a
typo is refused rather than guessed at. Every problem becomes one line naming the place in the
file (``systems[2].params``) and what to write instead (``refusal``).

Adding a key to a study config is one field here plus its use in ``lsqa.config.study``.
"""

from __future__ import annotations

import difflib
import math
import re
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from lsqa.text.names import MAX_NAME_CHARS, name_problem, shown_name
from lsqa.vocabulary import IMPORTED, about_references, judge_kind_names

QUESTION_SOURCES = ("narrativeqa", "generate", "all")
ENTITY_METHODS = ("auto", "fastcoref", "fallback")
CALL_MODES = ("online", "batch")

# Sane ceilings: far above any real study (Les Misérables is ~695k tokens), low enough that a
# mistyped number is caught instead of allocating or looping on it.
MAX_TOKENS_SETTING = 10_000_000
MAX_CONCURRENCY = 1024
MAX_COUNT = 10_000_000
MAX_SEED = 2**32 - 1
# Tables and lists inside each other: a study config is 4 deep (params of a system), an imported row
# 2 or 3. Far deeper is a broken or hostile file, which Python's parsers meet with a RecursionError.
MAX_NESTING = 32

CONTEXT_RE = re.compile(r"^(none|full|retrieval:(\d{1,9})|reference:([12]))$")
_MODEL_RE = r"^[^\s\x00-\x1f\x7f]+$"

Model = Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=_MODEL_RE)


def nested_deeper_than(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether tables/lists (dicts/lists) in ``value`` nest more than ``limit`` levels (walked
    without recursion, so a deep value cannot overflow the stack here either)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _check_name(value: str) -> str:
    """A system's or judge's name: the one rule of ``lsqa.text.names`` (printable, no control, bidi or
    invisible character, at most 200 characters)."""
    problem = name_problem(value)
    if problem:
        raise ValueError(f"{shown_name(value)} {problem}; use one line of visible text, at most {MAX_NAME_CHARS} "
                         "characters")
    return value


Name = Annotated[str, AfterValidator(_check_name)]


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


def _finite_params(value: dict) -> dict:
    return _check_finite(value)


def _check_context(value: str) -> str:
    m = CONTEXT_RE.match(value.strip())
    if not m or (m.group(2) and not 1 <= int(m.group(2)) <= MAX_TOKENS_SETTING):
        raise ValueError(f"{value!r} is not none, full, retrieval:<tokens> (1 to {MAX_TOKENS_SETTING:,} tokens) "
                         "or reference:1|2; use one of them")
    return value.strip()


def _check_judge_kind(value: Any) -> str:
    # The names live in lsqa.vocabulary (the words; a kind registered in lsqa.judging.kinds adds its
    # own), read when a file is checked: a Literal fixed at import would refuse a registered kind.
    # Refused as pydantic refuses a Literal, so the message reads as before: "use 'absolute', ... or 'x'".
    known = judge_kind_names()
    if not isinstance(value, str) or value not in known:
        quoted = [repr(k) for k in known]
        expected = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
    return value


def _check_prompt_version(value):
    if value is not None and not re.fullmatch(r"v?\d{1,6}", str(value)):
        raise ValueError(f"{value!r} is not a prompt version: use a number such as 2 or \"v2\"")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _CallerTable(_Strict):
    """What systems and judges share: a named model, its parameters and how its prompts are sent."""
    name: Name
    model: str = Model
    params: dict[str, Any] = {}
    max_context_tokens: Optional[int] = Field(None, ge=1, le=MAX_TOKENS_SETTING)
    prompt_version: Optional[Union[int, str]] = None
    prompt_caching: bool = False            # context-first prompts, the book marked for the provider's cache
    mode: Literal[CALL_MODES] = "online"  # type: ignore[valid-type]  # "batch": the provider's batch API

    _prompt_version = field_validator("prompt_version")(_check_prompt_version)
    _params = field_validator("params")(_finite_params)


class SystemTable(_CallerTable):
    context: Optional[str] = None               # required, except for model = "imported"

    _context = field_validator("context")(_check_context)

    @model_validator(mode="after")
    def _imported_or_context(self):
        # An imported system's answers come from `lsqa import-answers`: nothing about making them applies.
        if self.model == IMPORTED:
            extra = [k for k in ("context", "max_context_tokens", "prompt_version") if getattr(self, k) is not None]
            if extra or self.params:
                raise ValueError(f"an imported system has only a name and model = \"imported\", not "
                                 f"{', '.join(extra + (['params'] if self.params else []))} (its answers come "
                                 "from `lsqa import-answers`; a run only judges them)")
        elif self.context is None:
            raise ValueError("context is missing: add context = \"none\", \"full\", \"retrieval:<tokens>\" "
                             "or \"reference:1|2\" (or model = \"imported\" for answers made elsewhere)")
        return self


class JudgeTable(_CallerTable):
    kind: str
    context: str = "full"
    both_orders: bool = False
    reference: Union[Literal["1", "2", "both"], Literal[1, 2]] = "both"
    threshold: Optional[float] = Field(None, ge=-1.0, le=1.0, allow_inf_nan=False)

    _context = field_validator("context")(_check_context)
    _kind = field_validator("kind", mode="before")(_check_judge_kind)

    @field_validator("reference", mode="before")
    @classmethod
    def _no_boolean_reference(cls, value):
        if isinstance(value, bool):  # True == 1 to Python; a boolean here is a mistake
            raise ValueError(f"{value!r} is not a reference: use 1, 2 or \"both\"")
        return value


class GenerationTable(_Strict):
    model: str = Field("lsqa/template-questions", min_length=1, max_length=MAX_NAME_CHARS, pattern=_MODEL_RE)
    entities: int = Field(5, ge=1, le=10_000)
    questions_per_entity: int = Field(2, ge=1, le=1_000)
    context_tokens: int = Field(100_000, ge=1, le=MAX_TOKENS_SETTING)
    entity_method: Literal[ENTITY_METHODS] = "auto"  # type: ignore[valid-type]
    params: dict[str, Any] = {}
    prompt_caching: bool = False
    mode: Literal[CALL_MODES] = "online"  # type: ignore[valid-type]

    _params = field_validator("params")(_finite_params)


class StudyConfig(_Strict):
    documents: Union[list[str], str]
    questions: Literal[QUESTION_SOURCES] = "narrativeqa"  # type: ignore[valid-type]
    sample: int = Field(200, ge=1, le=MAX_COUNT)
    seed: int = Field(0, ge=0, le=MAX_SEED)
    max_questions: Optional[int] = Field(None, ge=1, le=MAX_COUNT)
    systems: list[SystemTable] = []
    judges: list[JudgeTable] = []
    generation: GenerationTable = GenerationTable()
    max_concurrency: int = Field(8, ge=1, le=MAX_CONCURRENCY)
    max_cost_usd: Optional[float] = Field(None, ge=0)  # the study's budget in USD (lsqa.llm.budget)
    max_unreadable_share: float = Field(0.5, ge=0, le=1, allow_inf_nan=False)  # a judge's parse_error share that fails the run
    use_cache: bool = True

    @field_validator("documents")
    @classmethod
    def _documents(cls, value):
        items = [value] if isinstance(value, str) else value
        if not items:
            raise ValueError("documents is empty: list document ids or titles, or write \"all\"")
        for d in items:
            problem = name_problem(d)
            if problem:
                raise ValueError(f"{shown_name(d)} {problem}; list document ids or titles (one line of visible "
                                 f"text each, at most {MAX_NAME_CHARS} characters), or write \"all\"")
        return items

    @model_validator(mode="after")
    def _judges_need_systems(self):
        # Every judge rates the answers of the study's systems: with none, a run would end at once
        # with nothing judged and exit 0, as if it had done its work. A reference check rates the
        # references themselves (issue 32): it needs no system.
        of_answers = [j for j in self.judges if not about_references(j.kind)]
        if of_answers and not self.systems:
            raise ValueError(f"{len(of_answers)} judge(s) but no [[systems]] to judge: add the systems whose "
                             "answers they rate (model = \"imported\" for answers made elsewhere)")
        return self


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
    # person, e.g. "X-Forwarded-User". '' (the default) ignores every such header (issue 34).
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


def place(loc: tuple) -> str:
    """``('systems', 2, 'params')`` → ``systems[2].params``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
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
