"""A run config may not give a system or judge name that has results a different definition."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lsqa import store
from lsqa.cli import app
from lsqa.config.definitions import DefinitionChanged, NameClash
from lsqa.config.study import run_config_from_dict
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.errors import InputError
from lsqa.study import pipeline
from tests.conftest import TEST_DATA

BASE = {
    "documents": ["The Tale of Tom Kitten"], "questions": "narrativeqa", "max_questions": 4,
    "systems": [
        {"name": "rag", "model": "lsqa/extractive", "context": "retrieval:1000", "params": {"max_tokens": 40}},
        {"name": "closed-book", "model": "lsqa/extractive", "context": "none"},
    ],
    "judges": [{"name": "gt", "model": "lsqa/lexical-judge", "kind": "groundtruth", "context": "none"}],
}


def config(**changes):
    raw = {**BASE, **changes}
    return run_config_from_dict(raw)


def with_system(name, **fields):
    systems = [dict(s, **fields) if s["name"] == name else s for s in BASE["systems"]]
    return config(systems=systems)


def counts(workspace):
    with store.connect(workspace) as con:
        return (con.execute("SELECT count(*) FROM answers").fetchone()[0],
                con.execute("SELECT count(*) FROM judgments").fetchone()[0])


@pytest.fixture
def studied(workspace):
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    pipeline.run(workspace, config())
    return workspace


@pytest.mark.slow
def test_changed_system_is_refused_before_any_work_naming_the_fields(studied):
    before = counts(studied)
    changed = with_system("rag", context="retrieval:2000", params={"max_tokens": 80})
    with pytest.raises(DefinitionChanged) as info:
        pipeline.run(studied, changed)
    message = str(info.value)
    assert "system 'rag'" in message and "closed-book" not in message
    assert "context: \"retrieval:1000\" → \"retrieval:2000\"" in message
    assert "params.max_tokens: 40 → 80" in message and "new name" in message
    assert counts(studied) == before
    with store.connect(studied) as con:  # the refused run left no stage row behind
        assert con.execute("SELECT count(*) FROM runs WHERE status = 'running'").fetchone()[0] == 0


def test_changed_judge_is_refused(studied):
    changed = config(judges=[{"name": "gt", "model": "lsqa/lexical-judge", "kind": "groundtruth",
                              "context": "none", "reference": "1"}])
    with pytest.raises(DefinitionChanged, match=r"judge 'gt'.*reference: \"both\" → \"1\""):
        pipeline.run(studied, changed)


@pytest.mark.slow
def test_same_definition_reruns_and_transport_settings_do_not_count(studied):
    moved = with_system("rag", params={"max_tokens": 40, "api_base": "http://127.0.0.1:9/v1", "timeout": 5})
    summary = pipeline.run(studied, moved).to_dict()
    assert summary["calls_made"] == 0


@pytest.mark.slow
def test_a_new_name_for_the_changed_system_runs_and_keeps_the_old_results(studied):
    answers_before, _ = counts(studied)
    renamed = config(systems=BASE["systems"] + [
        {"name": "rag-v2", "model": "lsqa/extractive", "context": "retrieval:2000", "params": {"max_tokens": 80}}])
    pipeline.run(studied, renamed)
    with store.connect(studied) as con:
        per_system = dict(con.execute("SELECT system_name, count(*) FROM answers GROUP BY 1").fetchall())
        definitions = dict(con.execute("SELECT name, definition FROM systems").fetchall())
    assert per_system == {"rag": 4, "closed-book": 4, "rag-v2": 4} and answers_before == 8
    assert '"retrieval:2000"' in definitions["rag-v2"] and '"retrieval:1000"' in definitions["rag"]


def test_the_command_line_reports_the_refusal_without_a_traceback(studied, tmp_path):
    path = tmp_path / "changed.toml"
    path.write_text(
        'documents = ["The Tale of Tom Kitten"]\nquestions = "narrativeqa"\nmax_questions = 4\n'
        '[[systems]]\nname = "closed-book"\nmodel = "lsqa/extractive"\ncontext = "full"\n'
    )
    result = CliRunner().invoke(app, ["run", str(path), "--workspace", str(studied)])
    assert result.exit_code != 0
    assert "system 'closed-book'" in result.output and 'context: "none" → "full"' in result.output
    assert "Traceback" not in result.output


def test_a_run_config_may_not_take_over_an_imported_system(workspace, tmp_path):
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    from lsqa.study.imports import import_answers

    with store.connect(workspace) as con:
        qid = con.execute("SELECT q.id FROM questions q JOIN documents d ON d.id = q.document_id"
                          " WHERE d.title = 'The Tale of Tom Kitten' ORDER BY q.id LIMIT 1").fetchone()[0]
    path = tmp_path / "answers.csv"
    path.write_text(f"question_id,system,answer\n{qid},closed-book,Tom Kitten\n")
    import_answers(workspace, path)
    with pytest.raises(NameClash, match=r"system 'closed-book' has answers imported with `lsqa import-answers`"):
        pipeline.run(workspace, config())
    pipeline.run(workspace, config(systems=[BASE["systems"][0]]))  # the other name runs


@pytest.mark.slow
def test_a_system_recorded_before_definitions_keeps_its_model_and_context(studied):
    with store.write(studied) as con:  # as a workspace from before migration 0004 would have it
        con.execute("UPDATE systems SET definition = '' WHERE name = 'rag'")
    pipeline.run(studied, config())  # same model and context: adopted, definition recorded
    with store.connect(studied) as con:
        assert con.execute("SELECT definition FROM systems WHERE name = 'rag'").fetchone()[0] != ""
    with store.write(studied) as con:
        con.execute("UPDATE systems SET definition = '' WHERE name = 'rag'")
    with pytest.raises(DefinitionChanged, match=r"context: \"retrieval:1000\" → \"full\""):
        pipeline.run(studied, with_system("rag", context="full"))


def _counts(ws):
    with store.connect(ws) as con:
        return (con.execute("SELECT count(*) FROM answers").fetchone()[0],
                con.execute("SELECT count(*) FROM judgments").fetchone()[0])


@pytest.mark.slow
def test_a_run_that_failed_before_any_result_does_not_pin_the_names(workspace):
    """A config with a typo (here: the document) fails before any answer or verdict exists; the
    user fixes it and also adjusts a system and a judge. Nothing has results under those names, so
    the fixed run must go ahead (before: refused as 'already has results made with a different
    definition')."""
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    with pytest.raises(InputError):
        pipeline.run(workspace, run_config_from_dict({**BASE, "documents": ["The Tale of Tom Kiten"]}))
    assert _counts(workspace) == (0, 0)  # no results under any name
    fixed = run_config_from_dict({
        **BASE,
        "systems": [{"name": "rag", "model": "lsqa/extractive", "context": "retrieval:2000"}],
        "judges": [{"name": "gt", "model": "lsqa/lexical-judge", "kind": "groundtruth", "context": "none",
                    "reference": "1"}],
    })
    pipeline.run(workspace, fixed)
    assert _counts(workspace)[0] == 4


@pytest.mark.slow
def test_a_judge_with_verdicts_from_before_definitions_is_not_silently_redefined(workspace):
    """Judges with verdicts from before migration 0004 have no row in `judges`; before, any
    redefinition was accepted and new verdicts mixed with the old ones under one name. Now the
    kind of the stored verdicts is compared."""
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    pipeline.run(workspace, run_config_from_dict(BASE))
    with store.write(workspace) as con:  # as a workspace from before migration 0004 would have it
        con.execute("DELETE FROM judges")
    changed = run_config_from_dict({**BASE, "judges": [
        {"name": "gt", "model": "lsqa/lexical-judge", "kind": "absolute", "context": "none"}]})
    with pytest.raises(DefinitionChanged):
        pipeline.run(workspace, changed)
