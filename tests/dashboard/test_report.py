"""``lsqa report`` (issue 30): one self-contained HTML page a stakeholder can be handed.

Built on the small demo (tests/conftest.py) with random-queue audits written through ``lsqa.audit``
as the Audit page writes them. The page is read back as a browser reads it (``html.parser``: the
text of each section's tables), and its figures are compared with the ranking, the certification
and the runs read independently from the workspace; the browser test opens the file in Debian's
chromium with every network request refused.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from importlib import metadata
from pathlib import Path

import pytest

from lsqa import audit, store
from lsqa.dashboard import leaderboard_view as lv
from lsqa.dashboard import report
from lsqa.figures import analysis, audits
from lsqa.figures import certification as figures_certification
from lsqa.figures import corrected as figures_corrected
from lsqa.stats.rank_intervals import ranks_text
from lsqa.text import numbers
from tests.support.bad_input import assert_refused, invoke

SXS = "lexical-sxs-fc"
CORRECTED_SECTION = "corrected"
YES_NO = "lexical-autoais-fc"
BOOT = 200
GREEK = re.compile(r"[\u0370-\u03ff]")


class Page(HTMLParser):
    """The page as text: per section id, its visible text and its tables' rows (lists of cell texts)."""

    def __init__(self, text: str):
        super().__init__()
        self.sections: dict[str, dict] = {}
        self.dt: list[str] = []
        self._section = None
        self._row = None
        self._cell = None
        self._in_dt = False
        self._skip = False
        self.text_parts: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self._section = self.sections.setdefault(attrs["id"], {"text": [], "rows": []})
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "dt":
            self._in_dt, self._dtext = True, []
        elif tag in ("style", "title", "script"):  # a script block (the figures JSON) is not shown
            self._skip = True

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._section is not None:
            self._section["rows"].append(self._row)
            self._row = None
        elif tag == "dt":
            self.dt.append("".join(self._dtext))
            self._in_dt = False
        elif tag == "section":
            self._section = None
        elif tag in ("style", "title", "script"):
            self._skip = False

    def handle_data(self, data):
        if self._skip:
            return
        self.text_parts.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._in_dt:
            self._dtext.append(data)
        if self._section is not None:
            self._section["text"].append(data)

    def text(self, section: str | None = None) -> str:
        parts = self.text_parts if section is None else self.sections[section]["text"]
        return re.sub(r"\s+", " ", " ".join(parts))

    def table(self, section: str) -> list[dict]:
        """The section's first table as dicts (header row → cells)."""
        rows = self.sections[section]["rows"]
        head = rows[0]
        out = []
        for r in rows[1:]:
            if r == head or len(r) != len(head):
                break
            out.append(dict(zip(head, r, strict=False)))
        return out


def audited(ws: Path, judge: str, n: int, override: int = 0) -> list[dict]:
    """``n`` random-queue audits by ana: the first ``override`` overridden, the rest confirmed."""
    rows = audits.queue(ws, judge, "random", rate=0.25, limit=n)["rows"]
    assert len(rows) == n
    other = {"A": "B", "B": "A", "tie": "A", "none": "A", "yes": "no", "no": "yes"}
    for k, r in enumerate(rows):
        if k < override:
            audit.review(ws, "ana", r["id"], other[r["label"]], sampling=r["sampling"])
        else:
            audit.confirm(ws, "ana", r["id"], sampling=r["sampling"])
    return rows


