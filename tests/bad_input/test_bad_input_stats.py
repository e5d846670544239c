"""Issue 14, area 6: statistics that would mislead are refused or said so. Disconnected comparison
graphs are warned about (and each system's group is reported), intervals that the data cannot give
(one comparison, a system that always wins) are marked not estimable instead of shown with zero
width, a JSON NaN system name is refused, --input with --judge is refused, and an unknown judge is
named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsqa.stats.reports import rank_table
from tests.support.bad_input import assert_refused, invoke

PROBES_INPUT = {
    "NaN system_a": [{"system_a": float("nan"), "system_b": "b", "winner": "A"}],
    "Infinity system_b": [{"system_a": "a", "system_b": float("inf"), "winner": "A"}],
    "object system": [{"system_a": {"n": 1}, "system_b": "b", "winner": "A"}],
    "list winner": [{"system_a": "a", "system_b": "b", "winner": ["A"]}],
    "NaN winner": [{"system_a": "a", "system_b": "b", "winner": float("nan")}],
    "same system": [{"system_a": "a", "system_b": "a", "winner": "A"}],
    "unknown winner": [{"system_a": "a", "system_b": "b", "winner": "C"}],
    "NUL in a name": [{"system_a": "a\x00", "system_b": "b", "winner": "A"}],
    "only none": [{"system_a": "a", "system_b": "b", "winner": "none"}],
}


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("name", list(PROBES_INPUT))
def test_a_bad_comparison_file_is_refused(tmp_path, name):
    good = [{"system_a": "x", "system_b": "y", "winner": "A"}]
    path = _jsonl(tmp_path / "c.jsonl", good + PROBES_INPUT[name])
    must = (str(path),) if name == "only none" else (f"{path}:2",)
    if name == "only none":
        path = _jsonl(tmp_path / "c.jsonl", PROBES_INPUT[name])
    assert_refused(f"rank --input {name}", ["rank", "--input", path, "--bootstrap", "0"], workspace=None,
                   must_name=must)


@pytest.fixture(scope="module")
def judged(tmp_path_factory, demo_workspace_template):
    path = tmp_path_factory.mktemp("st") / "ws.duckdb"
    shutil.copy(demo_workspace_template, path)
    return path


OPTION_PROBES = {
    "--input with --judge": lambda ws, f: ["rank", "--input", f, "--judge", "lexical-sxs-fc"],
    "--input with --workspace": lambda ws, f: ["rank", "--input", f, "--workspace", ws],
    "--input with --human-overrides": lambda ws, f: ["rank", "--input", f, "--human-overrides"],
    "--input with --exclude-flagged": lambda ws, f: ["rank", "--input", f, "--exclude-flagged"],
    "unknown judge": lambda ws, f: ["rank", "--judge", "nosuch", "--workspace", ws],
    "a yes/no judge": lambda ws, f: ["rank", "--judge", "lexical-autoais-fc", "--workspace", ws],
    "no --input and no --judge": lambda ws, f: ["rank", "--workspace", ws],
    "unknown anchor": lambda ws, f: ["rank", "--judge", "lexical-sxs-fc", "--workspace", ws, "--anchor", "nobody"],
    "unknown tie model": lambda ws, f: ["rank", "--judge", "lexical-sxs-fc", "--workspace", ws, "--tie-model", "x"],
    "agreement --input with --workspace": lambda ws, f: ["agreement", "--input", f, "--workspace", ws,
                                                         "--rater-a", "a", "--rater-b", "b"],
    "agreement unknown rater": lambda ws, f: ["agreement", "--workspace", ws, "--rater-a", "nosuch",
                                              "--rater-b", "lexical-gt"],
}
MUST = {"unknown judge": ("nosuch",), "a yes/no judge": ("lexical-autoais-fc",), "unknown anchor": ("nobody",),
        "agreement unknown rater": ("nosuch",), "--input with --judge": ("--input", "--judge")}


@pytest.mark.parametrize("name", list(OPTION_PROBES))
def test_conflicting_or_unknown_options_are_refused(judged, tmp_path, name):
    f = _jsonl(tmp_path / "c.jsonl", [{"system_a": "x", "system_b": "y", "winner": "A"}])
    assert_refused(f"stats options {name}", OPTION_PROBES[name](judged, f), workspace=judged,
                   must_name=MUST.get(name, ()))


# -------------------------------------------------------------- what the numbers can say

def _rows(pairs: list[tuple[str, str, str]], repeat: int = 1) -> list[dict]:
    return [{"system_a": a, "system_b": b, "winner": w, "question_id": f"q{i}-{k}"}
            for k in range(repeat) for i, (a, b, w) in enumerate(pairs)]


def test_two_groups_never_compared_are_warned_about_and_grouped():
    rows = _rows([("a", "b", "A"), ("b", "a", "A"), ("a", "b", "tie"), ("c", "d", "A"), ("d", "c", "A"),
                  ("c", "d", "B")], repeat=5)
    result = rank_table(rows, bootstrap=50)
    groups = {s["system"]: s["group"] for s in result["systems"]}
    assert groups["a"] == groups["b"] != groups["c"] == groups["d"]
    assert any("never compared" in w for w in result["warnings"])


def test_a_connected_graph_has_no_warning():
    rows = _rows([("a", "b", "A"), ("b", "c", "A"), ("c", "a", "A"), ("a", "c", "tie")], repeat=5)
    result = rank_table(rows, bootstrap=50)
    assert result["warnings"] == [] and all(s["estimable"] for s in result["systems"])
    assert all(s["ci_low"] < s["ci_high"] for s in result["systems"])


@pytest.mark.parametrize("rows", [
    _rows([("a", "b", "A")]),                                          # one comparison
    _rows([("a", "b", "A"), ("a", "c", "A"), ("b", "c", "A"), ("c", "b", "A")], repeat=10),  # a always wins
    _rows([("a", "b", "B"), ("c", "a", "A"), ("b", "c", "tie"), ("c", "b", "A")], repeat=10),  # a never wins
], ids=["one comparison", "always wins", "never wins"])
def test_an_interval_the_data_cannot_give_is_not_shown_as_zero_width(rows):
    result = rank_table(rows, bootstrap=200)
    a = next(s for s in result["systems"] if s["system"] == "a")
    assert a["estimable"] is False and a["ci_low"] is None and a["ci_high"] is None and a["note"]
    assert any("not estimable" in w for w in result["warnings"])


def test_the_command_prints_the_warnings_and_not_a_zero_width_interval(tmp_path):
    path = _jsonl(tmp_path / "c.jsonl", _rows([("a", "b", "A")]))
    result = invoke("rank", "--input", path, "--bootstrap", "100")
    assert result.exit_code == 0, result.output
    assert "not estimable" in result.output and "warning:" in result.stderr


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcde"), st.sampled_from("abcde"), st.sampled_from(["A", "B", "tie"])),
                min_size=1, max_size=25))
def test_no_reported_interval_has_zero_width(triples):
    rows = _rows([t for t in triples if t[0] != t[1]])
    if not rows:
        return
    result = rank_table(rows, bootstrap=60)
    for s in result["systems"]:
        if s["estimable"]:
            assert s["ci_low"] is not None and s["ci_high"] > s["ci_low"]
        else:
            assert s["ci_low"] is None and s["ci_high"] is None
