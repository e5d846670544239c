"""What the dashboard pages show, as plain data and figures (never imports streamlit)."""

from __future__ import annotations

from lsqa.fronts import lazy_front, lazy_names

# One module per screen holds what it reads and how it shows it: overview_view, corpus_view (with
# longspan_view, the Corpus page's Long span tab), run_view, agreement_view, leaderboard_view (with
# corrected_view, headline and report, which `lsqa report` shares), audit_view (with team_progress_view),
# adjudication_view, reference_view. Pages import nothing of lsqa but this package: what they need from
# below it comes through common (errors, escaping, vocabulary), audit_actions and sign_in.
#
# Loaded on first use (PEP 562): charts pull plotly, the screens the statistics; each page should load
# only what it draws. keys_script is the subpackage lsqa.dashboard.ui's.
_LAZY = {
    "lsqa.dashboard.audit_view": (
        "decision_bar", "evidence_blocks", "filter_widgets", "filters_of", "flag_reference",
        "guidelines_label", "item_view", "late_reviewers", "late_warning", "LINK_PARAMETERS",
        "no_recent_note", "opening_state", "overlap_caption", "percent", "position_line", "prompt_shown",
        "queue_summary", "recent_table", "remember_settings", "restore_settings", "sampled_judge",
        "sampling_caption", "save_decision", "save_guidelines", "save_overlap", "settings_as_last_used",
        "STYLE", "undo_mine", "up_next_caption", "UP_NEXT_ROWS", "up_next_table", "where_i_am", "why_shown",
    ),
    "lsqa.dashboard.chart_export": (
        "to_png",
    ),
    "lsqa.dashboard.charts": (
        "accuracy_bars", "confusion", "plain", "preference", "strength_bars", "to_html", "win_matrix",
    ),
    "lsqa.dashboard.common": (
        "current_workspace", "exists", "FLAG_REASONS", "group_by", "judges_by_family", "kept_open", "LsqaError",
        "md_escape", "OVERRIDES", "text_html", "to_csv",
    ),
    "lsqa.dashboard.item_cards": (
        "answer_cards", "question_card",
    ),
    "lsqa.dashboard.leaderboard_view": (
        "ALL_JUDGES", "baseline", "chosen_judge", "chosen_show", "file_name", "judge_choices", "now_utc",
        "only", "SHOW", "strength_bar", "subtitle", "switch_changes", "View", "with_strength_bar",
        "with_view",
    ),
}

__all__ = lazy_names(_LAZY)


__getattr__, __dir__ = lazy_front(__name__, _LAZY, globals())
