"""The figures a workspace holds: its reads that feed the statistics, live (workspace in, numbers out).

Between ``lsqa.store`` (the SQL) and the screens and commands (``lsqa.dashboard``, ``lsqa.cli``):
each function here reads what one statistic needs from a workspace, counted in SQL where the
verdicts are many, and hands arrays to ``lsqa.stats``. No wording for a page lives here.
"""

from __future__ import annotations

from lsqa.fronts import lazy_front, lazy_names

# Loaded on first use (PEP 562): the statistics pull numpy and scipy, which `lsqa status` and
# `lsqa --help` never need. Names that are also a module's name stay in their module
# (analysis.ranking, corrected.*, longspan.*, certification.*); self_preference is read from
# its module too.
_LAZY = {
    "lsqa.figures.analysis": (
        "accuracy", "annotator_agreement", "comparison_counts", "comparison_groups", "comparison_rows", "export",
        "judges_by_family", "LabelsRead", "pair_counts", "position_bias", "rater_labels", "rating_rows",
    ),
    "lsqa.figures.audits": (
        "item_table", "judge_items", "page_queue", "queue",
    ),
    "lsqa.figures.corrected": (
        "answer_audits", "corrected_accuracy", "corrected_ranking",
    ),
    "lsqa.figures.certification": (
        "certify",
    ),
    "lsqa.figures.longspan": (
        "analyse", "mention_fractions",
    ),
}

__all__ = lazy_names(_LAZY)


__getattr__, __dir__ = lazy_front(__name__, _LAZY, globals())
