"""Issue 14, area 1 and 2: study configs and the settings file are checked whole before any write,
and credentials written into them are refused (never stored in systems.params, runs.config or an
export). Probes are generated per category from the config's fields; each must give exit code 2
and one line naming the file, the place and what to do, with every table unchanged."""

from __future__ import annotations

import copy
import json
import shutil

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsqa.config.study import run_config_from_dict
from lsqa.corpus.ingest import ingest_narrativeqa
from lsqa.errors import InputError
from tests.conftest import TEST_DATA
from tests.support.bad_input import assert_refused, contents, invoke, snapshot

BASE = {
    "documents": ["The Tale of Tom Kitten"], "questions": "narrativeqa", "max_questions": 2, "sample": 5,
    "seed": 0, "max_concurrency": 2, "use_cache": True,
    "systems": [{"name": "nocontext", "model": "lsqa/extractive", "context": "none"},
                {"name": "rag", "model": "lsqa/extractive", "context": "retrieval:400", "params": {"temperature": 0},
                 "max_context_tokens": 100000, "prompt_version": 1}],
    "judges": [{"name": "sxs", "model": "lsqa/lexical-judge", "kind": "pairwise", "context": "full",
                "both_orders": False, "reference": "both", "params": {}, "max_context_tokens": 100000}],
    "generation": {"model": "lsqa/template-questions", "entities": 2, "questions_per_entity": 1,
                   "context_tokens": 1000, "entity_method": "fallback", "params": {}},
}

# Where each field lives in BASE (the bad value goes there) and its type.
FIELDS = {
    ("sample",): "count", ("seed",): "seed", ("max_questions",): "count", ("max_concurrency",): "count",
    ("use_cache",): "bool", ("questions",): "enum", ("documents",): "documents",
    ("systems", 1, "name"): "name", ("systems", 1, "model"): "name", ("systems", 1, "context"): "context",
    ("systems", 1, "params"): "table", ("systems", 1, "max_context_tokens"): "count",
    ("systems", 1, "prompt_version"): "version",
    ("judges", 0, "name"): "name", ("judges", 0, "model"): "name", ("judges", 0, "kind"): "enum",
    ("judges", 0, "context"): "context", ("judges", 0, "both_orders"): "bool", ("judges", 0, "reference"): "enum",
    ("judges", 0, "threshold"): "fraction", ("judges", 0, "params"): "table",
    ("judges", 0, "max_context_tokens"): "count",
    ("generation", "model"): "name", ("generation", "entities"): "count",
    ("generation", "questions_per_entity"): "count", ("generation", "context_tokens"): "count",
    ("generation", "entity_method"): "enum", ("generation", "params"): "table",
}
# Bad values by kind: wrong types first, then out-of-range or malformed values of the right type.
BAD = {
    "count": ["x", "8", True, 1.5, [1], {"a": 1}, 0, -1, -3, 10**12],
    "seed": ["x", True, 0.5, [0], -1, 2**40],
    "bool": ["yes", "true", 1, 0, [True], {"a": True}],
    "enum": [5, True, "nope", "", ["pairwise"], {"a": 1}],
    "documents": [5, True, [], [5], [""], ["a\nb"], {"a": 1}, [["x"]]],
    "name": [5, True, 1.5, "", ["a"], {"a": "b"}, "a\x00b", "x" * 300],
    "context": [5, True, "half", "", "retrieval:", "retrieval:0", "retrieval:-5", "retrieval:1e3",
                "retrieval:12345678901234567890123", "reference:3", "reference:", "full book", ["full"]],
    "table": ["x", 5, True, [1], ["temperature", 0]],
    "version": [1.5, True, "latest", "", [1], {"v": 1}],
    "fraction": ["high", True, [0.5], {"a": 1}, 1.5, -2, float("nan"), float("inf")],
}


def _probes():
    for loc, kind in FIELDS.items():
        for value in BAD[kind]:
            if loc[-1] == "kind" and value == "nope":
                value = "simlarity"
            yield pytest.param(loc, value, id=f"{'.'.join(map(str, loc))}={value!r}"[:80])


def _with(data: dict, loc: tuple, value) -> dict:
    out = copy.deepcopy(data)
    target = out
    for part in loc[:-1]:
        target = target[part]
    target[loc[-1]] = value
    return out


def _place(loc: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(loc))


