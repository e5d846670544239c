"""Rankings of a workspace's verdicts counted in SQL (issue 35): ``lsqa rank --workspace``, the
Leaderboard (``analysis.ranking``) and ``lsqa report`` give, to the bit, what ranking the verdicts
one Python row each (``rank_table(comparison_rows(...))``, how they were read before) gives: the same
strengths, intervals with the same seed, rank intervals, tiers and warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.scale_workspace import build
from lsqa import audit, store
from lsqa.cli import app
from lsqa.dashboard import leaderboard_view, report
from lsqa.figures import analysis
from lsqa.stats.reports import rank_table

runner = CliRunner()


def _row_by_row(ws: Path, judge: str, *, use_overrides=False, exclude_flagged=False, **options) -> dict:
    result = rank_table(analysis.comparison_rows(ws, judge, use_overrides=use_overrides,
                                                 exclude_flagged=exclude_flagged), **options)
    return {**result, "judge": judge}


def _pairs_row_by_row(ws: Path, judge: str) -> dict:
    out: dict = {}
    for r in analysis.comparison_rows(ws, judge):
        pair = tuple(sorted((r["system_a"], r["system_b"])))
        out[pair] = out.get(pair, 0) + 1
    return out


def _outcome(rank, *args, **options):
    """The ranking, or the error it raises as (type, message): a Davidson bootstrap of the demo's
    rag4k judge with overrides fails with a singular matrix on both paths (as on main before issue 35)."""
    try:
        return rank(*args, **options)
    except ValueError as exc:
        return type(exc).__name__, str(exc)


def _pairwise_judges(ws: Path) -> list[str]:
    return analysis.judges_by_family(ws)["pairwise"]


def _people_and_flags(ws: Path) -> None:
    """Overrides on some side-by-side verdicts and a flagged reference, so that the switches change the rows."""
    with store.connect(ws) as con:
        rows = con.execute("SELECT id, kind, label, question_id FROM judgments WHERE family = 'pairwise'"
                           " AND status = 'ok' ORDER BY hash(id) LIMIT 12").fetchall()
    for i, (jid, _kind, label, _) in enumerate(rows[:10]):
        audit.review(ws, ("ana", "ben")[i % 2], jid, {"A": "B", "B": "tie", "tie": "A", "none": "A"}[label])
    audit.flag(ws, "ana", rows[11][3], "1", "wrong")


def _options(systems: list[str]) -> list[dict]:
    return [dict(bootstrap=200), dict(bootstrap=200, by_question=True, seed=4),
            dict(bootstrap=150, use_overrides=True, exclude_flagged=True, by_question=True),
            dict(bootstrap=100, use_overrides=True, tie_model="davidson", anchor=systems[-1], level=0.9, seed=9),
            dict(bootstrap=0)]


def _check(ws: Path) -> int:
    _people_and_flags(ws)
    checked = 0
    for judge in _pairwise_judges(ws):
        systems = sorted({s for pair in _pairs_row_by_row(ws, judge) for s in pair})
        for options in _options(systems):
            assert _outcome(analysis.ranking, ws, judge, **options) == _outcome(_row_by_row, ws, judge, **options), \
                (judge, options)
            checked += 1
        switches = dict(use_overrides=True, exclude_flagged=True)
        assert leaderboard_view.ranking.uncached(ws, judge, bootstrap=300, seed=2, **switches) == \
            _row_by_row(ws, judge, bootstrap=300, seed=2, **switches)  # the Leaderboard's read
        assert report._pairs(ws, judge) == _pairs_row_by_row(ws, judge)
        args = ["rank", "--workspace", str(ws), "--judge", judge, "--json", "--bootstrap", "120", "--by-question",
                "--human-overrides", "--seed", "11"]
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        expected = _row_by_row(ws, judge, bootstrap=120, by_question=True, use_overrides=True, seed=11)
        expected.pop("judge")
        shown = json.loads(done.stdout)
        # The headline (lsqa.dashboard.headline) is the command's words about these figures, not a figure.
        assert shown.pop("headline").startswith(f"{shown['systems'][0]['system']} is ahead")
        assert shown == json.loads(json.dumps(expected))
    return checked


def test_rankings_counted_in_sql_are_the_row_by_row_rankings_on_the_demo(demo_workspace):
    assert _check(demo_workspace) >= 10


@pytest.mark.slow  # 30,000 verdicts generated
def test_rankings_counted_in_sql_are_the_row_by_row_rankings_on_a_generated_workspace(tmp_path):
    """Three side-by-side judges of 10 systems, one on both orders of a third of the questions, ties and 'none'."""
    ws = tmp_path / "generated.duckdb"
    build(ws, 30_000, rich=True, seed=5)
    assert _pairwise_judges(ws) == ["gt-sxs", "sxs-1", "sxs-2"]
    assert _check(ws) == 15


@pytest.mark.parametrize("label", ["TIE", " none ", "b"])
def test_labels_in_any_case_are_counted_as_the_rows_count_them(tmp_path, label):
    """``normalize_winner`` reads a winner in any case and with spaces around; a label so stored (by an
    import of another tool's file, say) is counted the same in SQL, 'none' deciding which questions
    the by-question bootstrap draws."""
    ws = tmp_path / "w.duckdb"
    build(ws, 2_000, seed=1)
    with store.write(ws) as con:
        con.execute("UPDATE judgments SET label = ? WHERE id IN (SELECT id FROM judgments WHERE status = 'ok'"
                    " ORDER BY id LIMIT 300)", [label])
    for options in (dict(bootstrap=100), dict(bootstrap=100, by_question=True)):
        assert analysis.ranking(ws, "bench-sxs", **options) == _row_by_row(ws, "bench-sxs", **options)


@pytest.mark.parametrize("change", ["label = 'maybe'", "system_b = system_a"])
def test_rows_the_counts_cannot_take_fail_as_the_rows_fail(tmp_path, change):
    """A label that is not a winner, a system against itself: the error is the row-by-row one, and the
    command line reports it as before (one line naming the workspace, exit code 2)."""
    ws = tmp_path / "w.duckdb"
    build(ws, 2_000, seed=2)
    with store.write(ws) as con:
        con.execute(f"UPDATE judgments SET {change} WHERE id = (SELECT min(id) FROM judgments WHERE status = 'ok')")
    with pytest.raises(ValueError) as counted:
        analysis.ranking(ws, "bench-sxs", bootstrap=10)
    with pytest.raises(ValueError) as by_row:
        _row_by_row(ws, "bench-sxs", bootstrap=10)
    assert str(counted.value) == str(by_row.value)
    done = runner.invoke(app, ["rank", "--workspace", str(ws), "--judge", "bench-sxs", "--bootstrap", "10"])
    assert done.exit_code == 2
    assert str(by_row.value) in done.output
