"""The numbers: Bradley-Terry rankings, accuracy, agreement, corrected estimates, audit sampling; arrays in, numbers out (the workspace reads that feed them are ``lsqa.figures``)."""

from __future__ import annotations

from lsqa.fronts import lazy_front, lazy_names

# Loaded on first use (PEP 562): every module here pulls numpy and most scipy, which `lsqa status`,
# `lsqa --help` and the pages that draw no figure never need.
_LAZY = {
    "lsqa.stats.agreement": (
        "acceptance_table", "agreement_mask", "category_counts", "cohen_kappa", "compare_raters",
        "confusion_matrix", "fleiss_kappa", "infer_labels", "kappa_bootstrap_ci", "kappa_from_confusion",
        "krippendorff_alpha_nominal", "paired_labels", "percent_agreement", "pivot_ratings",
        "position_consistency", "preference_table", "SWAP_POSITIONS",
    ),
    "lsqa.stats.corrected": (
        "audits_to_separate", "design", "label_pulls", "ppi_bradley_terry", "ppi_mean",
    ),
    "lsqa.stats.rank_flips": (
        "bradley_terry_flips", "MOVERS_SHOWN", "Overrides",
    ),
    "lsqa.stats.ranking": (
        "accuracy_ci", "bootstrap_bradley_terry", "count_comparisons", "counts_from_cells", "counts_from_win_matrix",
        "FALLBACK_PRIOR", "fit_bradley_terry", "fit_win_matrix", "is_strongly_connected", "log_likelihood",
        "mcnemar_test", "paired_difference_ci", "PairedDifference", "PAPER_Z", "win_probability",
        "win_probability_matrix",
    ),
    "lsqa.stats.rank_intervals": (
        "for_accuracies", "from_bootstrap", "from_covariance", "RankIntervals",
    ),
    "lsqa.stats.reports": (
        "agreement_table", "rank_counts", "rank_table",
    ),
    "lsqa.stats.sampling": (
        "inclusion_probabilities", "Item", "Items",
    ),
    "lsqa.stats.style_control": (
        "bootstrap_style_controlled", "fit_style_controlled", "length_coefficient", "length_difference",
        "style_data", "style_table",
    ),
}

__all__ = lazy_names(_LAZY)


__getattr__, __dir__ = lazy_front(__name__, _LAZY, globals())
