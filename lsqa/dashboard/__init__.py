"""What the dashboard pages show, as plain data and figures (never imports streamlit)."""

from __future__ import annotations

from lsqa.fronts import lazy_front, lazy_names

# Loaded on first use (PEP 562): charts pull plotly, page_data the stats; each page should load only
# what it draws. keys_script is the subpackage lsqa.dashboard.ui's.
_LAZY = {
    "lsqa.dashboard.audit_view": (
        "decision_bar", "evidence_blocks", "filter_widgets", "filters_of", "flag_reference",
        "guidelines_label", "item_view", "late_reviewers", "late_warning", "LINK_PARAMETERS",
        "no_recent_note", "opening_state", "overlap_caption", "percent", "position_line", "prompt_shown",
        "queue_summary", "recent_table", "remember_settings", "restore_settings", "sampled_judge",
        "sampling_caption", "save_decision", "save_guidelines", "save_overlap", "settings_as_last_used",
        "STYLE", "undo_mine", "up_next_caption", "UP_NEXT_ROWS", "up_next_table", "where_i_am", "why_shown",
    ),
    "lsqa.dashboard.chain_view": (
        "mention_chain", "page_count",
    ),
    "lsqa.dashboard.chart_export": (
        "to_png",
    ),
    "lsqa.dashboard.charts": (
        "accuracy_bars", "confusion", "plain", "preference", "strength_bars", "to_html", "win_matrix",
    ),
    "lsqa.dashboard.item_cards": (
        "answer_cards", "question_card",
    ),
    "lsqa.dashboard.leaderboard_view": (
        "ALL_JUDGES", "baseline", "chosen_judge", "chosen_show", "file_name", "judge_choices", "now_utc",
        "only", "SHOW", "strength_bar", "subtitle", "switch_changes", "View", "with_strength_bar",
        "with_view",
    ),
    "lsqa.dashboard.page_data": (
        "accuracy_rows", "agreement_overview", "agreement_rows", "AGREEMENT_SECTIONS", "books",
        "config_files", "confusion_rows", "current_workspace", "entities", "exists", "has_llmbar",
        "judge_vs_human", "judges_by_family", "kept_open", "leaderboard", "leaderboard_judges", "overview",
        "pairwise_systems", "passages", "preference_rows", "questions_and_answers", "ranking_rows",
        "read_config_file", "records", "run_choices", "run_history", "self_preference", "stage_rows",
        "study_config", "study_plan", "to_csv", "win_rows",
    ),
    "lsqa.dashboard.run_form": (
        "check", "clean_numbers", "defaults",
    ),
}

__all__ = lazy_names(_LAZY)


__getattr__, __dir__ = lazy_front(__name__, _LAZY, globals())