@pytest.fixture(scope="module")
def ran_workspace(tmp_path_factory):
    """A workspace with books, questions and one finished small run: refusals must leave all of it."""
    path = tmp_path_factory.mktemp("cfg") / "ws.duckdb"
    ingest_narrativeqa(path, TEST_DATA / "narrativeqa_slice")
    cfg = path.parent / "base.toml"
    cfg.write_text(tomli_w.dumps(BASE))
    result = invoke("run", cfg, "--workspace", path)
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def ws(ran_workspace, tmp_path):
    copy_ = tmp_path / "ws.duckdb"
    shutil.copy(ran_workspace, copy_)
    return copy_


def _write(tmp_path, data: dict | str):
    path = tmp_path / "study.toml"
    path.write_text(data if isinstance(data, str) else tomli_w.dumps(data), encoding="utf-8")
    return path


@pytest.mark.slow
def test_the_base_config_runs_and_a_rerun_changes_nothing(ws, tmp_path):
    """The probes below differ from this accepted config in one value only."""
    cfg = _write(tmp_path, BASE)
    before = snapshot(ws)
    result = invoke("run", cfg, "--workspace", ws)
    assert result.exit_code == 0, result.output
    assert "0 calls made" in result.output
    assert set(before) == set(snapshot(ws)) and before["answers"] == snapshot(ws)["answers"]


@pytest.mark.slow  # ~190 probes; the full suite runs them
@pytest.mark.parametrize("loc, value", list(_probes()))
def test_a_bad_value_is_refused_with_its_place(ws, tmp_path, loc, value):
    data = _with(BASE, loc, value)
    if not isinstance(value, float) or value == value and abs(value) != float("inf"):
        cfg = _write(tmp_path, data)
    else:  # TOML has nan and inf, tomli_w writes them
        cfg = _write(tmp_path, tomli_w.dumps(data))
    place = _place(loc) if loc != ("documents",) or not isinstance(value, list) or not value else "documents"
    assert_refused(f"config {_place(loc)}={value!r}", ["run", cfg, "--workspace", ws],
                   workspace=ws, must_name=(str(cfg), place))


UNKNOWN_KEYS = [
    (("judge",), [], "judges"), (("system",), [], "systems"), (("sampel",), 5, "sample"),
    (("max_concurency",), 4, "max_concurrency"), (("api_base",), "http://h", None),
    (("systems", 0, "modle"), "x", "model"), (("systems", 0, "contxt"), "full", "context"),
    (("systems", 0, "temperature"), 0, None), (("judges", 0, "both_order"), True, "both_orders"),
    (("judges", 0, "refrence"), "1", "reference"), (("generation", "entity"), 2, "entities"),
    (("generation", "seed"), 1, None),
]


@pytest.mark.slow
@pytest.mark.parametrize("loc, value, suggestion", UNKNOWN_KEYS, ids=lambda v: str(v))
def test_an_unknown_key_is_named_with_its_place(ws, tmp_path, loc, value, suggestion):
    cfg = _write(tmp_path, _with(BASE, loc, value))
    line = assert_refused(f"config unknown key {_place(loc)}", ["run", cfg, "--workspace", ws], workspace=ws,
                          must_name=(str(cfg), _place(loc), "unknown key"))
    if suggestion:
        assert f"did you mean '{suggestion}'" in line


RAW = {
    "systems as a table": ('documents = ["The Tale of Tom Kitten"]\n[systems]\nname = "a"\nmodel = "lsqa/extractive"\n'
                           'context = "none"\n', "[[systems]]"),
    "judges as a table": ('documents = ["The Tale of Tom Kitten"]\n[judges]\nname = "a"\nmodel = "m"\n'
                          'kind = "pairwise"\n', "[[judges]]"),
    "generation as a list": ('documents = ["The Tale of Tom Kitten"]\n[[generation]]\nentities = 2\n', "[generation]"),
    "not TOML": ('documents = ["The Tale of Tom Kitten"\n', "not valid TOML"),
    "an unterminated string": ('documents = "The Tale\n', "not valid TOML"),
    "a 23-digit number": ('documents = ["a"]\nsample = 12345678901234567890123\n', "sample"),
    "a date": ('documents = ["a"]\nseed = 1979-05-27\n', "seed"),
    "an array of tables for params": ('documents = ["a"]\n[[systems]]\nname = "a"\nmodel = "m"\ncontext = "none"\n'
                                      '[[systems.params]]\nt = 0\n', "systems[0].params"),
    "no documents": ('sample = 5\n', "documents"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RAW))
def test_a_malformed_file_is_refused(ws, tmp_path, name):
    text, place = RAW[name]
    cfg = _write(tmp_path, text)
    assert_refused(f"config raw {name}", ["run", cfg, "--workspace", ws], workspace=ws, must_name=(str(cfg), place))


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage", b"documents = [\"a\"]\x00\n", b"", b"\x00" * 64],
                         ids=["latin bytes", "NUL", "empty", "zeros"])
