"""Judge kinds, one record each: what a kind rates, in which labels, with which prompts,
how its tasks are built, whether it calls a model, and what its annotators are told.

The built-in kinds follow the paper:

- ``absolute``: AutoAIS (§3.1, Fig. 12; Fig. 19 for NarrativeQA): is the answer supported by the
  book, or by BM25 passages retrieved with the question and the answer as query (§5.1)?
- ``pairwise``: side by side (§3.2, Fig. 13; Fig. 20 with Equal for NarrativeQA) over all system
  pairs on one seeded sample of ``c`` questions.
- ``groundtruth``: yes/no against one NarrativeQA reference (§5.2, Fig. 17).
- ``groundtruth-pairwise``: side by side given a reference instead of the book (Fig. 18).
- ``similarity``: cosine similarity of sentence embeddings to the references (§5.2 baseline),
  computed on this machine: no model call.
- ``reference-check`` (not in the paper): is the question answerable and does one
  NarrativeQA reference answer it, given the story's summary (and passages, if the judge reads any),
  as LiteraryQA re-checked the dataset. Its verdicts are about references, not systems: they feed
  ``lsqa suspects`` and stay out of the rankings, agreement figures and the audit queue.

Every other module asks the record (``get(name)``) instead of comparing a kind's name; an unknown
name is ``UnknownJudgeKind``, never a default. A new kind is one ``register(JudgeKind(...))`` plus
its prompt file (in ``prompts/`` or a folder of ``LSQA_PROMPTS_DIR``); its name and family go to
``lsqa.vocabulary`` (the words the floors below judging read) and every verdict stores its family
(migration 0012), so statistics and the audit treat it by its family without knowing its name.
"""

from __future__ import annotations

from types import MappingProxyType

from lsqa import vocabulary
from lsqa.judging import tasks
from lsqa.judging.kind_record import ANY_ORIGIN, JudgeKind, KindMisfit, UnknownJudgeKind
from lsqa.vocabulary import ABSOLUTE_ALIASES, ABSOLUTE_LABELS, BINARY, PAIRWISE, PAIRWISE_ALIASES, PAIRWISE_LABELS

# ---------------------------------------------------------------------------------- registry

KINDS: dict[str, JudgeKind] = {}


def register(kind: JudgeKind) -> JudgeKind:
    """Add a kind (built-ins at import; tests and plugins after). Registering the same record again
    is harmless; another record under a taken name is refused."""
    if kind.family not in vocabulary.FAMILIES:
        raise KindMisfit(f"judge kind {kind.name!r}: family {kind.family!r} is not one of "
                         f"{', '.join(vocabulary.FAMILIES)}")
    if not kind.labels or any(kind.aliases.get(label.lower()) != label for label in kind.labels):
        raise KindMisfit(f"judge kind {kind.name!r}: every label must be its own alias (lower case)")
    if kind.name in KINDS and KINDS[kind.name] is not kind:
        raise KindMisfit(f"judge kind {kind.name!r} is registered already")
    vocabulary.add_judge_kind(kind.name, kind.family, about_references=kind.about_references)
    KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a registered kind (a test's, a plugin's); the built-in kinds cannot be removed."""
    vocabulary.remove_judge_kind(name)
    KINDS.pop(name, None)


def get(name: str) -> JudgeKind:
    """The record of ``name``; ``UnknownJudgeKind`` if there is none."""
    try:
        return KINDS[name]
    except (KeyError, TypeError):
        raise UnknownJudgeKind(f"unknown judge kind {name!r}: use one of {', '.join(KINDS)}") from None


def names() -> tuple[str, ...]:
    return tuple(KINDS)


def all_kinds() -> tuple[JudgeKind, ...]:
    return tuple(KINDS.values())


# ------------------------------------------------------------------------------- the built-ins

_FLAGS = """
**Flag a reference** (keys F / G for reference 1 / 2, after choosing the reason: W wrong, M ambiguous,
Q unanswerable) when the NarrativeQA reference itself is the problem, not the answer:
- *wrong*: the book says otherwise (references were written from summaries, not the book — paper App. E);
- *ambiguous*: the question allows several readings and the reference picks one;
- *unanswerable*: the book does not answer the question.

