"""People, roles and sign-in (issue 34): the library refuses what a role does not allow, whatever
the page shows; tokens are never stored; the dashboard signs people in by link.

Each write function is called directly with every role, on the small demo workspace, and the
workspace is compared before and after a refusal (tests/support/bad_input.py's snapshot)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lsqa import audit, team
from lsqa.dashboard import sign_in
from lsqa.dashboard.sign_in_front import exchange
from lsqa.errors import NotAllowed
from lsqa.judging import guidelines, kinds
from lsqa.study import jobs
from lsqa.team import Person
from tests.conftest import PROJECT_ROOT
from tests.support import audit_desk as desk
from tests.support.apptest_text import page_text
from tests.support.bad_input import contents, invoke, snapshot

APP = str(PROJECT_ROOT / "app.py")
ROLES = ("viewer", "annotator", "adjudicator", "admin")


@pytest.fixture
def ws(demo_workspace, monkeypatch) -> Path:
    monkeypatch.setenv("LSQA_WORKSPACE", str(demo_workspace))
    return demo_workspace


@pytest.fixture
def people(ws) -> dict[str, dict]:
    """One person per role (name = role), with their token."""
    return {role: team.add_person(ws, role, role) for role in ROLES}


def _item(ws: Path) -> dict:
    """The first verdict of the queue that has a label to confirm."""
    for row in audit.queue(ws, audit.Filters(), "nobody")["rows"]:
        it = audit.item(ws, row["id"])
        if it["status"] == "ok" and it["label"] is not None:
            return it
    raise AssertionError("no labelled verdict in the demo")


def _writes(ws: Path, it: dict) -> dict:
    """Every write function that records a person's action, with the permission it needs."""
    other = next(lab for lab in kinds.get(it["kind"]).labels if lab != it["label"])
    return {
        "confirm": ("review", lambda who: audit.confirm(ws, who, it["id"])),
        "review": ("review", lambda who: audit.review(ws, who, it["id"], other)),
        "flag": ("review", lambda who: audit.flag(ws, who, it["question_id"], "1", "wrong")),
        "skip": ("review", lambda who: audit.skip(ws, who, it["id"], "unsure")),
        "comment": ("review", lambda who: audit.comment(ws, who, it["id"], "Check the last chapter.")),
        "adjudicate": ("adjudicate", lambda who: audit.adjudicate(ws, who, it["id"], it["label"], "final")),
        "assign": ("assign", lambda who: audit.assign(ws, it["judge"], ["annotator", "adjudicator"], by=who,
                                                      per_item=1, count=2)),
        "undo": ("review", lambda who: audit.undo_last(ws, who)),
        "overlap": ("settings", lambda who: audit.set_overlap(ws, 0.5, who)),
        "guidelines": ("guidelines", lambda who: guidelines.save(ws, it["kind"], "Read the book.", who)),
        "run": ("run", lambda who: jobs.start(ws, {"documents": ["The Tale of Two Bad Mice"], "max_questions": 1,
                                                   "systems": [], "judges": []}, by=who)),
        "add person": ("people", lambda who: team.add_person(ws, f"new-by-{who.name}", "viewer", by=who)),
    }


@pytest.mark.parametrize("role", ROLES)
def test_each_write_function_refuses_what_the_role_may_not_do(ws, people, role):
    it = _item(ws)
    me = team.sign_in(ws, people[role]["token"])
    assert me == Person(role, role, via="token")
    for name, (permission, call) in _writes(ws, it).items():
        if name == "undo":  # something of mine to undo first, where I may act at all
            if team.may(role, "review"):
                audit.confirm(ws, me, it["id"])
        before = snapshot(ws)
        if team.may(role, permission):
            call(me)
            if name == "run":
                jobs.wait(jobs.list_jobs(ws)[-1]["id"], timeout_s=120)
            continue
        with pytest.raises(NotAllowed) as refused:
            call(me)
        assert snapshot(ws) == before, f"{role} {name}: refused but the workspace changed"
        message = str(refused.value)
        assert "\n" not in message and role in message and team.PERMISSIONS[permission] in message, message


