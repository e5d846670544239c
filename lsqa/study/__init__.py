"""Running studies: the pipeline, the plan before it, the scope both read, QA systems, background jobs, imports of results, the demo."""

from __future__ import annotations

from lsqa.fronts import lazy_front, lazy_names

# Loaded on first use (PEP 562): the pipeline pulls the judges, retrieval and the stats (numpy, scipy);
# `lsqa status` reads only status. plan.plan stays in its module (the module has its name).
_LAZY = {
    "lsqa.study.demo": (
        "build_demo",
    ),
    "lsqa.study.imports": (
        "import_answers", "import_judgments",
    ),
    "lsqa.study.jobs": (
        "cost_so_far", "list_jobs", "start", "wait",
    ),
    "lsqa.study.llmbar": (
        "EVALUATORS", "figures", "import_llmbar", "is_llmbar_judge", "judge_name", "JUDGES", "LLMBAR_DIR",
        "present_judges", "SETS",
    ),
    "lsqa.study.pipeline": (
        "answer_tasks", "run", "RunContext", "RunSummary", "StageSummary",
    ),
    "lsqa.study.scope": (
        "study_scope", "StudyScope",
    ),
    "lsqa.study.status": (
        "workspace_status",
    ),
}

__all__ = lazy_names(_LAZY)


__getattr__, __dir__ = lazy_front(__name__, _LAZY, globals())
