"""What a study covers in a workspace, read the same way by ``lsqa plan`` and ``lsqa run``: its
documents with their texts, the questions stored for it, and the checks made before any request
is built or anything is written (every judge kind has a record, every document named exists, no
judge could have to give more verdicts than lsqa takes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lsqa import store
from lsqa.config.study import RunConfig
from lsqa.corpus.contexts import BookContexts
from lsqa.errors import InputError
from lsqa.store import corpus as corpus_store

# The most verdicts one judge may have to give in a study: 10,000 systems side by side are ~50
# million pairs per question, which `lsqa plan` and `lsqa run` would spend minutes building before
# any output. The paper's studies need ~20,000 (c = 200 questions, 10 systems, both orders).
MAX_VERDICTS_PER_JUDGE = 200_000


@dataclass(frozen=True)
class StudyScope:
    """A study's documents in one workspace, with their texts and passages (``books``)."""

    workspace: Path
    config: RunConfig
    doc_ids: list[str]
    books: BookContexts

    def questions(self) -> list[dict]:
        """The study's questions stored now: its source's questions of its documents, the first
        ``max_questions`` of each document."""
        config = self.config
        origin = {"narrativeqa": "narrativeqa", "generate": "generated", "all": None}[config.questions]
        with store.connect(self.workspace) as con:
            rows = corpus_store.list_questions(con, self.doc_ids, origin)
        if config.max_questions:
            per_doc: dict[str, int] = {}
            kept = []
            for q in rows:
                per_doc[q["document_id"]] = per_doc.get(q["document_id"], 0) + 1
                if per_doc[q["document_id"]] <= config.max_questions:
                    kept.append(q)
            rows = kept
        return rows

    def questions_to_come(self, questions: list[dict]) -> int:
        """How many questions the run will answer: ``questions`` (those stored), plus for
        ``questions = "generate"`` the most the generation can add to books without any yet."""
        config = self.config
        if config.questions != "generate":
            return len(questions)
        have = {q["document_id"] for q in questions}
        n = config.generation.entities * config.generation.questions_per_entity
        if config.max_questions:
            n = min(n, config.max_questions)
        return len(questions) + n * sum(d not in have for d in self.doc_ids)


def study_scope(workspace: str | Path, config: RunConfig) -> StudyScope:
    """The scope of ``config`` in ``workspace``, checked whole before anything is written: an
    unknown judge kind or document, or a study too large to judge, is an InputError naming it."""
    workspace = Path(workspace)
    check_kinds(config)
    with store.connect(workspace) as con:
        if config.documents == ["all"]:
            doc_ids = [d["id"] for d in corpus_store.list_documents(con) if d["has_text"]]
        else:
            try:
                doc_ids = corpus_store.resolve_documents(con, config.documents)
            except corpus_store.AmbiguousTitle as exc:
                raise InputError(config.source, f"documents: {exc.args[0]}") from None
            except KeyError as exc:
                raise InputError(config.source, f"unknown document(s) {exc.args[0]}",
                                 hint="see `lsqa status` / the Corpus page for ids and titles") from None
        documents = {d: corpus_store.get_document(con, d) for d in doc_ids}
        passages = {d: corpus_store.get_passages(con, d) for d in doc_ids}
    scope = StudyScope(workspace, config, doc_ids, BookContexts(documents, passages))
    check_scale(config, scope.questions_to_come(scope.questions()))
    return scope


def check_kinds(config: RunConfig) -> None:
    """Every judge's kind has a record in ``lsqa.judging.kinds`` (a config is checked against the
    names of ``lsqa.vocabulary``; one made with ``model_construct`` or ``model_copy`` is not checked)."""
    from lsqa.judging import kinds

    for i, judge in enumerate(config.judges):
        try:
            kinds.get(judge.kind)
        except kinds.UnknownJudgeKind as exc:
            raise InputError(config.source, f"judges[{i}].kind: {exc}") from None


def check_scale(config: RunConfig, n_questions: int) -> None:
    """Refuse, before any work, a judge that could have to give more than
    ``MAX_VERDICTS_PER_JUDGE`` verdicts (counted from the config: pairs of systems on the sampled
    questions for side-by-side kinds, answers times references for the others)."""
    from lsqa.judging import kinds

    n_systems = len(config.systems)
    sampled = min(config.sample, n_questions)
    for i, judge in enumerate(config.judges):
        kind = kinds.get(judge.kind)
        orders = 2 if judge.both_orders else 1
        if kind.pairwise:
            most = sampled * (n_systems * (n_systems - 1) // 2) * orders
            what = (f"{n_systems:,} systems make {n_systems * (n_systems - 1) // 2:,} pairs, on {sampled:,} sampled "
                    f"question(s){' in both orders' if orders == 2 else ''}")
        elif kind.about_references:  # one verdict per reference, whatever the systems
            refs = 2 if judge.reference == "both" else 1
            most = n_questions * refs
            what = f"{n_questions:,} question(s)" + (" × 2 references" if refs == 2 else "")
        else:
            refs = 2 if kind.one_reference and judge.reference == "both" else 1
            most = n_questions * n_systems * refs
            what = f"{n_systems:,} systems × {n_questions:,} question(s)" + (" × 2 references" if refs == 2 else "")
        if most > MAX_VERDICTS_PER_JUDGE:
            raise InputError(config.source, f"judges[{i}] ({judge.name}): up to {most:,} verdicts ({what}), more "
                                            f"than lsqa takes for one judge ({MAX_VERDICTS_PER_JUDGE:,})",
                             hint="judge fewer systems or questions (sample, max_questions), or split the study")
