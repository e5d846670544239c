"""What the dashboard screens read (lsqa.dashboard.leaderboard_view, agreement_view, common). "No data" is
shown for NoVerdicts only."""

from __future__ import annotations

import pytest

from lsqa import store
from lsqa.dashboard import agreement_view, common, leaderboard_view
from lsqa.errors import LsqaError, NoVerdicts, WorkspaceError
from lsqa.figures import analysis
from lsqa.study.imports import import_judgments


def test_named_errors_are_lsqa_errors():
    assert issubclass(NoVerdicts, LsqaError) and issubclass(WorkspaceError, LsqaError)
    assert issubclass(store.MigrationChanged, LsqaError)


def test_a_judge_with_nothing_to_rank_is_reported_not_raised(demo_workspace, tmp_path):
    with store.connect(demo_workspace) as con:
        q = con.execute("SELECT id FROM questions ORDER BY id LIMIT 1").fetchone()[0]
    path = tmp_path / "none.csv"
    path.write_text("question_id,rater,kind,system_a,system_b,label\n"
                    f"{q},all-none,pairwise,x,y,none\n")
    import_judgments(demo_workspace, path)
    board = leaderboard_view.leaderboard(demo_workspace, bootstrap=10)
    by_judge = {r["judge"]: r for r in board["rankings"]}
    assert by_judge["all-none"]["result"] is None and "nothing to rank" in by_judge["all-none"]["error"]
    assert all(r["result"] for j, r in by_judge.items() if j != "all-none")


def test_only_missing_verdicts_read_as_no_data(demo_workspace):
    judges = common.judges_by_family(demo_workspace)["pairwise"][:2]
    first = analysis.comparison_rows(demo_workspace, judges[0])[0]
    pair = (first["system_a"], first["system_b"])
    table = agreement_view.self_preference(demo_workspace, tuple(judges), pair)
    assert table["judges"] == judges and sum(map(sum, table["counts"])) > 0
    assert agreement_view.self_preference(demo_workspace, tuple(judges), ("nobody", "no one")) is None
    with pytest.raises(NoVerdicts):
        analysis.self_preference(demo_workspace, tuple(judges), ("nobody", "no one"))
