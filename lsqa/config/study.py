"""Study configuration: which documents, questions, systems and judges a run covers (TOML).

Example (see README, "Running a study", for every key)::

    documents = ["The Tale of Tom Kitten"]     # ids or titles; "all" = every document with text
    questions = "narrativeqa"                  # or "generate"
    sample = 200                               # c: questions per system pair (paper §3.2)
    seed = 0

    [[systems]]
    name = "extractive-rag4k"
    model = "lsqa/extractive"
    context = "retrieval:4000"                 # none | retrieval:<tokens> | full | reference:2

    [[judges]]
    name = "lexical-sxs"
    model = "lsqa/lexical-judge"
    kind = "pairwise"                          # absolute | pairwise | groundtruth | groundtruth-pairwise | similarity
                                               # (or a kind registered in lsqa.judging.kinds)
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Optional, Union

from pydantic import AfterValidator, Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from lsqa.config.schema import (
    CALL_MODES,
    CONTEXT_RE,
    ENTITY_METHODS,
    MAX_CONCURRENCY,
    MAX_COUNT,
    MAX_NESTING,
    MAX_SEED,
    MAX_TOKENS_SETTING,
    MODEL_RE,
    QUESTION_SOURCES,
    Model,
    Name,
    NestedTooDeep,
    Strict,
    check_context,
    check_judge_kind,
    check_prompt_version,
    finite_params,
    first_refusal,
    nested_deeper_than,
    toml_loads,
)
from lsqa.errors import InputError
from lsqa.llm.keys import secret_in_setting
from lsqa.text.names import MAX_NAME_CHARS, lookalike_warnings, name_problem, shown_name
from lsqa.vocabulary import IMPORTED, about_references

__all__ = ["Context", "GenerationSpec", "JudgeSpec", "RunConfig", "SystemSpec", "load_run_config",
           "name_warnings", "parse_context", "run_config_from_dict"]

MAX_CONFIG_BYTES = 1024 * 1024


class _Spec(Strict):
    """A strict, frozen table that code may also build with positional fields, in ``_positional`` order."""

    _positional: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *args, **kwargs):
        if len(args) > len(self._positional):
            raise TypeError(f"{type(self).__name__} takes at most {len(self._positional)} positional fields")
        super().__init__(**dict(zip(self._positional, args, strict=False)), **kwargs)


class Context(_Spec):
    """Where a system's or a judge's context comes from (paper §4: none, BM25 top passages, full book)."""

    _positional = ("kind", "budget_tokens", "reference")
    kind: Literal["none", "retrieval", "full", "reference", "imported"]  # imported: answers made elsewhere
    budget_tokens: int = 0      # for retrieval
    reference: str = ""         # for reference: which NarrativeQA answer plays the system

    @property
    def label(self) -> str:
        if self.kind == "retrieval":
            return f"retrieval:{self.budget_tokens}"
        if self.kind == "reference":
            return f"reference:{self.reference}"
        return self.kind


def parse_context(text: str, *, where: str = "context") -> Context:
    m = CONTEXT_RE.match(str(text).strip())
    if not m:
        raise ValueError(f"{where}: {text!r} is not none, full, retrieval:<tokens> or reference:1|2")
    if m.group(2):
        return Context("retrieval", budget_tokens=int(m.group(2)))
    if m.group(3):
        return Context("reference", reference=m.group(3))
    return Context(m.group(1))


def _context(value: Any) -> Any:
    """A config file's ``context = "retrieval:4000"`` as a Context (checked by ``check_context``);
    a Context made in code as it is."""
    if value is None or isinstance(value, (Context, dict)):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a valid string")
    return parse_context(check_context(value))


class _Caller(_Spec):
    """What systems and judges share: a named model, its parameters and how its prompts are sent."""

    name: Name
    model: str = Model
    params: dict[str, Any] = {}
    max_context_tokens: Optional[int] = Field(None, ge=1, le=MAX_TOKENS_SETTING)  # the model's window
    prompt_version: Optional[Union[int, str]] = None
    prompt_caching: bool = False            # context-first prompts, the book marked for the provider's cache
    mode: Literal[CALL_MODES] = "online"  # type: ignore[valid-type]  # "batch": the provider's batch API (lsqa.llm.batch)

    _prompt_version = field_validator("prompt_version")(check_prompt_version)
    _params = field_validator("params")(finite_params)
    _parse_context = field_validator("context", mode="before", check_fields=False)(_context)


class SystemSpec(_Caller):
    """A QA system = model × context setting × prompt (paper §4, Table 1); ``model = "imported"``:
    answers made elsewhere (``lsqa import-answers``), judged but never answered by a run."""

    _positional = ("name", "model", "context", "params", "max_context_tokens", "prompt_version", "prompt_caching",
                   "mode")
    context: Optional[Context] = None           # required, except for model = "imported"

    @model_validator(mode="before")
    @classmethod
    def _imported_context(cls, data):
        if isinstance(data, dict) and data.get("model") == IMPORTED and data.get("context") is None:
            return {**data, "context": Context(IMPORTED)}
        return data

    @model_validator(mode="after")
    def _imported_or_context(self):
        # An imported system's answers come from `lsqa import-answers`: nothing about making them applies.
        if self.imported:
            extra = [k for k in ("context", "max_context_tokens", "prompt_version") if getattr(self, k) is not None
                     and not (k == "context" and self.context.kind == IMPORTED)]
            if extra or self.params:
                raise ValueError(f"an imported system has only a name and model = \"imported\", not "
                                 f"{', '.join(extra + (['params'] if self.params else []))} (its answers come "
                                 "from `lsqa import-answers`; a run only judges them)")
        elif self.context is None:
            raise ValueError("context is missing: add context = \"none\", \"full\", \"retrieval:<tokens>\" "
                             "or \"reference:1|2\" (or model = \"imported\" for answers made elsewhere)")
        return self

    @property
    def imported(self) -> bool:
        return self.model == IMPORTED


def _no_boolean_reference(value):
    if isinstance(value, bool):  # True == 1 to Python; a boolean here is a mistake
        raise ValueError(f"{value!r} is not a reference: use 1, 2 or \"both\"")
    return value


class JudgeSpec(_Caller):
    """An auto-rater (paper §3, §5): absolute AutoAIS, side by side, ground truth, similarity, or a
    kind registered in ``lsqa.judging.kinds``."""

    _positional = ("name", "model", "kind", "context", "both_orders", "reference", "threshold", "params",
                   "max_context_tokens", "prompt_version", "prompt_caching", "mode")
    kind: str
    context: Context = Context("full")
    both_orders: bool = False
    # ground-truth raters: "1", "2" or "both" (correct if either matches); 1 or 2 in a file read as "1", "2"
    reference: Annotated[Union[Literal["1", "2", "both"], Literal[1, 2]], AfterValidator(str)] = "both"
    threshold: Optional[float] = Field(None, ge=-1.0, le=1.0, allow_inf_nan=False)  # similarity rater

    _kind = field_validator("kind", mode="before")(check_judge_kind)
    _reference = field_validator("reference", mode="before")(_no_boolean_reference)


class GenerationSpec(Strict):
    """Question generation (paper §2, Appendix A.1)."""

    model: str = Field("lsqa/template-questions", min_length=1, max_length=MAX_NAME_CHARS, pattern=MODEL_RE)
    entities: int = Field(5, ge=1, le=10_000)                      # go down the entity list this far
    questions_per_entity: int = Field(2, ge=1, le=1_000)
    context_tokens: int = Field(100_000, ge=1, le=MAX_TOKENS_SETTING)  # whole book if it fits, else the mention chain
    # auto (fastcoref when a model is configured) | fastcoref | fallback
    entity_method: Literal[ENTITY_METHODS] = "auto"  # type: ignore[valid-type]
    params: dict[str, Any] = {}
    prompt_caching: bool = False
    mode: Literal[CALL_MODES] = "online"  # type: ignore[valid-type]

    _params = field_validator("params")(finite_params)


class RunConfig(Strict):
    """A study config, checked whole: the one model a config file is read into and the code uses.
    Adding a key is one field here (and its use). ``source`` is where it was read from (not a key
    of the file)."""

    documents: Union[list[str], str]           # ids or titles; "all" = every document with text (a list once read)
    questions: Literal[QUESTION_SOURCES] = "narrativeqa"  # type: ignore[valid-type]
    sample: int = Field(200, ge=1, le=MAX_COUNT)   # c: questions per system pair (paper §3.2)
    seed: int = Field(0, ge=0, le=MAX_SEED)
    max_questions: Optional[int] = Field(None, ge=1, le=MAX_COUNT)  # per document, first N in dataset order
    systems: list[SystemSpec] = []
    judges: list[JudgeSpec] = []
    generation: GenerationSpec = GenerationSpec()
    max_concurrency: int = Field(8, ge=1, le=MAX_CONCURRENCY)
    max_cost_usd: Optional[float] = Field(None, ge=0)  # the study's budget in USD (lsqa.llm.budget); None = no limit
    max_unreadable_share: float = Field(0.5, ge=0, le=1, allow_inf_nan=False)  # a judge's parse_error share that fails the run
    use_cache: bool = True
    _source: str = PrivateAttr("")

    @property
    def source(self) -> str:
        return self._source

    def from_source(self, source: str) -> "RunConfig":
        """This config, said to be read from ``source`` (a file's path, "run form")."""
        copy = self.model_copy()
        copy._source = source
        return copy

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
        # references themselves: it needs no system.
        of_answers = [j for j in self.judges if not about_references(j.kind)]
        if of_answers and not self.systems:
            raise ValueError(f"{len(of_answers)} judge(s) but no [[systems]] to judge: add the systems whose "
                             "answers they rate (model = \"imported\" for answers made elsewhere)")
        return self

    def to_dict(self) -> dict:
        """A JSON-able copy for the runs table (it never holds secrets: they are refused at load)."""
        return {**self.model_dump(), "source": self.source}


def name_warnings(config: RunConfig, workspace: str | Path | None = None) -> list[str]:
    """Warnings (not refusals) for look-alike names (``lsqa.text.names``): a system or judge of the
    config that looks like another of the config or like one ``workspace`` already holds."""
    systems: list[str] = []
    judges: list[str] = []
    if workspace is not None:
        from lsqa import store
        from lsqa.store import results as results_store

        with store.connect(workspace) as con:
            systems, judges = list(results_store.system_definitions(con)), list(results_store.judge_definitions(con))
    return (lookalike_warnings([s.name for s in config.systems], systems, what="system")
            + lookalike_warnings([j.name for j in config.judges], judges, what="judge"))


def _refuse_secrets(source, data: dict) -> None:
    problem = secret_in_setting("", data)
    if problem:
        raise InputError(source, problem)


def _refuse_misplaced_tables(source, data: dict) -> None:
    """``[systems]`` (one table) where ``[[systems]]`` (a list of tables) is meant."""
    for key in ("systems", "judges"):
        if isinstance(data.get(key), dict):
            raise InputError(source, f"{key}: written as a table [{key}]; write each one as [[{key}]] "
                                     f"(double brackets: a list of {key})")
    if isinstance(data.get("generation"), list):
        raise InputError(source, "generation: written as [[generation]]; write it once as [generation]")


def _check_batch_mode(source, where: str, spec) -> None:
    from lsqa.llm.batch import check_batch_model

    problem = check_batch_model(spec.model, spec.params) if spec.mode == "batch" else ""
    if problem:
        raise InputError(source, f"{where}: {problem}")


def load_run_config(path: str | Path) -> RunConfig:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such config file", hint="give the path of a study config (TOML), e.g. "
                                                            "configs/demo_small.toml")
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise InputError(path, f"larger than {MAX_CONFIG_BYTES // 1024} KB; a study config is a short TOML file: check the path")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text", hint="save the config as UTF-8") from None
    return run_config_from_dict(parse_config_text(text, path), source=str(path))