def test_a_file_that_is_not_a_config_is_refused(ws, tmp_path, content):
    cfg = tmp_path / "study.toml"
    cfg.write_bytes(content)
    assert_refused(f"config bytes {content[:8]!r}", ["run", cfg, "--workspace", ws], workspace=ws,
                   must_name=(str(cfg),))


@pytest.mark.parametrize("what", ["missing", "folder", "huge"])
def test_a_config_path_that_is_no_config_is_refused(ws, tmp_path, what):
    cfg = tmp_path / "study.toml"
    if what == "folder":
        cfg.mkdir()
    elif what == "huge":
        cfg.write_text('documents = ["a"]\n' + "# padding\n" * 200_000)
    assert_refused(f"config path {what}", ["run", cfg, "--workspace", ws], workspace=ws, must_name=(str(cfg),))


def test_an_unknown_document_writes_nothing(ws, tmp_path):
    """Before, the systems of a config refused for an unknown document were registered anyway."""
    data = _with(BASE, ("documents",), ["The Tale of Tom Kiten"])
    data["systems"].append({"name": "new-system", "model": "lsqa/extractive", "context": "full"})
    cfg = _write(tmp_path, data)
    assert_refused("config unknown document", ["run", cfg, "--workspace", ws], workspace=ws,
                   must_name=(str(cfg), "Tom Kiten"))


# ----------------------------------------------------------------------------------- secrets

SECRET = "sk-proj-abcdefghijklmnop1234"
SECRET_PARAMS = {
    "userinfo in api_base": {"api_base": f"http://user:{SECRET}@127.0.0.1:9/v1"},
    "user only in api_base": {"api_base": f"https://{SECRET}@example.org/v1"},
    "key in the query": {"api_base": f"http://127.0.0.1:9/v1?api_key={SECRET}"},
    "token in the query": {"base_url": f"http://127.0.0.1:9/v1?x=1&access_token={SECRET}"},
    "one of several api_bases": {"api_base": ["http://127.0.0.1:9/v1", f"http://u:{SECRET}@127.0.0.1:8/v1"]},
    "X-Auth header": {"extra_headers": {"X-Auth": SECRET}},
    "X-Auth-Token header": {"headers": {"X-Auth-Token": SECRET}},
    "Authorization header": {"extra_headers": {"Authorization": f"Bearer {SECRET}"}},
    "api-key header": {"extra_headers": {"api-key": SECRET}},
    "Cookie header": {"extra_headers": {"Cookie": f"session={SECRET}"}},
    "api_key": {"api_key": SECRET},
    "a key-looking stop string": {"stop": [SECRET]},
    "bearer in metadata": {"metadata": {"note": f"Bearer {SECRET}"}},
    "aws secret": {"aws_secret_access_key": SECRET},
}


@pytest.mark.parametrize("where", [("systems", 1, "params"), pytest.param(("judges", 0, "params"), marks=pytest.mark.slow),
                                   pytest.param(("generation", "params"), marks=pytest.mark.slow)],
                         ids=lambda w: _place(w))
@pytest.mark.parametrize("name", list(SECRET_PARAMS))
def test_a_credential_in_a_config_is_refused_and_never_stored(ws, tmp_path, where, name):
    data = _with(BASE, where, SECRET_PARAMS[name])
    cfg = _write(tmp_path, data)
    line = assert_refused(f"config secret {name} in {_place(where)}", ["run", cfg, "--workspace", ws],
                          workspace=ws, must_name=(str(cfg), _place(where), "environment"))
    assert SECRET not in line
    assert SECRET not in repr(contents(ws))


def test_a_url_and_headers_without_credentials_are_accepted(ws, tmp_path):
    data = _with(BASE, ("systems", 1, "params"), {"api_base": "http://127.0.0.1:9/v1?api-version=2024-01-01",
                                                  "extra_headers": {"X-Request-Source": "lsqa"},
                                                  "stop_token_ids": [1, 2], "max_tokens": 30})
    config = run_config_from_dict(data, source="t")
    assert config.systems[1].params["extra_headers"] == {"X-Request-Source": "lsqa"}


# ---------------------------------------------------------------------------------- settings

