"""Issue 33, the rest of the list, part 1: input the parsers let through or choke on. Deeply nested
JSON in every JSON reader, nested TOML in study configs and the settings file (RecursionError
before), a key given twice in one JSON object (the last silently won), and NaN or Infinity in a
study config's ``params`` (stored as invalid JSON and reported as an HTTP 500 after the retries).
Each probe must give exit code 2 and one line naming the file (and line) and what to do, with every
table unchanged."""

from __future__ import annotations

import json
import shutil

import pytest
import tomli_w

from lsqa.config.schema import MAX_NESTING
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.study.imports import import_answers, import_judgments
from tests.conftest import TEST_DATA
from tests.support.bad_input import assert_refused

SLICE = TEST_DATA / "narrativeqa_slice"
TOM = "2c5f448df18172babaac38806e1fb699a8baf65b"
Q0, Q1 = f"nqa:{TOM}:0", f"nqa:{TOM}:1"


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    path = tmp_path_factory.mktemp("depth") / "ws.duckdb"
    ingest_narrativeqa(path, SLICE)
    rows = [{"question_id": Q0, "system": "s1", "answer": "a kitten"}, {"question_id": Q0, "system": "s2", "answer": "b"}]
    (path.parent / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_answers(path, path.parent / "a.jsonl")
    (path.parent / "j.jsonl").write_text(json.dumps({"question_id": Q0, "rater": "r", "kind": "pairwise",
                                                     "system_a": "s1", "system_b": "s2", "label": "A"}) + "\n")
    import_judgments(path, path.parent / "j.jsonl")
    return path


@pytest.fixture
def ws(ingested, tmp_path):
    path = tmp_path / "ws.duckdb"
    shutil.copy(ingested, path)
    return path


# Every command that reads a JSON table: its arguments, a good row, and whether it needs the workspace.
READERS = {
    "import-answers": (lambda f, ws: ["import-answers", f, "--workspace", ws],
                       {"question_id": Q1, "system": "s3", "answer": "x"}),
    "import-judgments": (lambda f, ws: ["import-judgments", f, "--workspace", ws],
                         {"question_id": Q1, "rater": "r2", "kind": "pairwise", "system_a": "s1", "system_b": "s2",
                          "label": "B"}),
    "import-reviews": (lambda f, ws: ["import-reviews", f, "--workspace", ws],
                       {"judge": "r", "question_id": Q0, "system_a": "s1", "system_b": "s2", "label": "A",
                        "annotator": "ann", "inclusion_probability": 0.5}),
    "rank --input": (lambda f, ws: ["rank", "--input", f, "--bootstrap", "0"],
                     {"system_a": "x", "system_b": "y", "winner": "A"}),
    "agreement --input": (lambda f, ws: ["agreement", "--input", f, "--rater-a", "a", "--rater-b", "b"],
                          {"item_id": "i1", "rater": "a", "label": "yes"}),
}


def _deep(depth: int):
    value: object = "x"
    for _ in range(depth - 1):   # the row object is level 1
        value = [value]
    return value


def _text(row: dict) -> str:
    return json.dumps(row)


BAD_ROWS = {
    # one level past the limit, and far past Python's recursion limit (a RecursionError before)
    "nested just past the limit": lambda good: _text({**good, "extra": _deep(MAX_NESTING + 1)}),
    "nested 100,000 deep": lambda good: _text(good)[:-1] + ', "extra": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "nested objects 5,000 deep": lambda good: _text(good)[:-1] + ', "extra": ' + '{"a": ' * 5_000 + "1" + "}" * 5_000 + "}",
    "a key twice": lambda good: _text(good)[:-1] + f', {json.dumps(next(iter(good)))}: "other"}}',
    "a key twice in other case": lambda good: _text(good)[:-1] + f', {json.dumps(next(iter(good)).upper())}: "other"}}',
}


@pytest.mark.parametrize("layout", ["jsonl", "json array"])
@pytest.mark.parametrize("bad", list(BAD_ROWS))
@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.sampled(10)
def test_a_json_reader_refuses_deep_nesting_and_repeated_keys(ws, tmp_path, reader, bad, layout):
    args, good = READERS[reader]
    lines = [_text(good), BAD_ROWS[bad](good)]
    if layout == "jsonl":
        path = tmp_path / "rows.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        must = (f"{path}:2",)
    else:
        path = tmp_path / "rows.json"
        path.write_text("[" + ",\n".join(lines) + "]", encoding="utf-8")
        must = (str(path),)
    line = assert_refused(f"{reader} {layout} {bad}", args(path, ws), workspace=ws,
                          must_name=must + (("twice",) if "twice" in bad else ("nested",)))
    assert len(line) < 400


def test_narrativeqa_questions_with_a_repeated_key_are_refused(ws, tmp_path):
    folder = tmp_path / "nqa"
    shutil.copytree(SLICE, folder)
    qaps = folder / "nqa_test_slice_qaps.jsonl"
    lines = qaps.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3][:-1] + ', "question": "a second question"}'
    qaps.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert_refused("ingest-narrativeqa repeated key", ["ingest-narrativeqa", folder, "--workspace", ws], workspace=ws,
                   must_name=(f"{qaps}:4", "question"))


def test_an_ordinary_nested_extra_column_is_still_accepted(ws, tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"question_id": Q1, "system": "s3", "answer": "x",
                                "meta": {"run": {"id": [1, 2, {"k": "v"}]}}}) + "\n"
                    + json.dumps({"question_id": Q1, "system": "s4", "answer": "x", "at the limit": _deep(MAX_NESTING)})
                    + "\n")
    from tests.support.bad_input import invoke

    result = invoke("import-answers", path, "--workspace", ws)
    assert result.exit_code == 0, result.output


