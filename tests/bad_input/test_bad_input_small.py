"""The small refusals: `report --out` a FIFO, a device, a link to nothing or a path written as a
folder; `users add` with a `--dashboard-url` that is not http(s) or holds control characters (and
a warning for a look-alike name); `certify --judge ''`; a review's `stratum` that is not a scalar;
an unknown key in `lsqa.toml`. Generated probes: each exits 2 with one line, the workspace unchanged
(tests/support/bad_input.py)."""

from __future__ import annotations

import json
import os

import pytest

from lsqa import store
from tests.bad_input.test_bad_input_bounds import SXS, _reviews, demo, judged  # noqa: F401
from tests.support.bad_input import assert_refused, invoke, snapshot


@pytest.fixture
def workspace(workspace):
    """An existing, empty workspace (the shared fixture's path is not created yet)."""
    with store.write(workspace):
        pass
    return workspace


# ---------------------------------------------------------------------------------- report --out


def _not_files(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    to_fifo = tmp_path / "to-pipe"
    to_fifo.symlink_to(fifo)
    return {"fifo": str(fifo), "device": "/dev/null", "zero": "/dev/zero", "dangling link": str(dangling),
            "link to a fifo": str(to_fifo), "new folder": str(tmp_path / "newdir") + "/",
            "existing folder": str(tmp_path) + "/", "dot": str(tmp_path / "."), "dotdot": str(tmp_path / "..")}


@pytest.mark.parametrize("what", ["fifo", "device", "zero", "dangling link", "link to a fifo", "new folder",
                                  "existing folder", "dot", "dotdot"])
def test_report_out_that_is_no_file_is_refused(demo, tmp_path, what):  # noqa: F811
    out = _not_files(tmp_path)[what]
    assert_refused(f"report --out {what}", ["report", "--judge", SXS, "--out", out, "--workspace", str(demo)],
                   workspace=demo)
    assert not (tmp_path / "newdir").exists()


# ---------------------------------------------------------------------------------- users add

BAD_URLS = ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,<b>x</b>", "file:///etc/passwd",
            "ftp://example.org", "http://", "127.0.0.1:8501", "", " http://127.0.0.1:8501",
            "http://127.0.0.1:8501\nhttp://evil.invalid", "http://127.0.0.1:8501\r", "http://127.0.0.1:8501\t",
            "http://127.0.0.1:8501/\u202eevil", "http://127.0.0.1:8501/\u2028x", "http://a b.invalid"]


@pytest.mark.parametrize("url", BAD_URLS, ids=repr)
def test_users_add_refuses_a_dashboard_url_that_is_not_http(workspace, url):
    line = assert_refused(f"users add --dashboard-url {url!r}",
                          ["users", "add", "Ann", "--role", "annotator", "--dashboard-url", url,
                           "--workspace", str(workspace)],
                          workspace=workspace, must_name=("dashboard",))
    assert "http" in line


@pytest.mark.parametrize("url", BAD_URLS[:4], ids=repr)
def test_the_environments_dashboard_url_is_checked_too(workspace, url):
    assert_refused("LSQA_DASHBOARD_URL", ["users", "add", "Ann", "--role", "annotator", "--workspace", str(workspace)],
                   workspace=workspace, must_name=("LSQA_DASHBOARD_URL",), env={"LSQA_DASHBOARD_URL": url})


def test_users_add_warns_of_a_look_alike_and_adds(workspace):
    assert invoke("users", "add", "bob", "--role", "annotator", "--workspace", str(workspace)).exit_code == 0
    result = invoke("users", "add", "b\u043eb", "--role", "annotator", "--workspace", str(workspace), "--json",
                    "--dashboard-url", "https://lsqa.example.org/")
    assert result.exit_code == 0, result.output
    added = json.loads(result.stdout)
    assert added["link"].startswith("https://lsqa.example.org/?token=")
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("warning: person") and "looks like 'bob'" in line and "CYRILLIC" in line
    assert added["warnings"] == [line]
    quiet = invoke("users", "add", "carol", "--role", "viewer", "--workspace", str(workspace))
    assert quiet.exit_code == 0 and not quiet.stderr.strip()


# ---------------------------------------------------------------------------------- certify --judge ''


@pytest.mark.parametrize("judge", ["", " ", "\t"], ids=repr)
def test_certify_an_empty_judge_is_refused_like_an_unknown_one(demo, judge):  # noqa: F811
    assert_refused(f"certify --judge {judge!r}", ["certify", "--judge", judge, "--workspace", str(demo)],
                   workspace=demo, must_name=("judge",))


# ---------------------------------------------------------------------------------- stratum


@pytest.mark.parametrize("stratum", [[["a", "b"]], ["a"], [], {"a": 1}, {"a": [1, {"b": 2}]}], ids=repr)
def test_a_reviews_stratum_must_be_a_scalar(demo, tmp_path, stratum):  # noqa: F811
    path = _reviews(demo, SXS, 2, 0.5, tmp_path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[1]["stratum"] = stratum
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert_refused(f"import-reviews stratum {stratum!r}", ["import-reviews", str(path), "--workspace", str(demo)],
                   workspace=demo, must_name=("stratum",))


# ---------------------------------------------------------------------------------- lsqa.toml


@pytest.mark.parametrize("key, closest", [("workspce", "workspace"), ("max_concurency", "max_concurrency"),
                                          ("data-dir", "data_dir"), ("identity_headers", "identity_header"),
                                          ("frobnicate", "")])
def test_an_unknown_settings_key_is_refused_with_the_closest_known_one(workspace, tmp_path, key, closest):
    settings = tmp_path / "lsqa.toml"
    settings.write_text(f'workspace = "{workspace}"\n{key} = "x"\n')
    line = assert_refused(f"lsqa.toml key {key}", ["status"], workspace=workspace,
                          must_name=(key, str(settings)), env={"LSQA_SETTINGS": str(settings)})
    assert (f"did you mean '{closest}'" in line) if closest else "unknown key" in line
    assert snapshot(workspace) is not None
