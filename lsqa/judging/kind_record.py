"""A judge kind's record (``JudgeKind``) and the errors about kinds: the shape every kind fills in.
The registry and the built-in kinds are ``lsqa.judging.kinds``; the task builders a record names are
``lsqa.judging.tasks``, which reads records of this shape without knowing the registry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping

from lsqa.errors import LsqaError
from lsqa.prompting import templates as prompts
from lsqa.vocabulary import PAIRWISE

if TYPE_CHECKING:
    from lsqa.config.study import JudgeSpec

ANY_ORIGIN = "*"


class UnknownJudgeKind(LsqaError, ValueError):
    """A judge kind no record describes (a typo in a file, or a plugin kind not registered here)."""


class KindMisfit(LsqaError, ValueError):
    """A record that cannot be registered, or a prompt whose output a kind's labels cannot hold."""


@dataclass(frozen=True)
class JudgeKind:
    """One judge kind: everything lsqa decides by a verdict's kind.

    ``build(kind, judge, inputs)`` returns the kind's ``JudgeTask``s for a study
    (``lsqa.judging.tasks.TaskInputs``); a kind with ``rate`` needs no model call: ``rate(kind, judge,
    tasks)`` turns the tasks still to do into verdict rows on this machine.
    """

    name: str
    family: str                            # vocabulary.PAIRWISE (a pair of answers) | vocabulary.BINARY (one)
    summary: str                           # what it rates against what, with the paper's section
    labels: tuple[str, ...]                # canonical labels, in system terms
    aliases: Mapping[str, str]             # a label as written (lower case) → canonical
    prompts: Mapping[str, str]             # question origin (or ANY_ORIGIN) → prompt id; {} if it has none
    outputs: tuple[str, ...]               # output formats (prompt header ``output``) its labels fit
    build: Callable                        # (kind, judge, TaskInputs) → list[JudgeTask]
    guideline: str                         # what the annotator is told "correct"/"better" means (markdown)
    rate: Callable | None = None           # (kind, judge, tasks) → rows, for a kind that needs no model call
    scored: bool = False                   # a label may be a score in [-1, 1], thresholded to yes/no
    reads_book: bool = False               # its judge's context (book, passages) is what it judges by
    one_reference: bool = False            # each verdict compares an answer with one NarrativeQA reference
    about_references: bool = False         # its verdicts rate a NarrativeQA reference itself, not a system's
                                           # answer: stored in reference_checks (migration 0018), never judgments
    label_hint: str = ""                   # what to write, for an import's error message
    extra: Mapping[str, object] = field(default_factory=dict)  # a plugin's own facts

    @property
    def pairwise(self) -> bool:
        return self.family == PAIRWISE

    @property
    def needs_call(self) -> bool:
        """Whether a verdict of this kind is a model call (``lsqa plan`` counts those)."""
        return self.rate is None

    @property
    def shown_family(self) -> str:
        """The family in the audit's words."""
        return "side-by-side" if self.pairwise else "yes/no"

    def prompt_id(self, question: dict) -> str:
        """The prompt for a question of this origin (NarrativeQA questions have their own, Figs. 19-20)."""
        found = self.prompts.get(question.get("origin", ""), self.prompts.get(ANY_ORIGIN))
        if found is None:
            raise KindMisfit(f"judge kind {self.name!r} has no prompt for {question.get('origin')!r} questions")
        return found

    def load_prompt(self, judge: JudgeSpec, question: dict) -> prompts.Prompt:
        """The prompt file for ``question`` in the judge's version and layout (context-first when it
        caches prompts), checked to answer in an output format this kind's labels can hold."""
        prompt = prompts.load_prompt(self.prompt_id(question), judge.prompt_version,
                                     layout=prompts.layout_for(judge.prompt_caching))
        if prompt.output not in self.outputs:
            raise KindMisfit(f"{prompt.path}: output {prompt.output!r} does not fit judge kind {self.name!r} "
                             f"(it answers in {', '.join(self.outputs)}); use a prompt of that output")
        return prompt

    def normalise_label(self, label) -> str:
        """A label as written in a file → the canonical one (a score stays a number text for a scored
        kind: the importer thresholds it); ValueError naming the kind if it is none of them."""
        text = str(label).strip().strip("'\"").lower()
        if self.scored:
            try:
                float(text)
            except ValueError:
                pass
            else:
                return text
        if text not in self.aliases:
            raise ValueError(f"label {label!r} is not a {self.name} label (expected one of {', '.join(self.labels)})")
        return self.aliases[text]
