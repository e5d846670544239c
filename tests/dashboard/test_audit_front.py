"""The Audit desk's HTTP door (``lsqa.dashboard.audit_front``): a press is one POST that writes with the
person the page signed in, only on the item that was on the screen, and bad requests by category get a
status and words and write nothing. The door is the real middleware around an empty app, in-process
(Starlette's TestClient), over a real desk on a copy of the demo workspace; one test asks the real
`streamlit run dashboard.py` that the door is mounted there."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from lsqa import audit, store, team
from lsqa.dashboard import audit_desk, audit_front
from lsqa.dashboard import audit_view as view
from lsqa.store import reviews as reviews_store
from tests.support.streamlit_server import serve

AIS = "lexical-autoais-fc"


def _reviews(ws) -> list[dict]:
    with store.connect(ws) as con:
        return reviews_store.reviews(con)


@pytest.fixture
def door(demo_workspace):
    ws = demo_workspace
    state = view.opening_state({"judge": [AIS]}, lambda: {"judges": [AIS], "systems": []})
    view.restore_settings(state)
    person = team.single_user("dee", server_address="127.0.0.1")
    desk = audit_desk.open_desk(ws, person, "dee", state)
    audit_desk.configure(desk, state, person, "dee", None, door=audit_front.DESK_PATH)
    audit_desk.draw(desk)
    client = TestClient(audit_front.AuditDeskFront(Starlette()), base_url="http://127.0.0.1")
    return ws, desk, client


def _press(client, desk, button="audit_opt_yes__writes", on_screen="shown", note="", **headers):
    body = {"desk": desk.key, "button": button, "on_screen": desk.current_id if on_screen == "shown" else on_screen,
            "note": note}
    return client.post(audit_front.DESK_PATH, json=body, headers=headers)


def test_a_press_writes_on_the_item_on_screen_and_answers_with_the_next(door):
    ws, desk, client = door
    first = desk.current_id
    r = _press(client, desk, note="the book agrees")
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    answer = r.json()
    assert answer["item"] != first and answer["note"] == "clear" and answer["ended"] is False
    assert 'role="status">Saved: Yes, correct' in answer["html"] and f'data-lsqa-item="{answer["item"]}"' in answer["html"]
    assert [(r["annotator"], r["judgment_id"], r["label"], r["note"]) for r in _reviews(ws)] == [
        ("dee", first, "yes", "the book agrees")]


BAD = [  # (what, request keywords, status, words of the error)
    ("a GET", {"method": "GET"}, 405, "POST"),
    ("another site's page", {"headers": {"Sec-Fetch-Site": "cross-site"}}, 403, "own pages"),
    ("another origin", {"headers": {"Origin": "http://evil.invalid"}}, 403, "own pages"),
    ("not JSON", {"content": b"y"}, 400, "JSON object"),
    ("not UTF-8", {"content": b"\xff\xfe{}"}, 400, "JSON object"),
    ("a JSON array", {"content": b"[1, 2]"}, 400, "JSON object"),
    ("no desk", {"json": {"button": "audit_next"}}, 400, "names its desk"),
    ("a desk that is a number", {"json": {"desk": 7, "button": "audit_next"}}, 400, "names its desk"),
    ("an empty button", {"json": {"desk": "k", "button": ""}}, 400, "names its button"),
    ("on_screen a number", {"json": {"desk": "k", "button": "b", "on_screen": 3}}, 400, "on_screen is a string"),
    ("a note that is a list", {"json": {"desk": "k", "button": "b", "note": ["x"]}}, 400, "note is a string"),
    ("more than 16 KB", {"json": {"desk": "k", "button": "b", "note": "x" * 20_000}}, 413, "at most 16,384 bytes"),
    ("a desk this server does not have", {"json": {"desk": "no-such-desk", "button": "audit_next"}}, 404,
     "reload the page"),
]


@pytest.mark.parametrize("what, request_kw, status, words", BAD, ids=[b[0] for b in BAD])
def test_a_bad_request_gets_its_status_and_words_and_writes_nothing(door, what, request_kw, status, words):
    ws, desk, client = door
    kw = dict(request_kw)
    method = kw.pop("method", "POST")
    r = client.request(method, audit_front.DESK_PATH, **kw)
    assert r.status_code == status and words in r.json()["error"], (what, r.status_code, r.text)
    assert _reviews(ws) == [] and desk.current_id is not None


REFUSED = [  # (what, press keywords, words in the desk's alert)
    ("a button the desk did not draw", {"button": "audit_delete_everything"}, "that button is not on this item"),
    ("a writing button from another item's screen", {"on_screen": "another-item"}, "the item changed under your key"),
    ("a writing button from a screen between two items", {"on_screen": None}, "the item changed under your key"),
    ("a note holding NUL", {"note": "pasted\x00text"}, "Not saved: a note holding a NUL character"),
    ("a note over the limit", {"note": "n" * (audit.MAX_NOTE_CHARS + 1)}, "Not saved"),
]


@pytest.mark.parametrize("what, press_kw, words", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_press_the_desk_refuses_says_why_keeps_the_item_and_the_note(door, what, press_kw, words):
    ws, desk, client = door
    first = desk.current_id
    answer = _press(client, desk, **press_kw).json()
    assert words in answer["html"].replace("&#95;", "_"), (what, answer["html"][:400])
    assert answer["item"] == first and answer["note"] == "keep"
    assert _reviews(ws) == []


def test_a_viewer_desk_writes_nothing(door):
    ws, desk, client = door
    audit_desk.configure(desk, desk.state, team.Person("vic", "viewer"), "", None)  # a viewer: no annotator name
    audit_desk.draw(desk)
    for spec in (*desk.bar.nav, *desk.bar.labels, *desk.bar.flags):
        _press(client, desk, button=spec["key"], note="a viewer's note")
    assert _reviews(ws) == []


def test_two_presses_at_once_on_one_desk_write_once(door):
    """Two clicks of one screen sent together (a double click, a key and a click): the desk takes them
    one after the other; the second names the item the first decided, so it writes nothing."""
    ws, desk, client = door
    first = desk.current_id
    answers = []
    go = threading.Barrier(2)

    def press():
        go.wait()
        answers.append(_press(client, desk, on_screen=first).json())

    threads = [threading.Thread(target=press) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r["judgment_id"] for r in _reviews(ws)] == [first]
    assert sorted("the item changed under your key" in a["html"] for a in answers) == [False, True]


def test_the_dashboard_server_mounts_the_door(demo_workspace):
    """`streamlit run dashboard.py` (as `make run`) answers at the door: a cross-site press is refused,
    an unknown desk asks for a reload; both JSON, nothing written."""
    with serve(demo_workspace) as url:
        for headers, status in (({"Sec-Fetch-Site": "cross-site"}, 403), ({}, 404)):
            req = urllib.request.Request(url + audit_front.DESK_PATH, method="POST",
                                         data=json.dumps({"desk": "none", "button": "audit_next"}).encode(),
                                         headers={"Content-Type": "application/json", **headers})
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(req, timeout=30)
            assert err.value.code == status and "error" in json.loads(err.value.read())
    assert _reviews(demo_workspace) == []