def test_report_side_by_side(demo_workspace, tmp_path, monkeypatch):
    monkeypatch.delenv("LSQA_DASHBOARD_URL", raising=False)
    ws = demo_workspace
    audited(ws, SXS, 12, override=1)
    out = tmp_path / "report.html"
    result = invoke("report", "--workspace", ws, "--judge", SXS, "--out", out, "--bootstrap", BOOT)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"wrote {out}")
    html = out.read_text(encoding="utf-8")
    page = Page(html)

    # Tiers and ranks: the judge-only ranking read independently, system by system, in order.
    ranking = analysis.ranking(ws, SXS, bootstrap=BOOT, seed=0)
    n = len(ranking["systems"])
    shown = page.table("tiers")
    assert [(r["tier"], r["system"], r["ranks it can hold (95%)"]) for r in shown] == [
        (str(s["tier"]), s["system"], ranks_text(s["rank_low"], s["rank_high"], n)) for s in ranking["systems"]]
    # By hand on the demo: fullbook and rag4k share tier 1, nocontext never won (tier 3, rank 4, unbounded).
    assert {r["system"] for r in shown if r["tier"] == "1"} == {"extractive-fullbook", "extractive-rag4k"}
    last = shown[-1]
    assert (last["system"], last["tier"], last["ranks it can hold (95%)"]) == ("extractive-nocontext", "3", "4")
    assert last["95% interval of the strength"].startswith("unbounded: never beat")
    # The bars draw β: the strongest fills its bar; the weakest keeps the 15% pad of the β range (13.0%).
    tiers_html = html.split('<section id="tiers">')[1].split("</section>")[0]
    widths = [float(w) for w in re.findall(r'style="width:([\d.]+)%"', tiers_html)]
    assert len(widths) == n and widths[0] == 100.0 and widths[-1] == pytest.approx(100 * 0.15 / 1.15, abs=0.05)

    # The certification: its verdict and the 12 audits it rests on (11 agree, 1 overridden).
    cert = figures_certification.certify(ws, SXS)
    assert cert["n_audits"] == 12 and cert["agreement"]["estimate"] == pytest.approx(11 / 12)
    verdict = page.text("certification")
    assert f"(verdict: {cert['verdict']})" in verdict and "Rests on 12 audits from the random queue" in verdict
    assert f"Bounds: {cert['rule']}." in verdict          # valid at every look: re-reading the report is safe
    agreement = page.table("certification")[0]
    assert (agreement["figure"], agreement["estimate"], agreement["audits"]) == (
        "agreement with people", "91.7%", "12")

    # The corrected ranking rests on the same audits; the bias panel on the judge's verdicts (both orders).
    assert "Rests on 12 audits from the random queue" in page.text("corrected")
    bias = {r["figure"]: r["value"] for r in page.table("bias")}
    pb = analysis.position_bias(ws, SXS)
    assert bias["verdicts"] == str(pb["n"]) and bias["answer pairs judged in both orders"] == str(pb["n_both_orders"])

    # Length preference: the Agreement page's figures (analysis.length_preference), the judge beside the
    # people on the 12 audited verdicts.
    pref = analysis.length_preference(ws, SXS, bootstrap=BOOT, seed=0)
    assert pref["audited"]["n"] == 12
    length = {r["figure"]: r["value"] for r in page.table("length")}
    row = lv.length_preference_row(pref)
    assert length == {label: str(row[key]) for key, label in report.LENGTH_FIGURES.items()}
    assert length["verdicts people audited"] == "12"
    judge_c, people_c = pref["audited"]["judge"], pref["audited"]["people"]
    assert length["the judge's length coefficient on the audited verdicts"].startswith(
        f"{numbers.signed(judge_c['estimate'])} (")
    assert length["the people's length coefficient on the same verdicts"].startswith(
        f"{numbers.signed(people_c['estimate'])} (")
    overlap = judge_c["ci_low"] <= people_c["ci_high"] and people_c["ci_low"] <= judge_c["ci_high"]
    assert ("cannot be told apart (the two intervals overlap)" in page.text("length")) == overlap

    # Self-preference (§5.1): every pair the judge compared, beside the two other side-by-side judges,
    # counted by hand from the stored verdicts (one per pair of answers: the stored order's where the pair
    # was judged in both orders, else its one verdict).
    shown = page.table("self-preference")
    assert page.text("self-preference").count("no system here answers with that model") == 1
    with store.connect(ws) as con:
        stored = con.execute("SELECT judge, system_a, system_b, arg_min(label, shown_order) FROM judgments "
                             "WHERE status = 'ok' AND family = 'pairwise' "
                             "GROUP BY judge, question_id, system_a, system_b").fetchall()
    pairs = sorted({tuple(sorted((a, b))) for j, a, b, _ in stored if j == SXS})
    assert len(pairs) == 6 and len(shown) == 6 * 3
    for row in shown:
        first, second = row["systems compared"].split(" / ")
        judge = row["judge"].removesuffix(" (this report's judge)")
        mine = [(a, b, lab) for j, a, b, lab in stored if j == judge and {a, b} == {first, second}]
        won = {s: sum((lab == "A" and a == s) or (lab == "B" and b == s) for a, b, lab in mine) for s in (first, second)}
        assert row["answer pairs judged"] == str(len(mine))
        assert row["preferred the first"].startswith(f"{first}: {won[first]} (")
        assert row["preferred the second"].startswith(f"{second}: {won[second]} (")
        assert row["neither (a tie, or both answers wrong)"] == str(len(mine) - won[first] - won[second])
    assert sum(r["judge"] == f"{SXS} (this report's judge)" for r in shown) == 6
    # The same figures as the Agreement page's 2×2 (analysis.self_preference) for one pair.
    t = analysis.self_preference(ws, (SXS, "lexical-gt-sxs"), pairs[0])
    gt_row = next(r for r in shown if r["judge"] == "lexical-gt-sxs" and r["systems compared"] == " / ".join(pairs[0]))
    assert gt_row["answer pairs judged"] == str(t["totals"][1])

    # What each switch changes: the override changed a comparison's outcome, not their number; style
    # control and the correction by audits measured here as in their own sections.
    switches = {r["switch"]: r["what it changes here"] for r in page.table("switches")}
    assert set(switches) == {"Use human overrides", "Leave out questions with a flagged reference",
                             "Style control (length)", "Corrected by the audits (its own section above)"}
    comparisons = ranking["n_comparisons"]
    assert f"Comparisons: {comparisons:,} → " in switches["Use human overrides"]
    style = analysis.style_ranking(ws, SXS, bootstrap=BOOT, seed=0)
    plain_rank = {s["system"]: s["rank"] for s in ranking["systems"]}
    style_moved = [f"{s['system']} {plain_rank[s['system']]} → {s['rank']}" for s in style["systems"]
                   if plain_rank[s["system"]] != s["rank"]]
    assert switches["Style control (length)"].startswith(
        f"Rank changed: {'; '.join(style_moved)}." if style_moved else "No system changed rank.")
    coefficient = style["coefficient"]
    assert (f"Length coefficient {numbers.signed(coefficient['estimate'])} ({numbers.signed(coefficient['ci_low'])} to "
            f"{numbers.signed(coefficient['ci_high'])})") in switches["Style control (length)"]
    corrected = figures_corrected.corrected_ranking(ws, SXS)
    moved = [f"{r['system']} {r['judge_only_rank']} → {r['rank']}" for r in corrected["systems"]
             if r["judge_only_rank"] != r["rank"]]
    correction = switches["Corrected by the audits (its own section above)"]
    assert correction.startswith("From 12 audits. " + (f"Rank changed: {'; '.join(moved)}." if moved
                                                      else "No system changed rank."))
    assert f"Tiers: {len({r['judge_only_tier'] for r in corrected['systems']})} judge-only, " \
           f"{len({r['tier'] for r in corrected['systems']})} corrected." in correction
    assert re.search(r"about \d+\.\d× as wide as the judge-only ones", correction)

    # Provenance: the lsqa version, the runs and their dates, the study config (books by title).
    provenance = page.text("provenance")
    assert f"lsqa version {metadata.version('lsqa')}" in provenance
    with store.connect(ws) as con:
        runs = con.execute("SELECT id, stage, started_at, config FROM runs ORDER BY id").fetchall()
    assert f"Runs: {len(runs)}, the first started {min(r[2] for r in runs):%Y-%m-%d %H:%M}" in provenance
    assert [r["stage"] for r in page.table("provenance")] == [r[1] for r in reversed(runs)]
    config = json.loads(runs[-1][3])
    assert all(title in provenance for title in config["documents"])
    assert config["study_id"] not in html  # a hash: left out, and said so
    assert "(an internal identifier, left out)" in provenance

    # Plain words: no None, no null, no 40-hex question hashes, each Greek letter explained.
    visible = page.text()
    assert "None" not in visible and "null" not in visible
    # (the examples' links to the Audit page carry the verdict's id in the address only, never as text; they are
    # absolute, to make run's address without --dashboard-url or LSQA_DASHBOARD_URL: the file is read elsewhere)
    link = r'href="http://127\.0\.0\.1:8501/audit\?item=[0-9a-f]{40}"'
    assert not re.search(r"\b[0-9a-f]{40}\b", re.sub(link, "", html))
    assert re.search(f"<a {link}>open on Audit</a>", html)
    letters = set(GREEK.findall(visible.split("What the symbols mean")[0]))
    assert letters >= {"β"}
    explained = {d for d in page.dt if len(d) == 1}
    assert letters <= explained, letters - explained
    # Self-contained: nothing fetched.
    # The only script element is the figures' JSON data block (never run; the CSP forbids scripts anyway).
    assert re.findall(r"<script[^>]*>", html) == [f'<script type="application/json" id="{report.FIGURES_ID}">']
    assert not re.search(r"""src\s*=|<link\b|url\(|@import""", html)  # a link to click is not fetched


