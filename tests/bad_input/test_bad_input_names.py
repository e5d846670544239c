"""Issue 33, "one name rule everywhere": systems, judges, raters, annotators, document ids and titles
pass the same check (``lsqa.text.names``) wherever they come in: a study config, import-answers,
import-judgments, import-reviews, the Audit page's actions, ingest-narrativeqa and ingest-book. Each
probe is one bad name in an otherwise valid input; it must give exit code 2 (or an ``LsqaError``)
with one line naming the input, the place and what to do, every table unchanged. Look-alike names
(Unicode confusables) are accepted with a warning naming both: on stderr and in the summary's notes."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
import tomli_w

from lsqa import audit
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.errors import LsqaError
from lsqa.study.imports import import_answers, import_judgments
from lsqa.text.names import lookalikes, name_problem, skeleton
from tests.conftest import TEST_DATA
from tests.support.bad_input import assert_library_refuses, assert_refused, invoke, snapshot

SLICE = TEST_DATA / "narrativeqa_slice"
TOM = "2c5f448df18172babaac38806e1fb699a8baf65b"
Q0, Q1 = f"nqa:{TOM}:0", f"nqa:{TOM}:1"

# One bad name per thing the rule refuses (module docstring of lsqa.text.names).
BAD_NAMES = {
    "terminal escape": "gpt\x1b[31mred\x1b[0m",
    "newline": "judge\nrm -rf",
    "tab": "a\tb",
    "carriage return": "a\rb",
    "DEL": "a\x7fb",
    "C1 control": "a\x85b",
    "right-to-left override": "gpt\u202eo4",
    "isolate": "a\u2066b\u2069",
    "left-to-right mark": "a\u200eb",
    "zero-width space": "gpt\u200b4o",
    "zero-width non-joiner": "a\u200cb",
    "zero-width joiner": "a\u200db",
    "word joiner": "a\u2060b",
    "byte order mark": "\ufeffgpt4o",
    "line separator": "a\u2028b",
    "hangul filler": "a\u3164b",
    "variation selector": "a\ufe0fb",
    "private use": "a\ue000b",
    "201 characters": "x" * 201,
    "10,000 characters": "y" * 10_000,
}
# The probes that run in the fast lane; the full product runs in the full suite.
FAST = {"terminal escape", "right-to-left override", "zero-width space", "10,000 characters"}


def _cases(places):
    return [pytest.param(place, name, marks=() if name in FAST else pytest.mark.slow, id=f"{place}-{name}")
            for place in places for name in BAD_NAMES]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """The NarrativeQA slice, two imported systems and one imported side-by-side rater."""
    path = tmp_path_factory.mktemp("names") / "ws.duckdb"
    ingest_narrativeqa(path, SLICE)
    import_answers(path, _jsonl(path.parent / "a.jsonl", [
        {"question_id": Q0, "system": "gpt4o", "answer": "a kitten"}, {"question_id": Q0, "system": "s2", "answer": "b"}]))
    import_judgments(path, _jsonl(path.parent / "j.jsonl", [
        {"question_id": Q0, "rater": "r", "kind": "pairwise", "system_a": "gpt4o", "system_b": "s2", "label": "A"}]))
    return path


@pytest.fixture
def ws(ingested, tmp_path):
    path = tmp_path / "ws.duckdb"
    shutil.copy(ingested, path)
    return path


# ------------------------------------------------------------------------------ the rule itself

def test_the_rule_refuses_each_probe_and_accepts_real_names():
    for label, value in BAD_NAMES.items():
        assert name_problem(value), label
    for good in ["gpt-4o-mini", "Les Misérables", "Мастер и Маргарита", "紅樓夢", "O'Brien & Co. (v2)", "a b",
                 "lsqa/extractive", "x" * 200]:
        assert name_problem(good) == "", good


def test_the_real_narrativeqa_titles_and_ids_pass():
    with open(SLICE / "documents.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            assert name_problem(row["document_id"]) == name_problem(row["wiki_title"]) == ""


def test_look_alikes_are_found_across_scripts_but_ascii_names_are_left_alone():
    assert lookalikes(["gрt4o"], ["gpt4o"]) == [("gрt4o", "gpt4o")]          # Cyrillic р
    assert lookalikes(["gpt4ο"], ["gpt4o"]) == [("gpt4ο", "gpt4o")]          # Greek ο
    assert lookalikes(["ｇpt4o"], ["gpt4o"]) == [("ｇpt4o", "gpt4o")]        # fullwidth ｇ
    assert lookalikes(["gрt4o", "gpt4o"]) == [("gpt4o", "gрt4o")]           # within one list
    assert lookalikes(["judge1", "judgel", "gpt4o", "GPT4O", "gpt40"]) == []  # ASCII look-alikes are chosen names
    assert lookalikes(["gpt4o"], ["gpt4o"]) == []                            # the same name is no look-alike
    assert skeleton("gрt4o") == skeleton("gpt4o") != skeleton("gpt4a")


# ------------------------------------------------------------------------------ study configs

CONFIG = {
    "documents": ["The Tale of Tom Kitten"], "max_questions": 2, "sample": 5,
    "systems": [{"name": "nocontext", "model": "lsqa/extractive", "context": "none"},
                {"name": "rag", "model": "lsqa/extractive", "context": "retrieval:400"}],
    "judges": [{"name": "sxs", "model": "lsqa/lexical-judge", "kind": "pairwise"}],
}
CONFIG_PLACES = {"systems[1].name": ("systems", 1, "name"), "judges[0].name": ("judges", 0, "name"),
                 "documents": ("documents", 0)}


@pytest.mark.parametrize("place, name", _cases(CONFIG_PLACES))
def test_a_bad_name_in_a_study_config_is_refused(ws, tmp_path, place, name):
    data = json.loads(json.dumps(CONFIG))
    *parents, last = CONFIG_PLACES[place]
    target = data
    for key in parents:
        target = target[key]
    target[last] = BAD_NAMES[name]
    cfg = tmp_path / "study.toml"
    cfg.write_text(tomli_w.dumps(data), encoding="utf-8")
    assert_refused(f"config {place} {name}", ["run", cfg, "--workspace", ws], workspace=ws,
                   must_name=(str(cfg), place))


# ------------------------------------------------------------------------------ imports

IMPORT_PLACES = {
    "import-answers system": ("import-answers", {"question_id": Q1, "system": "s3", "answer": "x"}, "system"),
    "import-answers question_id": ("import-answers", {"question_id": Q1, "system": "s3", "answer": "x"}, "question_id"),
    "import-judgments rater": ("import-judgments", {"question_id": Q1, "rater": "r2", "kind": "pairwise",
                                                    "system_a": "gpt4o", "system_b": "s2", "label": "B"}, "rater"),
    "import-judgments system_a": ("import-judgments", {"question_id": Q1, "rater": "r2", "kind": "pairwise",
                                                       "system_a": "gpt4o", "system_b": "s2", "label": "B"}, "system_a"),
    "import-judgments system_b": ("import-judgments", {"question_id": Q1, "rater": "r2", "kind": "pairwise",
                                                       "system_a": "gpt4o", "system_b": "s2", "label": "B"}, "system_b"),
    "import-reviews annotator": ("import-reviews", {"judge": "r", "question_id": Q0, "system_a": "gpt4o",
                                                    "system_b": "s2", "label": "A", "annotator": "ann"}, "annotator"),
}


@pytest.mark.parametrize("place, name", _cases(IMPORT_PLACES))
@pytest.mark.sampled(5)
def test_a_bad_name_in_an_import_is_refused(ws, tmp_path, place, name):
    command, good, column = IMPORT_PLACES[place]
    bad = {**good, column: BAD_NAMES[name]}
    if command == "import-reviews":
        bad["question_id"] = Q0  # reviews name an existing verdict; only the annotator is bad
    path = _jsonl(tmp_path / "rows.jsonl", [good, bad])
    assert_refused(f"{place} {name}", [command, path, "--workspace", ws], workspace=ws,
                   must_name=(f"{path}:2", column))


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST else pytest.mark.slow) for n in BAD_NAMES])
def test_the_audit_page_refuses_a_bad_annotator(ws, name):
    from lsqa import store
    from lsqa.store import results

    with store.connect(ws) as con:
        verdict = results.list_judgments(con, judge="r")[0]
    message = assert_library_refuses(f"audit.review annotator {name}",
                                     lambda: audit.review(ws, BAD_NAMES[name], verdict["id"], "A"), LsqaError,
                                     workspace=ws, must_name=("annotator",))
    assert "\x1b" not in message and "\u202e" not in message  # the message cannot rewrite the screen


# ------------------------------------------------------------------------------ ingest

def _slice_with(tmp_path: Path, column: str, value: str) -> Path:
    folder = tmp_path / "nqa"
    shutil.copytree(SLICE, folder)
    with open(folder / "documents.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    tom = next(r for r in rows if r["document_id"] == TOM)
    old = tom[column]
    tom[column] = value
    with open(folder / "documents.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    if column == "document_id":  # its questions must follow it, or they are refused for another reason
        qaps = folder / "nqa_test_slice_qaps.jsonl"
        qaps.write_text(qaps.read_text(encoding="utf-8").replace(old, json.dumps(value)[1:-1]), encoding="utf-8")
    return folder


# A value a CSV cell cannot carry through csv's own line handling is left to the JSON probes.
CSV_NAMES = [n for n in BAD_NAMES if n not in ("newline", "carriage return")]


@pytest.mark.parametrize("column", ["document_id", "wiki_title"])
@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST else pytest.mark.slow) for n in CSV_NAMES])
def test_a_bad_document_id_or_title_is_refused(ws, tmp_path, column, name):
    folder = _slice_with(tmp_path, column, BAD_NAMES[name])
    assert_refused(f"ingest-narrativeqa {column} {name}", ["ingest-narrativeqa", folder, "--workspace", ws],
                   workspace=ws, must_name=(f"{folder / 'documents.csv'}:", column))


@pytest.mark.parametrize("name", ["terminal escape", "right-to-left override", "10,000 characters"])
def test_a_bad_book_title_is_refused(ws, name):
    story = SLICE / "stories" / f"{TOM}.txt"
    assert_refused(f"ingest-book --title {name}", ["ingest-book", story, "--title", BAD_NAMES[name], "--workspace", ws],
                   workspace=ws, must_name=(str(story), "title"))


# ------------------------------------------------------------------------------ look-alikes: a warning

def test_a_look_alike_system_is_imported_with_a_warning_naming_both(ws, tmp_path):
    path = _jsonl(tmp_path / "a.jsonl", [{"question_id": Q1, "system": "gрt4o", "answer": "Tom"}])
    result = invoke("import-answers", path, "--workspace", ws, "--json")
    assert result.exit_code == 0, result.output
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "'gрt4o'" in warning[0] and "'gpt4o'" in warning[0] and "U+0440" in warning[0]
    assert warning[0] in json.loads(result.stdout)["notes"]
    again = _jsonl(tmp_path / "b.jsonl", [{"question_id": Q1, "system": "s9", "answer": "Tom"}])
    plain = invoke("import-answers", again, "--workspace", ws)
    assert plain.exit_code == 0 and "warning" not in plain.stderr


def test_look_alike_raters_and_annotators_get_the_warning_too(ws, tmp_path):
    verdict = _jsonl(tmp_path / "j.jsonl", [{"question_id": Q1, "rater": "г", "kind": "pairwise", "system_a": "gpt4o",
                                             "system_b": "s2", "label": "A"}])   # Cyrillic г: looks like r
    result = invoke("import-judgments", verdict, "--workspace", ws)
    assert result.exit_code == 0, result.output
    assert "warning: rater 'г' looks like 'r'" in result.stderr
    reviews = [{"judge": "r", "question_id": Q0, "system_a": "gpt4o", "system_b": "s2", "label": "A", "annotator": a}
               for a in ("anna", "аnna")]                                        # Cyrillic а
    result = invoke("import-reviews", _jsonl(tmp_path / "r.jsonl", reviews), "--workspace", ws)
    assert result.exit_code == 0, result.output
    assert "warning: annotator 'аnna' looks like 'anna'" in result.stderr


def test_a_config_with_look_alike_names_is_planned_with_a_warning(ws, tmp_path):
    data = json.loads(json.dumps(CONFIG))
    data["systems"][1]["name"] = "nocоntext"            # Cyrillic о beside "nocontext"
    cfg = tmp_path / "study.toml"
    cfg.write_text(tomli_w.dumps(data), encoding="utf-8")
    before = snapshot(ws)
    result = invoke("plan", cfg, "--workspace", ws)
    assert result.exit_code == 0, result.output
    assert "warning: system 'nocоntext' looks like 'nocontext'" in result.stderr
    assert snapshot(ws) == before
    stored = tmp_path / "stored.toml"                    # against a name the workspace holds
    stored.write_text(tomli_w.dumps({**CONFIG, "systems": [{"name": "gрt4o", "model": "imported"}]}), encoding="utf-8")
    result = invoke("plan", stored, "--workspace", ws)
    assert "warning: system 'gрt4o' looks like 'gpt4o'" in result.stderr, result.output