def parse_config_text(text: str, path: str | Path) -> dict:
    """A study config's TOML ``text`` (from ``path``) as a dict; InputError naming the file if it is not TOML
    or nests deeper than ``MAX_NESTING``."""
    try:
        return toml_loads(text)
    except NestedTooDeep:
        raise InputError(path, f"tables or lists nested more than {MAX_NESTING} levels deep",
                         hint="a study config is a few flat tables: see configs/*.toml") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"not valid TOML: {exc}", hint="see configs/*.toml for working examples") from None


def run_config_from_dict(data: dict, *, source: str = "<config>") -> RunConfig:
    """The study config in ``data`` checked whole (``lsqa.config.schema``): InputError naming the
    first problem's place and what to write instead; nothing is written by checking."""
    if not isinstance(data, dict):
        raise InputError(source, "a study config is a table of keys (documents, systems, judges, ...)")
    if nested_deeper_than(data):
        raise InputError(source, f"tables or lists nested more than {MAX_NESTING} levels deep",
                         hint="a study config is a few flat tables: see configs/*.toml")
    _refuse_secrets(source, data)
    _refuse_misplaced_tables(source, data)
    try:
        config = RunConfig.model_validate(data).from_source(source)
    except ValidationError as exc:
        raise InputError(source, first_refusal(exc, RunConfig)) from None
    for what, items in (("systems", config.systems), ("judges", config.judges)):
        names = [x.name for x in items]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise InputError(source, f"{what}: duplicate name(s) {', '.join(dupes)}",
                             hint="give each one its own name")
    for where, spec in [*((f"systems[{i}] ({s.name})", s) for i, s in enumerate(config.systems)),
                        *((f"judges[{i}] ({j.name})", j) for i, j in enumerate(config.judges)),
                        ("generation", config.generation)]:
        _check_batch_mode(source, where, spec)
    return config
