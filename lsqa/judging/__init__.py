"""Judges: each kind as one record (kinds), the tasks they are given, their verdicts' ids, their guidelines, the semantic-similarity rater."""

from lsqa.judging.kinds import JudgeKind, KindMisfit, UnknownJudgeKind, get, names, register, unregister
from lsqa.judging.tasks import JudgeTask, TaskInputs, sample_questions, shown_orders, yes_no_tasks
from lsqa.store.verdict_ids import judgment_id

__all__ = ["JudgeKind", "JudgeTask", "KindMisfit", "TaskInputs", "UnknownJudgeKind", "get", "judgment_id", "names",
           "register", "sample_questions", "shown_orders", "unregister", "yes_no_tasks"]