def test_report_yes_no_without_audits(demo_workspace, tmp_path):
    ws = demo_workspace
    out = tmp_path / "yes-no.html"
    result = invoke("report", "--workspace", ws, "--judge", YES_NO, "--out", out)
    assert result.exit_code == 0, result.stderr
    page = Page(out.read_text(encoding="utf-8"))
    acc = analysis.accuracy(ws, YES_NO)
    shown = page.table("tiers")
    assert [r["system"] for r in shown] == [r["system"] for r in acc]
    assert [r["accuracy"] for r in shown] == [numbers.percent(r["accuracy"]) for r in acc]
    # By hand on the demo: nocontext's answers are never accepted; it sits alone in the last tier.
    assert (shown[-1]["system"], shown[-1]["accuracy"], shown[-1]["tier"]) == ("extractive-nocontext", "0%", "2")
    assert "(verdict: undecided)" in page.text("certification") and "Rests on 0 audits" in page.text("certification")
    assert page.table("certification")[0]["95% interval"] == "no audits of this yet"
    assert "No corrected ranking: no random or active audits" in page.text("corrected")
    assert "side-by-side judges" in page.text("bias")
    assert "a yes/no judge sees one answer at a time" in page.text("length")
    assert "a yes/no judge sees one answer at a time" in page.text("self-preference")
    switches = {r["switch"]: r["what it changes here"] for r in page.table("switches")}
    assert switches["Style control (length)"].startswith("Applies to side-by-side judges only")
    assert switches["Corrected by the audits (its own section above)"] == (
        "Nothing yet: no random or active audits of this judge.")
    assert "None" not in page.text()


