"""What every screen of the dashboard shares: the workspace it shows and its one attachment per
render, CSV downloads, the judges by family, table headings in words, and the names pages need from
below the dashboard (errors to catch, escaping, vocabulary) so that a page imports ``lsqa.dashboard`` only.

Every read answers for the workspace as it is now, so an audit action shows in Agreement and
Leaderboard on the next render: the costly reads are kept only while the workspace's data is
unchanged (``lsqa.store.workspace_cache``; any commit, from any process, makes them read again).
"""

from __future__ import annotations

import contextlib
import csv
import io
from collections import defaultdict
from pathlib import Path
from typing import Iterator

from lsqa import store
from lsqa.config.settings import resolve_workspace
from lsqa.errors import LsqaError
from lsqa.figures import analysis
from lsqa.store.workspace_cache import kept_while_unchanged

# What pages take from below the dashboard, through this module only (tests/project/test_layout.py).
from lsqa.text.highlight import md_escape, text_html
from lsqa.vocabulary import FLAG_REASONS, OVERRIDES

__all__ = ["FLAG_REASONS", "HEADINGS", "LsqaError", "OVERRIDES", "current_workspace", "exists",
           "group_by", "headed", "judges_by_family", "kept_open", "md_escape", "text_html", "to_csv"]

# Headings in words for the workspace's column names, where a screen shows rows as the store reads them
# (st.dataframe's column_config: a label per column; a name the table does not have is ignored).
HEADINGS = {"parse_errors": "parse errors", "last_action": "last action", "calls_made": "calls made",
            "calls_cached": "calls cached", "calls_failed": "calls failed", "started_at": "started",
            "finished_at": "finished", "input_tokens": "input tokens", "max_output_tokens": "max output tokens",
            "cost_usd": "cost (USD)", "word_count": "words", "n_tokens": "tokens", "n_mentions": "mentions",
            "question_id": "question id"}


def headed(config: dict | None = None) -> dict:
    """A table's column_config: ``HEADINGS``, then the screen's own settings of some columns."""
    return {**HEADINGS, **(config or {})}


def current_workspace() -> Path:
    return resolve_workspace()


@contextlib.contextmanager
def kept_open(workspace: Path) -> Iterator[None]:
    """Keep the workspace attached while a page renders (app.py wraps every page in it).

    A page makes 10-40 reads, each of which would otherwise ATTACH and DETACH the file: up to a
    tenth of a keypress on the Audit page (docs/benchmarks-log/2026-12-01-0031-browser-after-the-speed-work.md).
    Other processes wait for the render as they wait for any read. A workspace that cannot be opened is
    left to the page, whose own first read names the problem."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(store.connect(workspace))
        except LsqaError:
            pass
        yield


def exists(workspace: Path) -> bool:
    return Path(workspace).is_file()


def to_csv(rows: list[dict], columns: list[str] | None = None) -> bytes:
    """Rows as a CSV file (the tables stakeholders download); a text cell a spreadsheet would run as
    a formula starts with a ' (``lsqa.text.csv_cells``), column names too (a win-probability table's
    columns are system names)."""
    from lsqa.text.csv_cells import safe_cell

    buf = io.StringIO()
    columns = columns or (list(rows[0]) if rows else [])
    writer = csv.writer(buf, lineterminator="\r\n")  # as csv.DictWriter wrote it
    writer.writerow([safe_cell(c) for c in columns])
    writer.writerows([safe_cell(r.get(c)) for c in columns] for r in rows)
    return buf.getvalue().encode("utf-8")


@kept_while_unchanged()
def judges_by_family(workspace: Path) -> dict[str, list[str]]:
    """Judge names: ``pairwise`` (side by side, rankable) and ``binary`` (yes/no, accuracy)."""
    return analysis.judges_by_family(workspace)


def group_by(rows: list[dict], key: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        out[r[key]].append(r)
    return dict(out)