def test_reviews_and_flags_carry_the_signed_in_name_and_role(ws, people):
    it = _item(ws)
    ana = team.sign_in(ws, people["annotator"]["token"])
    audit.confirm(ws, ana, it["id"])
    audit.flag(ws, ana, it["question_id"], "2", "ambiguous")
    rows = contents(ws)
    assert any("'annotator'" in r and it["id"] in r for r in rows["human_reviews"])
    assert any("'annotator'" in r and "ambiguous" in r for r in rows["reference_flags"])
    out = ws.parent / "export"
    result = invoke("export", "--workspace", ws, "--out", out)
    assert result.exit_code == 0, result.output
    exported = (out / "human_reviews.csv").read_text(encoding="utf-8") if (out / "human_reviews.csv").exists() \
        else "".join(p.read_text(encoding="utf-8") for p in out.rglob("*human_reviews*"))
    assert "role" in exported.splitlines()[0] and ",annotator," in exported


def test_a_plain_name_acts_only_while_the_workspace_has_nobody(ws):
    it = _item(ws)
    audit.confirm(ws, "solo", it["id"])  # the one-person tool: a name acts
    team.add_person(ws, "ana", "annotator")
    before = snapshot(ws)
    for call in (lambda: audit.confirm(ws, "solo", it["id"]), lambda: audit.undo_last(ws, "solo"),
                 lambda: audit.flag(ws, "ana", it["question_id"], "1", "wrong"),
                 lambda: audit.set_overlap(ws, 0.2, "ana"),
                 lambda: audit.confirm(ws, Person("ana", "admin", via="single-user"), it["id"])):
        with pytest.raises(NotAllowed, match="not signed in"):
            call()
    assert snapshot(ws) == before


def test_a_forged_or_revoked_person_acts_no_more(ws, people):
    it = _item(ws)
    viewer = team.sign_in(ws, people["viewer"]["token"])
    forged = Person(viewer.name, "admin", via="token")  # the role the workspace holds is what counts
    with pytest.raises(NotAllowed, match="viewer"):
        audit.confirm(ws, forged, it["id"])
    with pytest.raises(NotAllowed):
        audit.confirm(ws, Person("mallory", "admin"), it["id"])
    ana = team.sign_in(ws, people["annotator"]["token"])
    audit.confirm(ws, ana, it["id"])
    team.revoke_person(ws, "annotator")
    assert team.sign_in(ws, people["annotator"]["token"]) is None
    before = snapshot(ws)
    with pytest.raises(NotAllowed, match="revoked"):
        audit.undo_last(ws, ana)  # the page that still holds ana's Person
    assert snapshot(ws) == before
    again = team.add_person(ws, "annotator", "viewer")  # a new link, a new role; the old token stays dead
    assert team.sign_in(ws, people["annotator"]["token"]) is None
    assert team.sign_in(ws, again["token"]) == Person("annotator", "viewer")


def test_tokens_are_kept_only_as_salted_hashes(ws, people):
    rows = json.dumps(contents(ws), default=str)
    for p in people.values():
        assert p["token"] not in rows
    raw = ws.read_bytes() + (ws.with_name(ws.name + ".wal").read_bytes() if ws.with_name(ws.name + ".wal").exists()
                             else b"")
    assert not any(p["token"].encode() in raw for p in people.values())
    # two people never share a hash even with one token's worth of luck: per-person salts
    hashes = [r for r in contents(ws)["people"]]
    assert len(hashes) == len(ROLES)
    assert team.sign_in(ws, "x" * 43) is None and team.sign_in(ws, "") is None


def test_a_dashboard_beyond_the_loopback_address_is_read_only_without_people(ws):
    it = _item(ws)
    assert team.is_loopback("127.0.0.1") and team.is_loopback("::1") and team.is_loopback("localhost")
    assert not team.is_loopback("0.0.0.0") and not team.is_loopback(None) and not team.is_loopback("10.0.0.5")
    outside = team.single_user("ana", server_address="0.0.0.0")
    before = snapshot(ws)
    with pytest.raises(NotAllowed, match="127.0.0.1"):
        audit.confirm(ws, outside, it["id"])
    with pytest.raises(NotAllowed):
        jobs.start(ws, {"documents": ["The Tale of Two Bad Mice"], "max_questions": 1, "systems": [],
                        "judges": []}, by=outside)
    assert snapshot(ws) == before
    audit.confirm(ws, team.single_user("ana", server_address="127.0.0.1"), it["id"])