SETTINGS = {
    "workspace as a list": ("workspace = [1, 2]\n", "workspace"),
    "workspace as a number": ("workspace = 5\n", "workspace"),
    "empty workspace": ('workspace = ""\n', "workspace"),
    "max_concurrency 0": ("max_concurrency = 0\n", "max_concurrency"),
    "max_concurrency text": ('max_concurrency = "8"\n', "max_concurrency"),
    "coref kind": ('coref_model_kind = "big"\n', "coref_model_kind"),
    "passage_tokens": ("passage_tokens = -5\n", "passage_tokens"),
    "data_dir table": ("[data_dir]\na = 1\n", "data_dir"),
    "a key": ('openai_api_key = "sk-abcdefghijklmnopqrst"\n', "openai_api_key"),
    "a header": ('[headers]\nAuthorization = "Bearer abcdefghijklmnop"\n', "Authorization"),
    "not TOML": ("workspace = \n", "not valid TOML"),
    "binary": ("\udcff", "UTF-8"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SETTINGS))
def test_a_bad_settings_file_is_refused(ws, tmp_path, name):
    text, place = SETTINGS[name]
    path = tmp_path / "lsqa.toml"
    if text == "\udcff":
        path.write_bytes(b"workspace = \"\xff\"\n")
    else:  # the workspace is the good one unless the probe is about the workspace key
        path.write_text(text if text.startswith("workspace") else f"workspace = '{ws}'\n{text}", encoding="utf-8")
    assert_refused(f"settings {name}", ["status"], workspace=ws,
                   env={"LSQA_SETTINGS": str(path)}, must_name=(str(path), place))


# ------------------------------------------------------------------- any value, any place

_toml_scalars = st.one_of(st.integers(-2**63, 2**63 - 1), st.booleans(), st.text(max_size=20),
                          st.floats(allow_nan=True, allow_infinity=True))
_toml_values = st.recursive(_toml_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                   st.dictionaries(st.text(max_size=8), inner,
                                                                                   max_size=3)), max_leaves=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loc=st.sampled_from(list(FIELDS)), value=_toml_values)
def test_any_value_anywhere_is_either_valid_or_refused_in_one_line(loc, value):
    """Generated values at every field: a RunConfig or an InputError naming the place, never another error."""
    try:
        config = run_config_from_dict(_with(BASE, loc, value), source="gen.toml")
    except InputError as exc:
        message = str(exc)
        assert "\n" not in message and message.startswith("gen.toml: ")
        return
    # Accepted: then it is a value of the field's type.
    kind = FIELDS[loc]
    if kind in ("count", "seed"):
        assert isinstance(value, int) and not isinstance(value, bool)
    elif kind == "bool":
        assert isinstance(value, bool)
    elif kind == "table":
        assert isinstance(value, dict)
    assert config.sample >= 1 and config.max_concurrency >= 1


@pytest.mark.parametrize("params", [
    {"extra_headers": {"Authorization": "Bearer sk-live-0123456789abcdef"}},
    {"extra_headers": {"x-api-key": "sk-ant-0123456789abcdef"}},
    {"headers": {"api-key": "0123456789abcdef0123"}},
    {"apikey": "0123456789abcdef0123"},
    {"vertex_credentials": "{\"private_key\": \"...\"}"},
])
def test_secrets_in_request_headers_are_refused_at_load(params):
    """Before, only names equal to or ending in _key/_token/... were refused, so an Authorization
    header went into runs.config and systems.params (and from there into exports)."""
    with pytest.raises(InputError, match="API keys"):
        run_config_from_dict({"documents": ["x"], "systems": [
            {"name": "s", "model": "openai/gpt-4o-mini", "context": "none", "params": params}]})


def test_ordinary_parameters_are_still_accepted():
    config = run_config_from_dict({"documents": ["x"], "systems": [
        {"name": "s", "model": "openai/m", "context": "none",
         "params": {"api_base": "http://127.0.0.1:8080/v1", "max_tokens": 300, "stop_token_ids": [2],
                    "extra_headers": {"OpenAI-Organization": "org-1"}, "temperature": 0}}]})
    assert config.systems[0].params["api_base"] == "http://127.0.0.1:8080/v1"


@pytest.mark.parametrize("key", ["\n", "a b", "tab\there", "quote\"d", "ünï"])
def test_a_key_that_is_no_plain_word_is_named_quoted_in_one_line(key):
    """Hypothesis found a newline in a key copied raw into the message: the key is shown as TOML quotes it."""
    with pytest.raises(InputError) as caught:
        run_config_from_dict(_with(BASE, ("judges", 0, "context"), {key: 0}), source="gen.toml")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("gen.toml: ")
    assert f"judges[0].context.{json.dumps(key)}: unknown key" in message
