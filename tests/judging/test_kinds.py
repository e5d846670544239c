"""A judge kind is one record (issue 29, item 2): lsqa.judging.kinds.

- A kind added here (one record + one prompt file in a temporary folder, nothing else) goes through
  plan, run, audit, agreement and export on a real NarrativeQA slice.
- An unknown kind is a named error wherever a default used to answer.
- No module outside the record and the vocabulary decides by a kind's name.
- Migration 0012's stored family gives the view the same rows as 0005's CASE on the kind's name.
"""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

import pytest

from lsqa import audit, store, vocabulary
from lsqa.config.study import run_config_from_dict
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.errors import InputError
from lsqa.figures import analysis
from lsqa.judging import guidelines, kinds, tasks
from lsqa.llm.embedded import lexical_judge
from lsqa.study import pipeline
from lsqa.study.plan import plan
from tests.support.bad_input import invoke
from tests.support.migrations import workspace_before

ROOT = Path(__file__).resolve().parents[2]
TEST_DATA = Path(__file__).parents[1] / "data"

# The new kind's whole definition: its prompt file and its record.
PROMPT = """# id: declined
# version: 1
# implements: tests/judging/test_kinds.py, a kind added without touching lsqa: did the system decline to answer
# placeholders: question, answer
# output: yes-no
---
The question:

Question: {question}

Two answers to that question:

Answer 1: I don't know.
Answer 2: {answer}

Answer 1 declines to answer and Answer 2 is an answer a system gave. Decide whether Answer 2 declines too, in any words.

Respond with only yes or no: does Answer 2 decline to answer?
"""

DECLINED = kinds.JudgeKind(
    name="declined", family=vocabulary.BINARY, summary="yes/no: did the system decline to answer",
    labels=vocabulary.ABSOLUTE_LABELS, aliases=vocabulary.ABSOLUTE_ALIASES,
    prompts={kinds.ANY_ORIGIN: "declined"}, outputs=("yes-no",),
    build=tasks.yes_no_tasks(lambda question, answer: {"question": question["text"], "answer": answer}),
    guideline="**Yes means: the answer says it does not know.**", label_hint="use yes or no")

CONFIG = {"documents": ["The Tale of Tom Kitten"], "questions": "narrativeqa", "max_questions": 4, "seed": 0,
          "systems": [{"name": "ext-none", "model": "lsqa/extractive", "context": "none"},
                      {"name": "ext-full", "model": "lsqa/extractive", "context": "full"}],
          "judges": [{"name": "topic-judge", "model": "lsqa/lexical-judge", "kind": "declined", "context": "none"}]}


@pytest.fixture
def declined(tmp_path, monkeypatch):
    folder = tmp_path / "my_prompts"
    folder.mkdir()
    (folder / "declined.v1.txt").write_text(PROMPT, encoding="utf-8")
    monkeypatch.setenv("LSQA_PROMPTS_DIR", str(folder))
    kinds.register(DECLINED)
    yield DECLINED
    kinds.unregister(DECLINED.name)


def _expected(answer: str) -> str:
    """What lsqa/lexical-judge says to the prompt above: token F1 of Answer 2 against Answer 1."""
    return "yes" if lexical_judge.against_truth(answer, "I don't know.").value >= lexical_judge.F1_THRESHOLD else "no"


