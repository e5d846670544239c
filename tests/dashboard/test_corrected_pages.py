"""The corrected-estimate parts of the dashboard (issue 13), through Streamlit's AppTest on the
small demo workspace: the Audit page's random queue records how a review was sampled, and the
Leaderboard shows judge-only and corrected estimates side by side with the audits they use."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from lsqa import audit, store
from lsqa.dashboard import corrected_view
from lsqa.figures import audits
from lsqa.store import verdicts as verdicts_store
from lsqa.text import highlight
from tests.dashboard.test_dashboard_pages import (  # noqa: F401
    APP,
    SXS,
    _fresh_streamlit_caches,
    goto,
    open_app,
    pick_judge,
    ws,
)
from tests.support import audit_desk as desk


def test_random_audit_queue_records_the_inclusion_probability(ws):  # noqa: F811
    at = open_app(page="audit")
    assert not at.multiselect  # the queue settings are folded (and not built) until opened
    at.session_state["audit_x_queue"] = True  # the person unfolds "Queue settings"
    at.run()
    at.multiselect(key="audit_judges").set_value([SXS]).run()
    at.selectbox(key="audit_queue").set_value("random").run()
    assert not at.exception, [e.value for e in at.exception]
    expected = audits.queue(ws, SXS, "random", rate=0.1)["rows"][0]
    item = audit.item(ws, expected["id"])
    desk.press(at, f"audit_opt_shown:{item['shown_label'] or 'A'}")
    assert not at.exception, [e.value for e in at.exception]
    with store.connect(ws) as con:
        saved = verdicts_store.sampled_human_labels(con, SXS)
    assert [(r["judgment_id"], r["queue"], r["stratum"]) for r in saved] == [(expected["id"], "random", "all")]
    assert saved[0]["inclusion_prob"] == 0.1


def test_leaderboard_shows_corrected_beside_judge_only(ws):  # noqa: F811
    q = audits.queue(ws, SXS, "random", rate=0.3)
    for row in q["rows"]:
        audit.review(ws, "bob", row["id"], row["label"], sampling=row["sampling"])
    at = pick_judge(open_app(page="leaderboard"), "all")
    assert not at.error, [e.value for e in at.error]
    frames = [df.value for df in at.dataframe if "corrected strength" in df.value.columns]
    assert len(frames) == 3    # the demo's three side-by-side judges; only SXS has audits
    audited = [f for f in frames if f["audited"].sum() > 0]
    assert len(audited) == 1
    frame = audited[0]
    assert {"judge-only strength", "corrected 95% CI", "audited"} <= set(frame.columns)
    assert frame["audited"].sum() == 2 * len(q["rows"])    # each audited pair counts for both systems
    assert any(f"{len(q['rows'])} usable audits (random queue)" in c.value for c in at.caption)
    assert any(corrected_view.AUDITS_TO_SEPARATE in df.value.columns for df in at.dataframe)
    # A yes/no judge without audits: its judge-only figures with the warning.
    assert any("no usable audits" in w.value for w in at.warning)


LINK = re.compile(r"\[((?:[^\]\\]|\\.)*)\]\((audit\?item=[^)]+)\)")


def markdown_table(text: str) -> list[dict]:
    """A Markdown table's rows as dicts of raw cell Markdown (cells split on unescaped pipes)."""
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    split = lambda ln: [c.strip() for c in re.split(r"(?<!\\)\|", ln.strip()[1:-1])]  # noqa: E731
    head = [unescape(h) for h in split(lines[0])]
    return [dict(zip(head, split(ln), strict=False)) for ln in lines[2:]]


def unescape(text: str) -> str:
    """A Markdown cell as it reads: backslash escapes and character references (lsqa.text.highlight.escape) undone."""
    import html

    return html.unescape(re.sub(r"\\(.)", r"\1", text))


def test_leaderboard_shows_the_overrides_that_moved_a_rank_flip(ws):  # noqa: F811
    from tests.figures.test_corrected_workspace import override_between_top_two

    top, second, changed = override_between_top_two(ws, SXS)
    at = pick_judge(open_app(page="leaderboard"), SXS)
    flips = [markdown_table(m.value) for m in at.markdown if "overrides that moved it" in m.value]
    assert flips, "no rank-flip table on the Leaderboard"
    rows = [r for frame in flips for r in frame
            if unescape(r["systems"]) in (f"{top} / {second}", f"{second} / {top}")]
    assert len(rows) == 1
    row = rows[0]
    assert unescape(row["judge-only order"]) == f"{top} > {second}"
    assert unescape(row["overrides order"]) == f"{second} > {top}"
    assert "judge" in row["overrides that moved it"] and "→ human" in row["overrides that moved it"]
    assert unescape(row["random audits that moved it"]) == "—"
    assert any("reviewed verdicts (any queue) in place of the judge's" in c.value for c in at.caption)
    # Each question is its text, linked to the verdict a person overrode on the Audit page (issue 30).
    links = LINK.findall(row["overrides that moved it"])
    assert links
    for text, url in links:
        jid = url.removeprefix("audit?item=")
        assert jid in changed, "the link opens a verdict the person overrode"
        question = audit.item(ws, jid)["question"]
        assert unescape(text).strip("“”…").split()[:5] == question.split()[:5]
        assert jid not in unescape(row["overrides that moved it"]).replace(url, "")  # no id shown as text


def test_audit_page_opens_the_verdict_a_link_names(ws):  # noqa: F811
    """`/audit?item=<judgment id>` (a rank-flip link) opens that verdict first, not the queue's head."""
    linked = audit.queue(ws, audit.Filters(judges=(SXS,)), "alice")["rows"][7]["id"]
    head = audit.queue(ws, audit.Filters(), "alice", exclude=[linked])["rows"][0]["id"]
    item = audit.item(ws, linked)
    assert item["question"] != audit.item(ws, head)["question"]
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["annotator"] = "alice"
    at.query_params["item"] = linked
    at.switch_page("pages/audit.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert desk.desk(at).state["audit_trail"] == [linked]
    drawn = desk.desk_html(at)
    assert "<b>Question</b>" in drawn and highlight.escape(item["question"]) in drawn
    assert f"Verdict of {SXS}" in desk.desk_text(at)
    desk.press(at, "audit_next")  # J goes on to the queue's head
    assert desk.desk(at).state["audit_trail"] == [linked, head]


def test_audit_link_to_an_unknown_verdict_says_so_and_shows_the_queue(ws):  # noqa: F811
    rows = audit.queue(ws, audit.Filters(), "alice")["rows"]
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["annotator"] = "alice"
    at.query_params["item"] = "no-such-verdict"
    at.switch_page("pages/audit.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert desk.desk(at).state["audit_trail"] == [rows[0]["id"]]
    assert any("item=no-such-verdict names no verdict" in t.value for t in at.toast), \
        [t.value for t in at.toast]