@pytest.mark.parametrize("args, must", [
    (["--judge", "no-such-judge"], ("no-such-judge", "lexical-sxs-fc")),
    (["--judge", SXS, "--out", "{tmp}"], ("folder",)),
    (["--judge", SXS, "--out", "{tmp}/missing/report.html"], ("does not exist",)),
    (["--judge", SXS, "--out", "/proc/report.html"], ("cannot be written",)),
    (["--judge", SXS, "--audit-queue", "priority"], ("priority",)),
    (["--judge", SXS, "--bootstrap", "-1"], ("--bootstrap",)),
], ids=["unknown-judge", "out-folder", "out-missing-folder", "out-not-writable", "bad-queue", "bad-bootstrap"])
def test_bad_report_options_are_refused_in_one_line(demo_workspace, tmp_path, args, must):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "report.html")]
    assert_refused(f"report {args}", ["report", "--workspace", demo_workspace, *args], workspace=demo_workspace,
                   must_name=must)
    assert not (tmp_path / "report.html").exists() and not (tmp_path / "missing").exists()


def test_the_reports_audit_links_lead_to_the_dashboard_it_is_told(demo_workspace, tmp_path, monkeypatch):
    """A report is read away from the dashboard: its links to the Audit page are absolute, to --dashboard-url, else
    LSQA_DASHBOARD_URL, under a base path too, each naming one verdict of the judge; an address that is not
    one is refused before anything is written."""
    ws = demo_workspace
    audited(ws, SXS, 12, override=1)
    with store.connect(ws) as con:
        ids = {r[0] for r in con.execute("SELECT id FROM judgments WHERE judge = ?", [SXS]).fetchall()}

    def hrefs(*args) -> list[str]:
        out = tmp_path / "report.html"
        result = invoke("report", "--workspace", ws, "--judge", SXS, "--out", out, "--bootstrap", 50, *args)
        assert result.exit_code == 0, result.stderr
        return re.findall(r'<a href="([^"]*)">open on Audit</a>', out.read_text(encoding="utf-8"))

    given = hrefs("--dashboard-url", "https://team.example:9000/lsqa/")
    assert given and all(h.startswith("https://team.example:9000/lsqa/audit?item=") for h in given)
    assert {h.rsplit("=", 1)[1] for h in given} <= ids
    monkeypatch.setenv("LSQA_DASHBOARD_URL", "http://10.0.0.7:8501")
    assert hrefs() == [h.replace("https://team.example:9000/lsqa/", "http://10.0.0.7:8501/") for h in given]
    for bad, named in (("javascript:alert(1)", "--dashboard-url"), ("http://host/a b", "--dashboard-url"),
                       ("ftp://host", "--dashboard-url"), ("http://", "--dashboard-url")):
        out = tmp_path / "refused.html"
        assert_refused(f"report --dashboard-url {bad!r}", ["report", "--workspace", ws, "--judge", SXS, "--out", out,
                                                           "--dashboard-url", bad], workspace=ws, must_name=(named,))
        assert not out.exists()
    monkeypatch.setenv("LSQA_DASHBOARD_URL", "http://host/\nSet-Cookie: x")
    assert_refused("report with a bad LSQA_DASHBOARD_URL", ["report", "--workspace", ws, "--judge", SXS, "--out",
                                                             tmp_path / "refused.html"], workspace=ws,
                   must_name=("LSQA_DASHBOARD_URL",))