@pytest.mark.slow
def test_a_kind_added_in_a_test_goes_through_plan_run_audit_agreement_and_export(declined, workspace, tmp_path):
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    config = run_config_from_dict(CONFIG, source="declined study")

    # plan: one call per answer (2 systems x 4 questions), none made yet.
    planned = {s.stage: s for s in plan(workspace, config).stages}
    assert planned["judge:topic-judge"].calls == 8 and planned["judge:topic-judge"].cached == 0

    # run: eight verdicts of the new kind, its family stored, each label what the model says.
    summary = pipeline.run(workspace, config)
    assert not summary.stopped
    with store.connect(workspace) as con:
        rows = con.execute("""
            SELECT j.id, j.kind, j.family, j.label, j.status, j.prompt_id, q.text, a.text
            FROM judgments j JOIN questions q ON q.id = j.question_id
            JOIN answers a ON a.question_id = j.question_id AND a.system_name = j.system_a
            WHERE j.judge = 'topic-judge' ORDER BY j.question_id, j.system_a""").fetchall()
    assert len(rows) == 8
    assert {(r[1], r[2], r[4], r[5]) for r in rows} == {("declined", "binary", "ok", "declined")}
    labels = {r[0]: r[3] for r in rows}
    assert labels == {r[0]: _expected(r[7]) for r in rows}
    assert set(labels.values()) == {"yes", "no"}  # both labels occur: the check below can tell them apart
    assert pipeline.run(workspace, config).to_dict()["calls_made"] == 0  # decided verdicts are kept

    # audit: the verdicts are in the queue; a person confirms three and overrides one.
    queued = {r["id"] for r in audit.queue(workspace, page_size=100)["rows"]}
    assert set(labels) <= queued
    reviewed = sorted(labels)[:4]
    flipped = reviewed[0]
    for jid in reviewed:
        human = ({"yes": "no", "no": "yes"}[labels[jid]]) if jid == flipped else labels[jid]
        audit.review(workspace, "ann", jid, human)
    with pytest.raises(Exception, match="yes, no"):  # the record's labels: a side-by-side label is refused
        audit.review(workspace, "ann", flipped, "A")

    # agreement: 3 of the 4 reviewed items agree (each item is one verdict: one reference-free rating).
    result = analysis.agreement(workspace, "topic-judge", "human:ann", bootstrap=0)
    assert result["n"] == 4 and result["agreement"] == pytest.approx(3 / 4)
    out = invoke("agreement", "--workspace", workspace, "--rater-a", "topic-judge", "--rater-b", "human:ann",
                 "--bootstrap", "0", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["agreement"] == pytest.approx(3 / 4)
    # accuracy (Table 1 style) counts the new kind's yes labels per system.
    per_system = {r["system"]: (r["correct"], r["n"]) for r in analysis.accuracy(workspace, "topic-judge")}
    with store.connect(workspace) as con:
        by_system = con.execute("SELECT system_a, count(*) FILTER (WHERE label = 'yes'), count(*) FROM judgments"
                                " WHERE judge = 'topic-judge' GROUP BY system_a").fetchall()
    assert per_system == {s: (yes, n) for s, yes, n in by_system}

    # export: the verdicts file holds the eight rows with the new kind and their labels.
    folder = tmp_path / "export"
    out = invoke("export", "--workspace", workspace, "--out", folder)
    assert out.exit_code == 0, out.output
    verdicts_file = next(p for p in folder.iterdir() if p.name.startswith("verdicts"))
    with open(verdicts_file, newline="", encoding="utf-8") as f:
        exported = {r["id"]: r for r in csv.DictReader(f) if r["judge"] == "topic-judge"}
    assert {jid: r["label"] for jid, r in exported.items()} == labels
    assert {r["kind"] for r in exported.values()} == {"declined"}

    # its guideline is its record's.
    assert guidelines.for_kind(workspace, "declined")["text"] == DECLINED.guideline


def test_an_unknown_kind_is_a_named_error_where_a_default_used_to_answer(tmp_path):
    workspace = tmp_path / "ws.duckdb"  # not created yet: nothing may create it
    with pytest.raises(kinds.UnknownJudgeKind, match="unknown judge kind 'rubric'"):
        guidelines.default("rubric")  # it showed the AutoAIS text
    with pytest.raises(kinds.UnknownJudgeKind):
        guidelines.for_kind(workspace, "rubric")
    with pytest.raises(kinds.UnknownJudgeKind):
        guidelines.save(workspace, "rubric", "text", "ann")
    with pytest.raises(ValueError, match="unknown judge kind"):
        vocabulary.family("rubric")  # it said binary
    # A RunConfig built in code (not read from a file) with an unknown kind: refused before any work
    # (the pipeline built side-by-side tasks for any kind it did not know).
    config = run_config_from_dict({"documents": ["x"], "systems": [
        {"name": "s", "model": "lsqa/extractive", "context": "none"}], "judges": [
        {"name": "j", "model": "lsqa/lexical-judge", "kind": "pairwise"}]}, source="code")
    config = config.model_copy(update={"judges": [config.judges[0].model_copy(update={"kind": "rubric"})]})
    with pytest.raises(InputError, match=r"judges\[0\]\.kind: unknown judge kind 'rubric'"):
        pipeline.run(workspace, config)
    with pytest.raises(InputError, match="unknown judge kind 'rubric'"):
        plan(workspace, config)
    assert not workspace.exists()  # nothing was written


def test_registering_refuses_a_misfit_and_config_files_see_registered_kinds(declined):
    assert "declined" in kinds.names() and "declined" in vocabulary.judge_kind_names()
    config = run_config_from_dict(CONFIG, source="declined study")
    assert config.judges[0].kind == "declined"
    with pytest.raises(kinds.KindMisfit, match="registered already"):
        kinds.register(kinds.JudgeKind(**{**DECLINED.__dict__, "summary": "another record"}))
    with pytest.raises(kinds.KindMisfit, match="family"):
        kinds.register(kinds.JudgeKind(**{**DECLINED.__dict__, "name": "odd", "family": "triple"}))
    with pytest.raises(ValueError, match="built-in"):
        kinds.unregister("pairwise")


def test_the_records_say_what_the_old_branches_decided():
    """What pipeline/plan/imports/guidelines used to decide by the name, now asked of the record."""
    nqa, gen = {"origin": "narrativeqa"}, {"origin": "generated"}
    assert [kinds.get(k).prompt_id(nqa) for k in ("absolute", "pairwise", "groundtruth", "groundtruth-pairwise")] \
        == ["nqa_autoais", "nqa_side_by_side", "groundtruth_yes_no", "groundtruth_side_by_side"]
    assert [kinds.get(k).prompt_id(gen) for k in ("absolute", "pairwise", "groundtruth", "groundtruth-pairwise")] \
        == ["autoais", "side_by_side", "groundtruth_yes_no", "groundtruth_side_by_side"]
    assert [k.name for k in kinds.all_kinds() if k.pairwise] == ["pairwise", "groundtruth-pairwise"]
    assert [k.name for k in kinds.all_kinds() if not k.needs_call] == ["similarity"]
    assert kinds.get("similarity").normalise_label("0.83") == "0.83" and kinds.get("groundtruth").scored is False
    assert kinds.get("pairwise").normalise_label(" A is better ") == "A"
    for k in kinds.all_kinds():  # every alias reads as its label; a score only for a scored kind
        for written, label in k.aliases.items():  # a scored kind reads "1" and "0" as scores
            assert k.normalise_label(written.upper()) == (written if k.scored and written in ("0", "1") else label)
        if k.scored:
            assert k.normalise_label("0.5") == "0.5"
        else:
            with pytest.raises(ValueError, match=f"not a {k.name} label"):
                k.normalise_label("0.5")
    assert "supported by the book" in guidelines.default("absolute")


_ALLOWED = {"lsqa/vocabulary.py", "lsqa/judging/kinds.py"}


def _decisions_by_name(path: Path) -> list[str]:
    names = set(vocabulary.BUILTIN_JUDGE_KINDS)
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                values = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                if any(isinstance(v, ast.Constant) and v.value in names for v in values):
                    found.append(f"{path}:{node.lineno}: compares with a kind's name")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "kind" in node.value:
            if any(f"'{n}'" in node.value for n in names):
                found.append(f"{path}:{node.lineno}: SQL names a kind")
        elif isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                                            and node.value.id == "vocabulary"):
            ident = node.id if isinstance(node, ast.Name) else node.attr
            if ident in ("is_pairwise", "PAIRWISE_KINDS", "BINARY_KINDS", "JUDGE_KINDS", "normalise_label"):
                found.append(f"{path}:{node.lineno}: asks {ident}")
    return found


