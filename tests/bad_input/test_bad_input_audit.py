"""Issue 14, area 5: the library's audit actions check what they store. ``audit.review`` refuses a
label that is not one of its verdict's kind (a pairwise "yes", "banana", "", None), an unknown
verdict and an empty annotator; ``audit.flag`` refuses an unknown question, reference or reason.
Each refusal is an ``lsqa.errors.LsqaError`` with one line naming the input, the place and what to
do, and every table is unchanged; the statistics that read reviews keep working."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsqa import audit, store
from lsqa.errors import LsqaError
from lsqa.figures import analysis
from lsqa.vocabulary import ABSOLUTE_LABELS, FLAG_REASONS, PAIRWISE_LABELS
from tests.support.bad_input import assert_library_refuses, snapshot


@pytest.fixture(scope="module")
def audited(tmp_path_factory, demo_workspace_template):
    import shutil

    path = tmp_path_factory.mktemp("audit") / "ws.duckdb"
    shutil.copy(demo_workspace_template, path)
    return path


@pytest.fixture
def ws(audited, tmp_path):
    import shutil

    path = tmp_path / "ws.duckdb"
    shutil.copy(audited, path)
    return path


def _verdict(ws, kind_family: str) -> dict:
    rows = audit.queue(ws, audit.Filters(reviewed="all"), "probe", page_size=500)["rows"]
    pairwise = kind_family == "pairwise"
    return next(r for r in rows if (r["kind"] in ("pairwise", "groundtruth-pairwise")) == pairwise and r["status"] == "ok")


BAD_LABELS = {
    "pairwise": ["yes", "no", "banana", "", "  ", None, "a", "A ", "tie\x00", 5, ["A"], "shown:A"],
    "binary": ["A", "B", "tie", "none", "banana", "", None, "Yes", 1, True, {"label": "yes"}],
}


@pytest.mark.parametrize("family, label", [(f, label) for f, labels in BAD_LABELS.items() for label in labels],
                         ids=lambda v: repr(v)[:20])
def test_review_refuses_a_label_not_of_the_verdicts_kind(ws, family, label):
    v = _verdict(ws, family)
    message = assert_library_refuses(f"audit.review {family} label={label!r}",
                                     lambda: audit.review(ws, "ann", v["id"], label), LsqaError, workspace=ws,
                                     must_name=(v["id"][:10],))
    assert "label" in message


@pytest.mark.parametrize("annotator", ["", "   ", None, "a\nb", "x" * 300, 5])
def test_review_and_flag_refuse_a_bad_annotator(ws, annotator):
    v = _verdict(ws, "pairwise")
    assert_library_refuses(f"audit.review annotator={annotator!r}", lambda: audit.review(ws, annotator, v["id"], "A"),
                           LsqaError, workspace=ws, must_name=("annotator",))
    assert_library_refuses(f"audit.flag annotator={annotator!r}",
                           lambda: audit.flag(ws, annotator, v["question_id"], "1", "wrong"), LsqaError, workspace=ws,
                           must_name=("annotator",))


@pytest.mark.parametrize("judgment_id", ["nope", "", None, 5])
def test_review_and_confirm_refuse_an_unknown_verdict(ws, judgment_id):
    assert_library_refuses(f"audit.review id={judgment_id!r}", lambda: audit.review(ws, "ann", judgment_id, "A"),
                           LsqaError, workspace=ws, must_name=(repr(judgment_id),))
    assert_library_refuses(f"audit.confirm id={judgment_id!r}", lambda: audit.confirm(ws, "ann", judgment_id),
                           LsqaError, workspace=ws, must_name=(repr(judgment_id),))


@pytest.mark.parametrize("note, what", [(5, "type int"), (["x"], "type list"), ("x" * 20_001, "20,001 characters"),
                                        ("a\x00b", "NUL character")])
def test_review_refuses_a_bad_note(ws, note, what):
    v = _verdict(ws, "binary")
    assert_library_refuses(f"audit.review note={str(note)[:10]!r}", lambda: audit.review(ws, "ann", v["id"], "yes", note),
                           LsqaError, workspace=ws, must_name=("note", what))


FLAG_PROBES = [
    ("question_id", "nqa:nope:0"), ("question_id", ""), ("question_id", None), ("question_id", 5),
    ("reference", "3"), ("reference", 1), ("reference", ""), ("reference", "both"), ("reference", None),
    ("reason", "banana"), ("reason", ""), ("reason", None), ("reason", "WRONG"),
    ("note", 5), ("note", "x" * 20_001),
]


@pytest.mark.parametrize("field, value", FLAG_PROBES, ids=lambda v: repr(v)[:20])
def test_flag_refuses_an_unknown_question_reference_or_reason(ws, field, value):
    v = _verdict(ws, "binary")
    args = {"annotator": "ann", "question_id": v["question_id"], "reference": "1", "reason": FLAG_REASONS[0],
            "note": ""} | {field: value}
    assert_library_refuses(f"audit.flag {field}={value!r}"[:60], lambda: audit.flag(ws, **args), LsqaError,
                           workspace=ws, must_name=(field.split("_")[0],))


def test_good_labels_are_kept_and_statistics_read_them(ws):
    pair, single = _verdict(ws, "pairwise"), _verdict(ws, "binary")
    for label in PAIRWISE_LABELS:
        assert audit.review(ws, "ann", pair["id"], label)["label"] == label
    for label in ABSOLUTE_LABELS:
        assert audit.review(ws, "ann", single["id"], label)["label"] == label
    audit.flag(ws, "ann", single["question_id"], "2", FLAG_REASONS[0], "a note")
    result = analysis.ranking(ws, pair["judge"], use_overrides=True, bootstrap=0)
    assert result["systems"]


_FIRST_SEEN: dict[str, tuple] = {}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(label=st.one_of(st.sampled_from(PAIRWISE_LABELS), st.none(), st.text(max_size=8), st.integers(),
                       st.booleans()))  # the valid labels too: random text seldom hits one
def test_any_label_is_a_valid_one_or_refused(ws, label):
    # Hypothesis runs every example on the one workspace of this test, and each example leaves it as
    # it found it (a refusal changes nothing, a stored label is deleted below): the verdict is read
    # once, and every refusal is checked against the workspace as first seen, so a trace an earlier
    # example left fails too. The snapshot kept is the latest one found equal to it (equal tables):
    # its bytes are usually the file's still, which settles the check without opening the file.
    if str(ws) not in _FIRST_SEEN:
        _FIRST_SEEN[str(ws)] = (_verdict(ws, "pairwise"), snapshot(ws))
    v, before = _FIRST_SEEN[str(ws)]
    try:
        stored = audit.review(ws, "gen", v["id"], label)
    except LsqaError as exc:
        now = snapshot(ws)
        assert "\n" not in str(exc) and now == before
        _FIRST_SEEN[str(ws)] = (v, now)
        return
    assert stored["label"] in PAIRWISE_LABELS
    with store.connect(ws) as con:
        con.execute("DELETE FROM human_reviews WHERE annotator = 'gen'")
