"""Issue 33, the rest of the list, part 2: numbers out of bounds and what the numbers then say.
A q_index of 1e30 or a 5,000-character document_id (refused before any write, and no empty workspace
left behind at a path that did not exist), integer and level options of the command line out of
range, an inclusion probability below the floor (1e-320 made ``rank --corrected`` NaN), a corrected
interval of zero width (reported not estimable, as the judge-only path does), the same reviews file
imported twice (doubled the rows), a config with judges and no systems (exit 0), and a title two
books share (silently picked)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import tomli_w

from lsqa import store
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.store import results as results_store
from tests.conftest import TEST_DATA
from tests.support.bad_input import assert_refused, invoke, snapshot

SLICE = TEST_DATA / "narrativeqa_slice"
TOM = "2c5f448df18172babaac38806e1fb699a8baf65b"
STORIES = sorted((SLICE / "stories").glob("*.txt"))


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    path = tmp_path_factory.mktemp("bounds") / "ws.duckdb"
    ingest_narrativeqa(path, SLICE)
    return path


@pytest.fixture
def ws(ingested, tmp_path):
    path = tmp_path / "ws.duckdb"
    shutil.copy(ingested, path)
    return path


def _slice(tmp_path: Path, q_index=None, document_id: str | None = None) -> tuple[Path, Path]:
    """A copy of the NarrativeQA slice with one question's q_index or one document's id replaced;
    returns the folder and the file that holds the bad value."""
    folder = tmp_path / "nqa"
    shutil.copytree(SLICE, folder)
    qaps = folder / "nqa_test_slice_qaps.jsonl"
    if q_index is not None:
        rows = [json.loads(line) for line in qaps.read_text(encoding="utf-8").splitlines()]
        rows[2]["q_index"] = q_index
        qaps.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in rows), encoding="utf-8")
        return folder, qaps
    docs = folder / "documents.csv"
    docs.write_text(docs.read_text(encoding="utf-8").replace(TOM, document_id), encoding="utf-8")
    qaps.write_text(qaps.read_text(encoding="utf-8").replace(TOM, document_id), encoding="utf-8")
    return folder, docs


BAD_Q_INDEX = [1e30, "1e30", 10**10, -1, 1.5, "nan", "inf", float("inf"), "12345678901234567890123"]


@pytest.mark.parametrize("target", ["existing workspace", "new path"])
@pytest.mark.parametrize("value", BAD_Q_INDEX, ids=repr)
@pytest.mark.sampled(5)
def test_a_q_index_out_of_bounds_is_refused_and_leaves_no_workspace(ws, tmp_path, value, target):
    folder, qaps = _slice(tmp_path, q_index=value)
    path = ws if target == "existing workspace" else tmp_path / "fresh" / "ws.duckdb"
    assert_refused(f"q_index {value!r} ({target})", ["ingest-narrativeqa", folder, "--workspace", path],
                   workspace=path, must_name=(f"{qaps}:3", "q_index"))
    if target == "new path":
        assert not path.exists() and not path.parent.exists()


@pytest.mark.parametrize("target", ["existing workspace", "new path"])
def test_a_5000_character_document_id_is_refused(ws, tmp_path, target):
    folder, docs = _slice(tmp_path, document_id="d" * 5_000)
    path = ws if target == "existing workspace" else tmp_path / "fresh.duckdb"
    line = assert_refused(f"document_id 5,000 ({target})", ["ingest-narrativeqa", folder, "--workspace", path],
                          workspace=path, must_name=(f"{docs}:", "document_id", "5,000"))
    assert len(line) < 600 and not (target == "new path" and path.exists())


def test_a_refused_book_into_a_new_path_leaves_nothing(tmp_path):
    path = tmp_path / "a" / "b" / "ws.duckdb"
    assert_refused("ingest-book bad title, new path", ["ingest-book", STORIES[0], "--title", "x\u202ey",
                                                       "--workspace", path], workspace=path, must_name=("title",))
    assert not (tmp_path / "a").exists()
    ok = invoke("ingest-book", STORIES[0], "--workspace", path)
    assert ok.exit_code == 0 and "creating a new workspace" in ok.stderr and path.exists()


# ------------------------------------------------------------------------------ options of the command line

def _comparisons(tmp_path: Path) -> Path:
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"system_a": a, "system_b": b, "winner": "A"}) + "\n"
                            for a, b in [("x", "y"), ("y", "z"), ("z", "x")]))
    return path


def _ratings(tmp_path: Path) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"item_id": f"i{k}", "rater": r, "label": "yes"}) + "\n"
                            for k in range(3) for r in "ab"))
    return path


OPTION_PROBES = {
    "entities --top": (lambda ws, t: ["entities", "The Tale of Tom Kitten", "--workspace", ws, "--top"],
                       ["-3", "0", "1000000", str(10**30)]),
    "rank --bootstrap": (lambda ws, t: ["rank", "--input", _comparisons(t), "--bootstrap"],
                         ["-1", "1000000000", str(10**30)]),
    "rank --seed": (lambda ws, t: ["rank", "--input", _comparisons(t), "--bootstrap", "10", "--seed"],
                    ["-1", str(2**40)]),
    "rank --level": (lambda ws, t: ["rank", "--input", _comparisons(t), "--bootstrap", "10", "--level"],
                     ["0.1", "1.5", "1", "nan", "-inf"]),
    "agreement --bootstrap": (lambda ws, t: ["agreement", "--input", _ratings(t), "--rater-a", "a", "--rater-b", "b",
                                             "--bootstrap"], ["-5", "1000000000"]),
    "agreement --seed": (lambda ws, t: ["agreement", "--input", _ratings(t), "--rater-a", "a", "--rater-b", "b",
                                        "--seed"], ["-1", str(2**33)]),
    "accuracy --level": (lambda ws, t: ["accuracy", "--judge", "j", "--workspace", ws, "--level"], ["0", "2"]),
    "suspects --limit": (lambda ws, t: ["suspects", "--workspace", ws, "--limit"], ["0", "-2", str(10**30)]),
}


@pytest.mark.parametrize("option, value", [(o, v) for o, (_, values) in OPTION_PROBES.items() for v in values])
def test_a_number_option_out_of_range_is_refused_in_one_line(ws, tmp_path, option, value):
    args, _ = OPTION_PROBES[option]
    flag = option.split()[-1]
    assert_refused(f"{option} {value}", args(ws, tmp_path) + [value], workspace=ws, must_name=(flag,))


def test_the_bounds_let_ordinary_values_through(tmp_path):
    result = invoke("rank", "--input", _comparisons(tmp_path), "--bootstrap", "0", "--seed", str(2**32 - 1),
                    "--level", "0.999")
    assert result.exit_code == 0, result.output


# ------------------------------------------------------------------------------ audits

@pytest.fixture(scope="module")
def judged(tmp_path_factory, demo_workspace_template):
    path = tmp_path_factory.mktemp("judged") / "ws.duckdb"
    shutil.copy(demo_workspace_template, path)
    return path


@pytest.fixture
def demo(judged, tmp_path):
    path = tmp_path / "demo.duckdb"
    shutil.copy(judged, path)
    return path


SXS, YES_NO = "lexical-sxs-fc", "lexical-autoais-fc"


def _reviews(ws: Path, judge: str, n: int, probability, tmp_path: Path, name: str = "reviews.jsonl") -> Path:
    """``n`` reviews confirming the judge's first verdicts (one per item), with ``probability``."""
    with store.connect(ws) as con:
        verdicts = [v for v in results_store.list_judgments(con, judge=judge)
                    if v["status"] == "ok" and v["shown_order"] == "ab"]
    rows, seen = [], set()
    for v in verdicts:
        key = (v["question_id"], v["system_a"], v["system_b"])
        if key in seen:
            continue
        seen.add(key)
        rows.append({"judge": judge, "question_id": v["question_id"], "system_a": v["system_a"],
                     "system_b": v["system_b"] or "", "reference": v["reference"], "label": v["label"],
                     "annotator": "ann", "inclusion_probability": probability})
        if len(rows) == n:
            break
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("probability", [1e-320, 5e-324, 1e-7, 0, 0.0, -0.5, 1.5, "nan", "inf", "1e-320", "x"],
                         ids=repr)