@pytest.mark.browser
def test_report_opens_offline_in_chromium(demo_workspace, tmp_path):

    from tests.support.browser import chromium, need_browser

    need_browser()
    ws = demo_workspace
    audited(ws, SXS, 12)
    out = tmp_path / "report.html"
    out.write_text(report.build(ws, SXS, bootstrap=BOOT), encoding="utf-8")
    verdict = figures_certification.certify(ws, SXS)["verdict"]
    ranking = analysis.ranking(ws, SXS, bootstrap=BOOT, seed=0)
    with chromium() as browser:
        context = browser.new_context()
        requested = []
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                      else (requested.append(route.request.url), route.abort()))
        context.set_offline(True)
        page = context.new_page()
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto(out.as_uri())
        # The first screen (no scrolling): the leader, a win probability in percent, the certification
        # verdict and the audit count, in the headline.
        first = page.locator("#headline-text")
        box = first.bounding_box()
        assert box["y"] + box["height"] <= 800
        said = first.text_content()
        assert ranking["systems"][0]["system"] in said and re.search(r"\d+(\.\d+)?% of the time", said)
        assert "undecided after 12 random audits" in said and verdict == "undecided"
        rows = page.locator("#tiers table").first.locator("tbody tr").evaluate_all(
            "trs => trs.map(tr => [...tr.cells].slice(0, 2).map(td => td.textContent))")
        assert rows == [[str(s["tier"]), s["system"]] for s in ranking["systems"]]
        # the second table: each pair of neighbours, and how many verdicts would swap them
        pairs = page.locator("#tiers table").nth(1).locator("tbody tr td:first-child").all_text_contents()
        assert pairs == [f"{a['upper']} above {a['lower']}" for a in ranking["adjacent"]]
        assert "would swap them" in page.locator("#tiers").text_content()
        assert page.locator("#tiers th").first.text_content() == "tier"
        shown = page.locator("#verdict").text_content()
        assert shown.startswith(f"{SXS}: ") and f"(verdict: {verdict})" in shown
        assert page.locator("#verdict").is_visible()
        # The bias panel's new sections and the switches, with their figures, as the browser shows them.
        length = dict(page.locator("#length table tbody tr").evaluate_all(
            "trs => trs.map(tr => [...tr.cells].map(td => td.textContent))"))
        assert length["verdicts people audited"] == "12"
        assert length["the people's length coefficient on the same verdicts"] == lv.length_preference_row(
            analysis.length_preference(ws, SXS, bootstrap=BOOT, seed=0))["people on audited"]
        assert page.locator("#self-preference table tbody tr").count() == 6 * 3
        assert page.locator("#self-preference").is_visible()
        switches = page.locator("#switches table tbody tr").evaluate_all(
            "trs => trs.map(tr => [tr.cells[0].textContent, tr.cells[2].textContent])")
        assert [name for name, _ in switches] == [
            "Use human overrides", "Leave out questions with a flagged reference", "Style control (length)",
            "Corrected by the audits (its own section above)"]
        assert dict(switches)["Corrected by the audits (its own section above)"].startswith("From 12 audits.")
        assert requested == []


STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


def test_leaderboard_report_button_gives_the_cli_report(demo_workspace, tmp_path, monkeypatch):
    """The Leaderboard's "Report (HTML)" button, for the judge shown, makes the file `lsqa report` writes
    (the same rounds), but for the minute it was made. The button makes its file on click (a deferred
    download): the test runs the function the click would run, recorded where Streamlit registers it."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    from tests.dashboard.test_dashboard_pages import open_app, pick_judge

    made: dict[str, object] = {}
    register = MediaFileManager.add_deferred

    def recording(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        made[file_name] = data_callable
        return register(self, data_callable, mimetype, coordinates, file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", recording)
    ws = demo_workspace
    monkeypatch.setenv("LSQA_WORKSPACE", str(ws))
    audited(ws, SXS, 12, override=1)
    at = pick_judge(open_app(page="leaderboard"), SXS)
    at.selectbox(key="lb_rounds").set_value(200).run()
    buttons = [b for b in at.get("download_button") if b.proto.label == "Report (HTML)"]
    assert len(buttons) == 1, "one report button for the judge shown"
    assert "lsqa report" in buttons[0].proto.help
    html = made[report.file_name(SXS, lv.now_utc())]()  # the latest render's: 200 rounds
    out = tmp_path / "cli.html"
    result = invoke("report", "--workspace", ws, "--judge", SXS, "--out", out, "--bootstrap", 200)
    assert result.exit_code == 0, result.stderr
    cli = out.read_text(encoding="utf-8")
    assert STAMP.sub("<when>", html) == STAMP.sub("<when>", cli)
    assert STAMP.search(html) and "Bias panel: self-preference" in html
    # A yes/no judge shown alone gets its own report.
    pick_judge(at, YES_NO)
    assert [b.proto.label for b in at.get("download_button")].count("Report (HTML)") == 1
    assert any(n and n.startswith(f"report_{YES_NO}_") for n in made)


# ---------------------------------------------------------------------------- numbers a person reads

# What counts as a number on the page: a run of digits, with thousands commas and a decimal part. A
# whole number (no decimal point: a count such as "1,234 verdicts", a rank, a year, a run id) is
# counted, not estimated, and is allowed whole. A decimal number is an estimate: at most 3
# significant digits (leading zeros do not count; trailing ones do: "100.0" has four). Exponent form
# ("1.54e-11", "3E+11") is never allowed. The study configs quoted under provenance (<pre>) are the
# input as written, not figures of the report, and are left out.
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
EXPONENT = re.compile(r"\d(?:\.\d+)?[eE][-+]?\d+\b")


def unreadable_numbers(text: str) -> list[str]:
    """The numbers of ``text`` outside the allowed form (above)."""
    bad = EXPONENT.findall(text)
    for m in NUMBER.finditer(text):
        token = m.group()
        if "." in token and len(token.replace(",", "").replace(".", "").lstrip("0")) > 3:
            bad.append(token)
    return bad


def test_report_reads_the_verdicts_once_and_certifies_once(demo_workspace, monkeypatch):
    """One report counts its judge's side-by-side verdicts once for the ranking, the switches and the
    self-preference pairs (``comparison_groups``), and certifies the judge once for the headline, the
    certification section and the agreement basis: each result is handed on, none recomputed. The
    page is the same as the one built from the separate reads (the ranking and pairs read on their own)."""
    from collections import Counter

    from lsqa.dashboard import agreement_view, headline
    from lsqa.store import verdicts as verdicts_store

    ws = demo_workspace
    audited(ws, SXS, 12, override=2)
    calls: Counter = Counter()

    def counted(module, name):
        real = getattr(module, name)

        def wrapper(*args, **kw):
            calls[(name, args[1])] += 1
            return real(*args, **kw)
        monkeypatch.setattr(module, name, wrapper)

    counted(verdicts_store, "comparison_groups")
    counted(figures_certification, "certify")
    counted(agreement_view, "certify")
    page, figures, _ = report.build_with_figures(ws, SXS, bootstrap=BOOT)
    assert calls[("comparison_groups", SXS)] == 1 and calls[("certify", SXS)] == 1, calls
    # What was handed on is what each section would read by itself.
    assert report._pairs(ws, SXS) == analysis.pair_counts(ws, SXS, groups=analysis.comparison_groups(ws, SXS))
    for switch in ({}, {"use_overrides": True}, {"exclude_flagged": True}):
        assert analysis.ranking(ws, SXS, bootstrap=BOOT, **switch) == analysis.ranking(
            ws, SXS, bootstrap=BOOT, groups=analysis.comparison_groups(ws, SXS), **switch)
    said = headline.figures(ws, SXS, ranking=analysis.ranking(ws, SXS, bootstrap=BOOT))
    assert figures["certification"] == said["certification"]


def test_the_number_check_finds_what_it_should():
    assert unreadable_numbers("0.000 – 52,263,024,284.256 and 1.54e-11× – 3.02e+11×, 100.0%") == [
        "1.54e-11", "3.02e+11", "52,263,024,284.256", "100.0"]
    assert unreadable_numbers("1,234 verdicts, 68.8% [14.7–94.7], 0.0123, rank 2–4, 2026-12-06 04:19") == []


@pytest.mark.parametrize("n_audits", [5, 32])
def test_every_number_in_the_report_is_readable(demo_workspace, n_audits):
    """The report of the demo with 5 random audits (too few for the corrected intervals) and with 32 (enough),
    for the side-by-side and the yes/no judge: no number in exponent form or with more than 3
    significant digits anywhere in the text a reader sees."""
    ws = demo_workspace
    audited(ws, SXS, n_audits, override=1)
    audited(ws, YES_NO, min(n_audits, 20), override=1)
    for judge in (SXS, YES_NO):
        html = report.build(ws, judge, bootstrap=BOOT)
        text = Page(re.sub(r"<pre>.*?</pre>", "", html, flags=re.S)).text()
        assert unreadable_numbers(text) == [], judge
        if judge == SXS and n_audits == 5:
            # The corrected section says "too few audits to say" where its intervals would be digits.
            corrected = Page(html).table(CORRECTED_SECTION)
            assert corrected and all(r["corrected 95% CI"] == "too few audits to say (n = 5)" for r in corrected)


# ---------------------------------------------------------------------------------- what changed since

def test_since_lists_exactly_the_changes_a_batch_of_audits_made(demo_workspace, tmp_path):
    """Two reports of one workspace, before and after 27 more random audits (2 overridden): `--since` lists
    the audits added, the corrected intervals crossing 30 audits, and the certification's verdict and
    agreement only where they changed (read independently), and nothing else; the ranking's tiers are the
    judge's and do not move with audits."""
    ws = demo_workspace
    audited(ws, SXS, 5)
    first, second = tmp_path / "before.html", tmp_path / "after.html"
    assert invoke("report", "--workspace", ws, "--judge", SXS, "--out", first, "--bootstrap", BOOT).exit_code == 0
    cert0 = figures_certification.certify(ws, SXS)
    audited(ws, SXS, 27, override=2)
    cert1 = figures_certification.certify(ws, SXS)
    result = invoke("report", "--workspace", ws, "--judge", SXS, "--out", second, "--bootstrap", BOOT,
                    "--since", first)
    assert result.exit_code == 0, result.stderr
    expected = [f"Certification: {cert0['verdict']} → {cert1['verdict']}."] if cert0["verdict"] != cert1["verdict"] else []
    expected.append("Random audits: 5 → 32 (+27).")
    a0, a1 = cert0["agreement"]["estimate"], cert1["agreement"]["estimate"]
    if (a0 >= 0.9) != (a1 >= 0.9):
        expected.append(f"Agreement with people (random audits) crossed 90.0%: {numbers.percent(a0)} → "
                        f"{numbers.percent(a1)}.")
    expected.append("Corrected by the audits: 5 → 32 audits, enough for its intervals (30 needed).")
    listed = [line[2:] for line in result.stdout.splitlines() if line.startswith("- ")]
    assert listed == expected
    page = Page(second.read_text(encoding="utf-8"))
    assert [li for li in expected if li in page.text("changes")] == expected
    # The embedded figures read back (HTML or the JSON alone) and nothing moved between a report and itself.
    figures = report.read_figures(second)
    (tmp_path / "figures.json").write_text(json.dumps(figures), encoding="utf-8")
    assert report.changes(report.read_figures(tmp_path / "figures.json"), figures) == []
    again = invoke("report", "--workspace", ws, "--judge", SXS, "--out", tmp_path / "again.html", "--bootstrap", BOOT,
                   "--since", tmp_path / "figures.json")
    assert again.exit_code == 0 and "nothing moved" in again.stdout
    # A tier that moves and a leader that changes are listed (the figures edited as a later workspace would).
    moved = json.loads(json.dumps(figures))
    moved["systems"][0]["tier"], moved["leader"] = 2, "someone-else"
    assert report.changes(moved, figures)[:2] == [f"Leader: someone-else → {figures['leader']}.",
                                                  f"{figures['systems'][0]['system']}: tier 2 → "
                                                  f"{figures['systems'][0]['tier']}."]
    # Not a report: refused in one line naming the file.
    assert_refused("report --since a workspace", ["report", "--workspace", ws, "--judge", SXS, "--out",
                                                  tmp_path / "x.html", "--since", ws],
                   workspace=ws, must_name=(str(ws),))
