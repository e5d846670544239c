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
from lsqa.dashboard import report
from lsqa.stats import analysis, certification, sampling
from lsqa.stats.rank_intervals import ranks_text

from .bad_input import assert_refused, invoke

SXS = "lexical-sxs-fc"
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
        elif tag in ("style", "title"):
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
        elif tag in ("style", "title"):
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
            out.append(dict(zip(head, r)))
        return out


def audited(ws: Path, judge: str, n: int, override: int = 0) -> list[dict]:
    """``n`` random-queue audits by ana: the first ``override`` overridden, the rest confirmed."""
    rows = sampling.queue(ws, judge, "random", rate=0.25, limit=n)["rows"]
    assert len(rows) == n
    other = {"A": "B", "B": "A", "tie": "A", "none": "A", "yes": "no", "no": "yes"}
    for k, r in enumerate(rows):
        if k < override:
            audit.review(ws, "ana", r["id"], other[r["label"]], sampling=r["sampling"])
        else:
            audit.confirm(ws, "ana", r["id"], sampling=r["sampling"])
    return rows


def test_report_side_by_side(demo_workspace, tmp_path):
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
    cert = certification.certify(ws, SXS)
    assert cert["n_audits"] == 12 and cert["agreement"]["estimate"] == pytest.approx(11 / 12)
    verdict = page.text("certification")
    assert f"(verdict: {cert['verdict']})" in verdict and "Rests on 12 audits from the random queue" in verdict
    agreement = page.table("certification")[0]
    assert (agreement["figure"], agreement["estimate"], agreement["audits"]) == (
        "agreement with people", "91.7%", "12")

    # The corrected ranking rests on the same audits; the bias panel on the judge's verdicts (both orders).
    assert "Rests on 12 audits from the random queue" in page.text("corrected")
    bias = {r["figure"]: r["value"] for r in page.table("bias")}
    pb = analysis.position_bias(ws, SXS)
    assert bias["verdicts"] == str(pb["n"]) and bias["answer pairs judged in both orders"] == str(pb["n_both_orders"])

    # What each switch changes: the override changed a comparison's outcome, not their number.
    switches = {r["switch"]: r["what it changes here"] for r in page.table("switches")}
    assert set(switches) == {"Use human overrides", "Leave out questions with a flagged reference"}
    comparisons = ranking["n_comparisons"]
    assert f"Comparisons: {comparisons:,} → " in switches["Use human overrides"]

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
    assert not re.search(r"\b[0-9a-f]{40}\b", html)
    letters = set(GREEK.findall(visible.split("What the symbols mean")[0]))
    assert letters >= {"β"}
    explained = {d for d in page.dt if len(d) == 1}
    assert letters <= explained, letters - explained
    # Self-contained: nothing fetched.
    assert "<script" not in html and not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)


def test_report_yes_no_without_audits(demo_workspace, tmp_path):
    ws = demo_workspace
    out = tmp_path / "yes-no.html"
    result = invoke("report", "--workspace", ws, "--judge", YES_NO, "--out", out)
    assert result.exit_code == 0, result.stderr
    page = Page(out.read_text(encoding="utf-8"))
    acc = analysis.accuracy(ws, YES_NO)
    shown = page.table("tiers")
    assert [r["system"] for r in shown] == [r["system"] for r in acc]
    assert [r["accuracy"] for r in shown] == [f"{100 * r['accuracy']:.1f}%" for r in acc]
    # By hand on the demo: nocontext's answers are never accepted; it sits alone in the last tier.
    assert (shown[-1]["system"], shown[-1]["accuracy"], shown[-1]["tier"]) == ("extractive-nocontext", "0.0%", "2")
    assert "(verdict: undecided)" in page.text("certification") and "Rests on 0 audits" in page.text("certification")
    assert page.table("certification")[0]["95% interval"] == "no audits of this yet"
    assert "No corrected ranking: no random or active audits" in page.text("corrected")
    assert "side-by-side judges" in page.text("bias")
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


@pytest.mark.browser
def test_report_opens_offline_in_chromium(demo_workspace, tmp_path):
    from playwright.sync_api import sync_playwright

    from .test_dashboard_browser import CHROMIUM, CHROMIUM_ARGS, _need_browser

    _need_browser()
    ws = demo_workspace
    audited(ws, SXS, 12)
    out = tmp_path / "report.html"
    out.write_text(report.build(ws, SXS, bootstrap=BOOT), encoding="utf-8")
    verdict = certification.certify(ws, SXS)["verdict"]
    ranking = analysis.ranking(ws, SXS, bootstrap=BOOT, seed=0)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            requested = []
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                          else (requested.append(route.request.url), route.abort()))
            context.set_offline(True)
            page = context.new_page()
            page.goto(out.as_uri())
            rows = page.locator("#tiers table tbody tr").evaluate_all(
                "trs => trs.map(tr => [...tr.cells].slice(0, 2).map(td => td.textContent))")
            assert rows == [[str(s["tier"]), s["system"]] for s in ranking["systems"]]
            assert page.locator("#tiers th").first.text_content() == "tier"
            shown = page.locator("#verdict").text_content()
            assert shown.startswith(f"{SXS}: ") and f"(verdict: {verdict})" in shown
            assert page.locator("#verdict").is_visible()
            assert requested == []
        finally:
            browser.close()