# ------------------------------------------------------------------------------ TOML

CONFIG = {
    "documents": ["The Tale of Tom Kitten"], "max_questions": 2, "sample": 5,
    "systems": [{"name": "nocontext", "model": "lsqa/extractive", "context": "none"},
                {"name": "rag", "model": "lsqa/extractive", "context": "retrieval:400"}],
    "judges": [{"name": "sxs", "model": "lsqa/lexical-judge", "kind": "pairwise"}],
}


def _config_text(params: dict[tuple, str]) -> str:
    """CONFIG as TOML with ``params = { ... }`` written by hand into the tables named by
    ``(table, index)`` (``("generation", None)``): TOML's nan and inf, which tomli_w would not write here."""
    out = ['documents = ["The Tale of Tom Kitten"]', "max_questions = 2", "sample = 5", ""]
    for table in ("systems", "judges"):
        for i, entry in enumerate(CONFIG[table]):
            out.append(f"[[{table}]]")
            out.extend(f"{k} = {json.dumps(v)}" for k, v in entry.items())
            if (table, i) in params:
                out.append(f"params = {{ {params[table, i]} }}")
            out.append("")
    if ("generation", None) in params:
        out += ["[generation]", f"params = {{ {params['generation', None]} }}", ""]
    return "\n".join(out)


def test_the_hand_written_config_is_the_config():
    import tomllib

    assert tomllib.loads(_config_text({})) == CONFIG


DEEP_TOML = {
    "array 3,000 deep": "x = " + "[" * 3000 + "1" + "]" * 3000 + "\n",
    "inline tables 3,000 deep": "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
    "array just past the limit": "x = " + "[" * MAX_NESTING + "1" + "]" * MAX_NESTING + "\n",
}


@pytest.mark.parametrize("name", list(DEEP_TOML))
def test_a_deeply_nested_study_config_is_refused(ws, tmp_path, name):
    cfg = tmp_path / "study.toml"
    cfg.write_text(DEEP_TOML[name] + tomli_w.dumps(CONFIG), encoding="utf-8")
    for command in ("run", "plan"):
        assert_refused(f"config {name} ({command})", [command, cfg, "--workspace", ws], workspace=ws,
                       must_name=(str(cfg), "nested"))


