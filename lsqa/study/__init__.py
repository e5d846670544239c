"""Running studies: the pipeline, the plan before it, QA systems, background jobs, imports of results, the demo."""

from __future__ import annotations

import importlib

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
        "answer_tasks", "run", "RunSummary", "StageSummary",
    ),
    "lsqa.study.status": (
        "workspace_status",
    ),
}

__all__ = [
    "build_demo", "import_answers", "import_judgments", "cost_so_far", "list_jobs", "start", "wait",
    "EVALUATORS", "figures", "import_llmbar", "is_llmbar_judge", "judge_name", "JUDGES", "LLMBAR_DIR",
    "present_judges", "SETS", "answer_tasks", "run", "RunSummary", "StageSummary", "workspace_status",
]


def __getattr__(name: str):
    """A public name, imported from its module on first use (PEP 562)."""
    for module, names in _LAZY.items():
        if name in names:
            value = getattr(importlib.import_module(module), name)
            globals()[name] = value  # found without this function from now on
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