def test_an_inclusion_probability_below_the_floor_is_refused(demo, tmp_path, probability):
    path = _reviews(demo, SXS, 2, probability, tmp_path)
    assert_refused(f"import-reviews probability {probability!r}", ["import-reviews", path, "--workspace", demo],
                   workspace=demo, must_name=(f"{path}:1", "inclusion probability"))


def test_the_floor_itself_is_accepted_and_ranks(demo, tmp_path):
    path = _reviews(demo, SXS, 3, 1e-6, tmp_path)
    assert invoke("import-reviews", path, "--workspace", demo).exit_code == 0
    result = invoke("rank", "--corrected", "--judge", SXS, "--workspace", demo, "--json")
    assert result.exit_code == 0, result.output
    assert "NaN" not in result.stdout and json.loads(result.stdout)["n_usable_audits"] == 3


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("judge", [SXS, YES_NO])
def test_few_audits_never_give_a_zero_width_corrected_interval(demo, tmp_path, judge, n):
    assert invoke("import-reviews", _reviews(demo, judge, n, 0.5, tmp_path), "--workspace", demo).exit_code == 0
    command = "rank" if judge == SXS else "accuracy"
    result = invoke(command, "--corrected", "--judge", judge, "--workspace", demo, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for s in report["systems"]:
        for low, high in ((s["ci_low"], s["ci_high"]), (s["judge_only_ci_low"], s["judge_only_ci_high"])):
            assert (low is None) == (high is None) and (low is None or high > low), s
        assert s["estimable"] == (s["ci_low"] is not None)
        assert s["estimable"] or s["note"]
    missing = [s["system"] for s in report["systems"] if not s["estimable"]]
    if missing:
        assert any(w.startswith("not estimable: ") and all(m in w for m in missing) for w in report["warnings"])
        text = invoke(command, "--corrected", "--judge", judge, "--workspace", demo)
        assert "not estimable" in text.stdout


def test_one_audit_of_a_side_by_side_judge_is_not_estimable(demo, tmp_path):
    """The case of the issue: before, every system read 1.0000 [1.0000, 1.0000]."""
    assert invoke("import-reviews", _reviews(demo, SXS, 1, 0.5, tmp_path), "--workspace", demo).exit_code == 0
    report = json.loads(invoke("rank", "--corrected", "--judge", SXS, "--workspace", demo, "--json").stdout)
    assert not any(s["estimable"] for s in report["systems"])


def test_the_same_reviews_file_imported_twice_adds_nothing_the_second_time(demo, tmp_path):
    path = _reviews(demo, SXS, 4, 0.25, tmp_path)
    first = invoke("import-reviews", path, "--workspace", demo, "--json")
    assert first.exit_code == 0 and json.loads(first.stdout)["added"]["reviews"] == 4
    before = snapshot(demo)
    second = invoke("import-reviews", path, "--workspace", demo, "--json")
    assert second.exit_code == 0, second.output
    summary = json.loads(second.stdout)
    assert summary["added"]["reviews"] == 0 and summary["skipped"]["reviews"] == 4
    assert snapshot(demo) == before
    report = json.loads(invoke("rank", "--corrected", "--judge", SXS, "--workspace", demo, "--json").stdout)
    assert report["n_usable_audits"] == 4
    other = _reviews(demo, SXS, 4, 0.5, tmp_path, "other.jsonl")   # another probability: another review
    assert json.loads(invoke("import-reviews", other, "--workspace", demo, "--json").stdout)["added"]["reviews"] == 4


# ------------------------------------------------------------------------------ configs

CONFIG = {
    "documents": ["The Tale of Tom Kitten"], "max_questions": 2, "sample": 5,
    "systems": [{"name": "nocontext", "model": "lsqa/extractive", "context": "none"}],
    "judges": [{"name": "sxs", "model": "lsqa/lexical-judge", "kind": "pairwise"}],
}


@pytest.mark.parametrize("command", ["run", "plan"])
def test_a_config_with_judges_and_no_systems_is_refused(ws, tmp_path, command):
    cfg = tmp_path / "study.toml"
    cfg.write_text(tomli_w.dumps({k: v for k, v in CONFIG.items() if k != "systems"}), encoding="utf-8")
    assert_refused(f"config without systems ({command})", [command, cfg, "--workspace", ws], workspace=ws,
                   must_name=(str(cfg), "systems"))


def test_a_title_two_books_share_is_refused_with_both_ids(tmp_path):
    ws = tmp_path / "ws.duckdb"
    for story in STORIES[:2]:
        assert invoke("ingest-book", story, "--title", "Twin Tales", "--workspace", ws).exit_code == 0
    with store.connect(ws) as con:
        ids = sorted(con.execute("SELECT id FROM documents").fetchall())
    assert len(ids) == 2
    cfg = tmp_path / "study.toml"
    cfg.write_text(tomli_w.dumps({**CONFIG, "documents": ["twin tales"], "questions": "generate"}), encoding="utf-8")
    for args in (["plan", cfg, "--workspace", ws], ["run", cfg, "--workspace", ws],
                 ["entities", "Twin Tales", "--workspace", ws]):
        line = assert_refused(f"ambiguous title ({args[0]})", args, workspace=ws, must_name=("twin tales",))
        assert all(doc_id in line for (doc_id,) in ids), line
    by_id = tmp_path / "by_id.toml"
    by_id.write_text(tomli_w.dumps({**CONFIG, "documents": [ids[0][0]], "questions": "generate"}), encoding="utf-8")
    assert invoke("plan", by_id, "--workspace", ws).exit_code == 0
