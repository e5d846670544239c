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
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from lsqa.errors import InputError
from lsqa.vocabulary import JUDGE_KINDS

_CONTEXT_RE = re.compile(r"^(none|full|retrieval:(\d+)|reference:([12]))$")
_SECRET_KEYS = ("api_key", "key", "token", "secret", "password")
# Names that hold a secret whatever they end with: HTTP auth headers ("Authorization", "x-api-key",
# Azure's "api-key"), cloud credentials.
_SECRET_NAME = re.compile(r"api_?key|secret|password|credential|authorization|cookie", re.I)


@dataclass(frozen=True)
class Context:
    """Where a system's or a judge's context comes from (paper §4: none, BM25 top passages, full book)."""

    kind: str                   # none | retrieval | full | reference
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
    m = _CONTEXT_RE.match(str(text).strip())
    if not m:
        raise ValueError(f"{where}: {text!r} is not none, full, retrieval:<tokens> or reference:1|2")
    if m.group(2):
        return Context("retrieval", budget_tokens=int(m.group(2)))
    if m.group(3):
        return Context("reference", reference=m.group(3))
    return Context(m.group(1))


@dataclass(frozen=True)
class SystemSpec:
    """A QA system = model × context setting × prompt (paper §4, Table 1)."""

    name: str
    model: str
    context: Context
    params: dict = field(default_factory=dict)
    max_context_tokens: int | None = None   # the model's window; a longer full book is an error
    prompt_version: str | None = None


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


@dataclass(frozen=True)
class GenerationSpec:
    """Question generation (paper §2, Appendix A.1)."""

    model: str = "lsqa/template-questions"
    entities: int = 5                       # go down the entity list this far
    questions_per_entity: int = 2
    context_tokens: int = 100_000           # whole book if it fits, else the entity's mention chain
    entity_method: str = "auto"             # auto (fastcoref when a model is configured) | fastcoref | fallback
    params: dict = field(default_factory=dict)


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
    use_cache: bool = True
    source: str = ""

    def to_dict(self) -> dict:
        """A JSON-able copy for the runs table (it never holds secrets: they are refused at load)."""
        import dataclasses

        return dataclasses.asdict(self)


def _reject_secrets(path, table: dict, where: str) -> None:
    for key, value in table.items():
        name = str(key).lower().replace("-", "_")
        if any(s == name or name.endswith("_" + s) for s in _SECRET_KEYS) or _SECRET_NAME.search(name):
            raise InputError(path, f"{where} has '{key}': API keys come only from the environment "
                                   "(e.g. OPENAI_API_KEY), never from a config file")
        if isinstance(value, dict):
            _reject_secrets(path, value, f"{where}.{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    _reject_secrets(path, item, f"{where}.{key}[{i}]")


def _spec(path, cls, table: dict, where: str, **conv):
    known = set(cls.__dataclass_fields__)
    unknown = set(table) - known
    if unknown:
        raise InputError(path, f"{where}: unknown key(s) {', '.join(sorted(unknown))}",
                         hint=f"known: {', '.join(sorted(known))}")
    values = dict(table)
    try:
        for key, fn in conv.items():
            if key in values:
                values[key] = fn(values[key], where=f"{where}.{key}")
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise InputError(path, f"{where}: {exc}") from None


def load_run_config(path: str | Path) -> RunConfig:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such config file")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None
    return run_config_from_dict(data, source=str(path))


def run_config_from_dict(data: dict, *, source: str = "<config>") -> RunConfig:
    _reject_secrets(source, data, "config")
    data = dict(data)
    docs = data.pop("documents", None)
    if not docs:
        raise InputError(source, "'documents' is required: a list of document ids or titles, or \"all\"")
    if isinstance(docs, str):
        docs = [docs]
    systems = [_spec(source, SystemSpec, t, f"systems[{i}]", context=parse_context)
               for i, t in enumerate(data.pop("systems", []))]
    judges = [_spec(source, JudgeSpec, t, f"judges[{i}]", context=parse_context)
              for i, t in enumerate(data.pop("judges", []))]
    generation = _spec(source, GenerationSpec, data.pop("generation", {}), "generation")
    for i, j in enumerate(judges):
        if j.kind not in JUDGE_KINDS:
            raise InputError(source, f"judges[{i}] ({j.name}): kind {j.kind!r} is not one of {', '.join(JUDGE_KINDS)}")
        if j.reference not in ("1", "2", "both"):
            raise InputError(source, f"judges[{i}] ({j.name}): reference must be 1, 2 or both")
    for what, items in (("systems", systems), ("judges", judges)):
        names = [x.name for x in items]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise InputError(source, f"{what}: duplicate name(s) {', '.join(sorted(dupes))}")
    config = _spec(source, RunConfig, {**data, "documents": list(docs), "systems": systems, "judges": judges,
                                       "generation": generation, "source": source}, "config")
    if config.questions not in ("narrativeqa", "generate", "all"):
        raise InputError(source, f"questions = {config.questions!r}: use \"narrativeqa\", \"generate\" or \"all\"")
    if config.sample < 1:
        raise InputError(source, "sample must be at least 1")
    return config