A flag does not change the verdict: decide the verdict too."""

_YES_NO = dict(family=BINARY, labels=ABSOLUTE_LABELS, aliases=MappingProxyType(ABSOLUTE_ALIASES),
               label_hint=f"use one of {', '.join(ABSOLUTE_LABELS)}")
_SIDE_BY_SIDE = dict(family=PAIRWISE, labels=PAIRWISE_LABELS, aliases=MappingProxyType(PAIRWISE_ALIASES),
                     outputs=("side-by-side-json", "side-by-side-equal-json"),
                     label_hint=f"use one of {', '.join(PAIRWISE_LABELS)} (in system terms)")

ABSOLUTE = register(JudgeKind(
    name="absolute", summary="AutoAIS: is the answer supported by the book or retrieved passages (§3.1, §5.1)",
    prompts=MappingProxyType({"narrativeqa": "nqa_autoais", ANY_ORIGIN: "autoais"}), outputs=("autoais-json",),
    build=tasks.absolute_tasks, reads_book=True, **_YES_NO,
    guideline="""**Correct means: supported by the book.** The judge read the book (or the passages shown) and
said whether the answer is entailed by it (AutoAIS, paper §3.1). Say *Yes* when the story supports the
answer, even if the NarrativeQA references say something else; *No* when the story contradicts it or
says nothing about it. Check the highlighted evidence: the judge's quotes are marked in their passage.""" + _FLAGS))

SIDE_BY_SIDE = register(JudgeKind(
    name="pairwise", summary="side by side: which of two answers the book supports better (§3.2)",
    prompts=MappingProxyType({"narrativeqa": "nqa_side_by_side", ANY_ORIGIN: "side_by_side"}),
    build=tasks.pairwise_tasks, reads_book=True, **_SIDE_BY_SIDE,
    guideline="""**Better means: more correct by the book.** The judge saw the two answers in the order
shown (A first) with the book or retrieved passages (paper §3.2). Choose the answer that the story
supports better; *Equal* when both are equally right; *None* when neither is. Length and style do not
count. Labels are given in the positions shown; systems are named only after you decide when blind.""" + _FLAGS))

GROUNDTRUTH = register(JudgeKind(
    name="groundtruth", summary="yes/no: does the answer agree with one NarrativeQA reference (§5.2, Fig. 17)",
    prompts=MappingProxyType({ANY_ORIGIN: "groundtruth_yes_no"}), outputs=("yes-no",),
    build=tasks.groundtruth_tasks, one_reference=True, **_YES_NO,
    guideline="""**Correct means: agrees with the reference.** This rater compared the answer with one
NarrativeQA reference (the one marked "used by this rater", paper §5.2). Say *Yes* when the answer means
the same as that reference, even in other words; *No* otherwise. If the answer is right by the book but
the reference is wrong, say *No* and flag the reference.""" + _FLAGS))

GROUNDTRUTH_SIDE_BY_SIDE = register(JudgeKind(
    name="groundtruth-pairwise", summary="side by side given a NarrativeQA reference instead of the book (Fig. 18)",
    prompts=MappingProxyType({ANY_ORIGIN: "groundtruth_side_by_side"}),
    build=tasks.groundtruth_pairwise_tasks, one_reference=True, **_SIDE_BY_SIDE,
    guideline="""**Better means: closer to the references.** This rater compared the two answers
with the NarrativeQA references, not the book. Choose the answer closer to the references; *Equal* or
*None* as above. When the references are wrong, decide by them anyway and flag them.""" + _FLAGS))

SIMILARITY = register(JudgeKind(
    name="similarity", summary="embedding similarity to the references, thresholded to yes/no (§5.2 baseline)",
    prompts=MappingProxyType({}), outputs=(), build=tasks.similarity_tasks, rate=tasks.similarity_rate,
    scored=True, **{**_YES_NO, "label_hint": "use yes, no or a similarity from -1 to 1"},
    guideline="""**Correct means: close enough to the reference.** A similarity rater scored the answer
against the NarrativeQA references. Say *Yes* when the answer says what a reference says; *No* otherwise.
A wrong reference gets a flag.""" + _FLAGS))

REFERENCE_CHECK = register(JudgeKind(
    name="reference-check", summary="is the question answerable and does one NarrativeQA reference answer it, "
                                    "given the story's summary (after LiteraryQA)",
    prompts=MappingProxyType({ANY_ORIGIN: "reference_check"}), outputs=("reference-check-json",),
    build=tasks.reference_check_tasks, about_references=True, **_YES_NO,
    guideline="""**Correct means: the reference answers the question.** An LLM read the story's summary (and any
passages shown) and said whether the question can be answered from it and whether this NarrativeQA
reference answers it. Its verdicts are evidence on the Reference errors page (`llm_accepts`), not
verdicts on any system; flag the reference there if it is wrong."""))

# The words and the records describe the same kinds (vocabulary holds the names the config checks).
if names() != vocabulary.BUILTIN_JUDGE_KINDS:
    raise KindMisfit(f"built-in records {names()} differ from lsqa.vocabulary's {vocabulary.BUILTIN_JUDGE_KINDS}")