def test_no_module_outside_the_record_and_the_vocabulary_decides_by_a_kinds_name(tmp_path):
    files = sorted([*(ROOT / "lsqa").rglob("*.py"), *(ROOT / "pages").rglob("*.py"), ROOT / "app.py"])
    found = [f for p in files if str(p.relative_to(ROOT)) not in _ALLOWED
             for f in _decisions_by_name(p)]
    assert found == []
    # The check finds what it looks for (the code before this change had these).
    old = tmp_path / "old_branch.py"
    old.write_text('if judge.kind == "similarity":\n    pass\nx = kind in PAIRWISE_KINDS\n'
                   's = "WHERE kind = \'groundtruth\'"\n')
    assert len(_decisions_by_name(old)) == 3


def test_migration_0012_keeps_the_views_rows_of_verdicts_stored_before_it(tmp_path):
    """A workspace at 0011 with a verdict of every built-in kind: after 0012 backfills the family,
    verdict_items (now reading it) has exactly the rows 0005's CASE on the kind's name gave."""


    from lsqa.store import db
    from lsqa.store.verdict_ids import judgment_id

    _, con = workspace_before(tmp_path, "0012", "old.duckdb")
    for kind in vocabulary.BUILTIN_JUDGE_KINDS:
        for label, b in (("A", "z"), ("B", "a"), ("yes", ""), ("tie", "z")):
            con.execute("INSERT INTO judgments (id, judge, kind, question_id, system_a, system_b, label, status)"
                        " VALUES (?, 'j', ?, 'q', 'm', ?, ?, 'ok')",
                        [judgment_id("j", kind, "q", "m", b + label), kind, b + label if b else "", label])
    view = "SELECT * FROM verdict_items ORDER BY id"
    old = con.execute(view).fetchall()
    assert db.migrate(con)[0] == "0012_verdict_family.sql"   # and the migrations after it
    assert con.execute(view).fetchall() == old
    families = dict(con.execute("SELECT kind, any_value(family) FROM judgments GROUP BY kind").fetchall())
    assert families == {k.name: k.family for k in kinds.all_kinds()}
    con.close()
