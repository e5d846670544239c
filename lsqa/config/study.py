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
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from lsqa.config.schema import CONTEXT_RE, MAX_NESTING, StudyConfig, first_refusal, nested_deeper_than
from lsqa.errors import InputError
from lsqa.llm.keys import secret_in_setting
from lsqa.text.names import lookalike_warnings
from lsqa.vocabulary import IMPORTED

__all__ = ["Context", "GenerationSpec", "JudgeSpec", "RunConfig", "SystemSpec", "load_run_config",
           "name_warnings", "parse_context", "run_config_from_dict"]

MAX_CONFIG_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Context:
    """Where a system's or a judge's context comes from (paper §4: none, BM25 top passages, full book)."""

    kind: str                   # none | retrieval | full | reference | imported (answers made elsewhere)
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


@dataclass(frozen=True)
class SystemSpec:
    """A QA system = model × context setting × prompt (paper §4, Table 1); ``model = "imported"``:
    answers made elsewhere (``lsqa import-answers``), judged but never answered by a run."""

    name: str
    model: str
    context: Context
    params: dict = field(default_factory=dict)
    max_context_tokens: int | None = None   # the model's window; a longer full book is an error
    prompt_version: str | None = None
    prompt_caching: bool = False            # context-first prompts, prefix marked for the provider's cache
    mode: str = "online"                    # or "batch": the provider's batch API (lsqa.llm.batch)

    @property
    def imported(self) -> bool:
        return self.model == IMPORTED


@dataclass(frozen=True)
class JudgeSpec:
    """An auto-rater (paper §3, §5): absolute AutoAIS, side by side, ground truth, similarity."""

    name: str
    model: str
    kind: str
    context: Context = Context("full")
    both_orders: bool = False
    reference: str = "both"                 # ground-truth raters: 1, 2 or both (correct if either matches)
    threshold: float | None = None          # similarity rater
    params: dict = field(default_factory=dict)
    max_context_tokens: int | None = None
    prompt_version: str | None = None
    prompt_caching: bool = False
    mode: str = "online"


@dataclass(frozen=True)
class GenerationSpec:
    """Question generation (paper §2, Appendix A.1)."""

    model: str = "lsqa/template-questions"
    entities: int = 5                       # go down the entity list this far
    questions_per_entity: int = 2
    context_tokens: int = 100_000           # whole book if it fits, else the entity's mention chain
    entity_method: str = "auto"             # auto (fastcoref when a model is configured) | fastcoref | fallback
    params: dict = field(default_factory=dict)
    prompt_caching: bool = False
    mode: str = "online"


@dataclass(frozen=True)
class RunConfig:
    documents: list[str]
    questions: str = "narrativeqa"
    sample: int = 200
    seed: int = 0
    max_questions: int | None = None        # per document, first N in dataset order
    systems: list[SystemSpec] = field(default_factory=list)
    judges: list[JudgeSpec] = field(default_factory=list)
    generation: GenerationSpec = field(default_factory=GenerationSpec)
    max_concurrency: int = 8
    max_cost_usd: float | None = None       # the study's spending limit (issue 15); None = no limit
    max_unreadable_share: float = 0.5       # a judge whose verdicts are unreadable above this share fails the run
    use_cache: bool = True
    source: str = ""

    def to_dict(self) -> dict:
        """A JSON-able copy for the runs table (it never holds secrets: they are refused at load)."""
        import dataclasses

        return dataclasses.asdict(self)


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
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise InputError(path, f"tables or lists nested more than {MAX_NESTING} levels deep",
                         hint="a study config is a few flat tables: see configs/*.toml") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"not valid TOML: {exc}", hint="see configs/*.toml for working examples") from None
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text", hint="save the config as UTF-8") from None
    return run_config_from_dict(data, source=str(path))


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
        checked = StudyConfig.model_validate(data)
    except ValidationError as exc:
        raise InputError(source, first_refusal(exc, StudyConfig)) from None
    systems = [SystemSpec(name=t.name, model=t.model, params=dict(t.params),
                          context=Context(IMPORTED) if t.model == IMPORTED else parse_context(t.context),
                          max_context_tokens=t.max_context_tokens, prompt_version=t.prompt_version,
                          prompt_caching=t.prompt_caching, mode=t.mode)
               for t in checked.systems]
    judges = [JudgeSpec(name=t.name, model=t.model, kind=t.kind, context=parse_context(t.context),
                        both_orders=t.both_orders, reference=str(t.reference), threshold=t.threshold,
                        params=dict(t.params), max_context_tokens=t.max_context_tokens,
                        prompt_version=t.prompt_version, prompt_caching=t.prompt_caching, mode=t.mode)
              for t in checked.judges]
    for what, items in (("systems", systems), ("judges", judges)):
        names = [x.name for x in items]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise InputError(source, f"{what}: duplicate name(s) {', '.join(dupes)}",
                             hint="give each one its own name")
    g = checked.generation
    generation = GenerationSpec(model=g.model, entities=g.entities, questions_per_entity=g.questions_per_entity,
                                context_tokens=g.context_tokens, entity_method=g.entity_method,
                                params=dict(g.params), prompt_caching=g.prompt_caching, mode=g.mode)
    for where, spec in [*((f"systems[{i}] ({s.name})", s) for i, s in enumerate(systems)),
                        *((f"judges[{i}] ({j.name})", j) for i, j in enumerate(judges)), ("generation", generation)]:
        _check_batch_mode(source, where, spec)
    return RunConfig(documents=list(checked.documents), questions=checked.questions, sample=checked.sample,
                     seed=checked.seed, max_questions=checked.max_questions, systems=systems, judges=judges,
                     generation=generation, max_concurrency=checked.max_concurrency, use_cache=checked.use_cache,
                     max_cost_usd=checked.max_cost_usd, max_unreadable_share=checked.max_unreadable_share,
                     source=source)