def test_deeply_nested_params_are_refused(ws, tmp_path):
    cfg = tmp_path / "study.toml"
    cfg.write_text(_config_text({("systems", 0): "extra_body = " + "[" * 40 + "1" + "]" * 40}), encoding="utf-8")
    assert_refused("config params nested", ["run", cfg, "--workspace", ws], workspace=ws,
                   must_name=(str(cfg), "nested"))


@pytest.mark.parametrize("name", list(DEEP_TOML))
def test_a_deeply_nested_settings_file_is_refused(ws, tmp_path, name):
    path = tmp_path / "lsqa.toml"
    path.write_text(f"workspace = '{ws}'\n" + DEEP_TOML[name], encoding="utf-8")
    assert_refused(f"settings {name}", ["status"], workspace=ws, env={"LSQA_SETTINGS": str(path)},
                   must_name=(str(path), "nested"))


# ------------------------------------------------------------------------------ NaN and Infinity in params

NON_FINITE = {
    "temperature = nan": (("systems", 0), "temperature = nan", "systems[0].params"),
    "top_p = inf": (("systems", 1), "top_p = inf", "systems[1].params"),
    "-inf": (("judges", 0), "presence_penalty = -inf", "judges[0].params"),
    "nested nan": (("judges", 0), "extra_body = { sampling = [0.5, nan] }", "judges[0].params"),
    "generation": (("generation", None), "temperature = nan", "generation.params"),
}


@pytest.mark.parametrize("name", list(NON_FINITE))
def test_nan_or_infinity_in_params_is_refused_at_load(ws, tmp_path, name):
    where, assignment, place = NON_FINITE[name]
    cfg = tmp_path / "study.toml"
    cfg.write_text(_config_text({where: assignment}), encoding="utf-8")
    for command in ("run", "plan"):
        line = assert_refused(f"config {name} ({command})", [command, cfg, "--workspace", ws], workspace=ws,
                              must_name=(str(cfg), place, "finite"))
        assert "HTTP" not in line


def test_finite_params_still_load():
    from lsqa.config.study import run_config_from_dict

    data = json.loads(json.dumps(CONFIG))
    data["systems"][0]["params"] = {"temperature": 0.7, "top_p": 1, "stop": ["\n"], "extra_body": {"a": [1.5]}}
    assert run_config_from_dict(data).systems[0].params["temperature"] == 0.7


def test_deep_toml_is_refused_before_the_parser_recurses(monkeypatch):
    """The depth is counted on the text, so tomllib never runs to the recursion limit (where a finaliser the
    garbage collector happens to call fails as well, an error pytest reported once in CI)."""
    import tomllib

    from lsqa.config.schema import NestedTooDeep, toml_loads

    def parser_must_not_run(text):
        raise AssertionError("tomllib was called on a text nested too deep")

    monkeypatch.setattr(tomllib, "loads", parser_must_not_run)
    for name in ("array 3,000 deep", "inline tables 3,000 deep"):  # the one just past the limit parses shallow
        with pytest.raises(NestedTooDeep):
            toml_loads(DEEP_TOML[name])


@pytest.mark.parametrize("text, depth", [
    ("x = [[1], [2]]", 2), ("[[a]]\nb = 1", 2), ('x = "[[[["', 0), ("x = '''[[[\n[[[['''", 0),
    ('x = "a\\"[[[" # [[[[', 0), ("x = 1 # [[[[[\ny = [1]", 1), ('x = """a\\"""[[["""', 0),
    ("x = " + "{a = " * 40 + "1" + "}" * 40, 40),
])
def test_the_depth_is_counted_outside_strings_and_comments(text, depth):
    from lsqa.config.schema import _bracket_depth

    assert _bracket_depth(text) == depth