def test_users_command(ws):
    result = invoke("users", "add", "ana", "--role", "annotator", "--workspace", ws, "--json")
    assert result.exit_code == 0, result.output
    added = json.loads(result.stdout)
    assert set(added) == {"name", "role", "token", "link", "expires_at", "warnings"} and added["warnings"] == []
    assert added["link"].endswith(f"/?token={added['token']}")
    assert team.sign_in(ws, added["token"]) == Person("ana", "annotator")
    assert team.sign_in(ws, added["token"]) is None  # a link signs in once
    made = json.loads(invoke("users", "link", "ana", "--workspace", ws, "--json").stdout)
    assert set(made) == {"name", "role", "token", "link", "expires_at"} and made["token"] != added["token"]
    for args, names in ((["users", "add", "ana", "--role", "viewer"], "already"),
                        (["users", "add", "bo", "--role", "boss"], "boss"),
                        (["users", "add", "b\u202eo", "--role", "viewer"], "U+202E"),
                        (["users", "revoke", "nobody"], "nobody"),
                        (["users", "link", "nobody"], "nobody")):
        before = snapshot(ws)
        r = invoke(*args, "--workspace", ws)
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and names in r.stderr, r.output
        assert snapshot(ws) == before
    listed = json.loads(invoke("users", "list", "--workspace", ws, "--json").stdout)
    assert [(p["name"], p["role"], p["revoked_at"]) for p in listed] == [("ana", "annotator", None)]
    assert "token" not in json.dumps(listed)
    assert invoke("users", "revoke", "ana", "--workspace", ws).exit_code == 0
    assert team.sign_in(ws, made["token"]) is None


# ----------------------------------------------------------------------------- the dashboard


def _app(token: str | None = None, annotator: str = "", *, ws=None, front: bool = True) -> AppTest:
    """app.py with a personal link opened: through the sign-in front (``front``: the token exchanged
    and the session id handed to the script, as the front's HttpOnly cookie hands it over), or reaching
    the script itself (``front=False``: ``streamlit run app.py``)."""
    at = AppTest.from_file(APP, default_timeout=90)
    if token is not None and front:
        session_id, problem = exchange(ws, token)
        if session_id:
            at.session_state["lsqa_session"] = session_id
        else:
            at.query_params["sign_in"] = problem
    elif token is not None:
        at.query_params["token"] = token
    at.session_state["annotator"] = annotator
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_dashboard_asks_for_a_sign_in_once_the_workspace_has_people(ws, people):
    at = _app(annotator="ana")  # a typed name signs nobody in
    assert "Sign in" in [t.value for t in at.title] and not at.sidebar.text_input
    at = _app(token="not-a-real-token-but-long-enough", ws=ws)
    assert "does not work here" in page_text(at) and "sign_in" not in at.query_params
    at = _app(token=people["annotator"]["token"], front=False)  # no front: the link signs nobody in, unused
    assert "token" not in at.query_params and "without its sign-in front" in page_text(at)
    at = _app(token=people["annotator"]["token"], ws=ws)
    assert "**annotator** · annotator · signed in with your link in this browser" in page_text(at)
    assert "was used already" in page_text(_app(token=people["annotator"]["token"], ws=ws))
    # Sign out: a form posted to the sign-in front (tests/browser/test_sign_in_browser.py), which ends the
    # session in the workspace; this tab's next run finds nobody.
    (form,) = [h.proto.body for h in at.sidebar.get("html") if sign_in.SIGN_OUT_PATH in h.proto.body]
    assert f'method="post" action="{sign_in.SIGN_OUT_PATH}"' in form and ">Sign out</button>" in form
    team.end_session(ws, at.session_state["lsqa_session"])
    at.run()
    assert "Sign in" in [t.value for t in at.title]
    # Pasting the token into the field: AppTest does not run a widget's callback on a page made from a
    # function; tests/browser/test_team_browser.py pastes it in a real browser, in the same tab.


def test_a_viewer_on_the_audit_page_writes_nothing_whatever_they_press(ws, people):
    at = _app(token=people["viewer"]["token"], ws=ws)
    at.switch_page("pages/audit.py")
    at.run()
    assert "your role may not review and flag" in page_text(at)
    before = snapshot(ws)
    for b in at.button:
        if b.key and b.key != "new_link" and not b.disabled:  # new_link: their own
            b.click().run()
    for name in desk.buttons(at):  # the desk's too, each pressed as its door would (off or not)
        desk.press(at, name, note="a viewer's note")
    assert snapshot(ws) == before


def test_an_annotator_signed_in_by_link_reviews_under_their_name(ws, people):
    at = _app(token=people["annotator"]["token"], ws=ws)
    at.switch_page("pages/audit.py")
    at.run()
    desk.press(at, "audit_confirm")
    rows = contents(ws)["human_reviews"]
    assert any("'annotator'" in r and "'confirm'" in r for r in rows), rows[-3:]
