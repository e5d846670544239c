"""The workspace store: the only package in lsqa that contains SQL.

``db`` holds connections and migrations; one module per area holds that area's reads and writes.
Callers may import a name from here or from its module; within the package, modules import
from each other's modules, never from this file.
"""

from __future__ import annotations

from lsqa.fronts import lazy_front, lazy_names

# Connections and migrations: every reader needs them, and they cost only duckdb.
from lsqa.store.db import (
    MIGRATIONS_DIR,
    MigrationChanged,
    WorkspaceError,
    check_workspace_path,
    connect,
    data_version,
    forget_migrated,
    is_read_only,
    linger,
    migrate,
    migration_files,
    transaction,
    write,
)

# The area modules load on first use (PEP 562): bulk inserts pull pyarrow (and embeddings numpy), which `lsqa status` and `lsqa --help` never need. Two names stay in their modules because a module has the
# same name: audit_queue.audit_queue and reviews.reviews.
_LAZY = {
    "lsqa.store.annotation": (
        "add_setting", "last_review_id", "question_of", "question_text", "recent_reviews",
        "reviews_by_others_since", "setting",
    ),
    "lsqa.store.audit_queue": (
        "audit_work", "queue_choices",
    ),
    "lsqa.store.bulk": (
        "fetch_dicts",
    ),
    "lsqa.store.corpus": (
        "add_reference_corrections", "books", "document_by_sha1", "document_ids", "documents_by_sha1", "entity_mentions", "get_document",
        "get_passages", "insert_documents", "insert_entities", "insert_passages", "insert_questions",
        "list_documents", "list_entities", "list_questions", "passage_counts", "passage_page",
        "passages_covering", "passages_of_documents", "question_ids", "question_texts",
        "questions_with_answers", "reference_corrections", "resolve_documents", "set_document_text", "text_slice",
    ),
    "lsqa.store.embeddings": (
        "save_vectors", "stored_vectors",
    ),
    "lsqa.store.export": (
        "export_folder", "export_tables", "file_slugs",
    ),
    "lsqa.store.lineage": (
        "Change", "forget", "history",
    ),
    "lsqa.store.llm_batches": (
        "add_batch", "get_batch", "list_batches", "OPEN", "open_batches", "update_batch",
    ),
    "lsqa.store.llm_calls": (
        "add_to_run", "cached_ok", "claim_calls", "cost_of_runs", "get_call", "held_by_others",
        "release_claims", "renew_claims", "run_call_totals", "save_calls",
    ),
    "lsqa.store.names": (
        "judge_kinds", "system_models", "systems_with_answers", "verdict_kinds",
    ),
    "lsqa.store.prompt_texts": (
        "save_texts",
    ),
    "lsqa.store.results": (
        "answered", "answers_for", "insert_answers", "insert_judgments", "judge_definitions", "judges",
        "judgment_ids", "judgment_label", "judgment_labels", "judgments_in_context", "list_judgments",
        "list_systems", "names_with_results", "other_verdicts", "record_definitions", "system_definitions",
        "upsert_systems",
    ),
    "lsqa.store.reviews": (
        "add_flag", "add_review", "annotator_progress", "flag_before", "flagged_questions", "flags",
        "flags_of", "human_labels_of", "last_action", "review_history",
    ),
    "lsqa.store.runs": (
        "close_abandoned_runs", "finish_run", "list_runs", "overview_counts", "recent_runs", "run_counts",
        "start_run", "study_spent", "table_counts",
    ),
    "lsqa.store.verdicts": (
        "current_flags", "effective_verdicts", "final_label_table", "final_labels", "flagged_question_ids", "human_labels",
        "reference_evidence", "sampled_human_labels",
    ),
    "lsqa.store.workspace_cache": (
        "clear", "kept_while_unchanged",
    ),
}

__all__ = [
    "check_workspace_path", "connect", "data_version", "forget_migrated", "is_read_only", "linger", "migrate", "migration_files", "MigrationChanged", "MIGRATIONS_DIR", "transaction", "WorkspaceError", "write",
] + lazy_names(_LAZY)


__getattr__, __dir__ = lazy_front(__name__, _LAZY, globals())
