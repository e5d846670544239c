"""Which questions need the whole book (issue 31): classes checked against the verdicts of the
export, gains against accuracy on the same questions by hand, evidence spans against the book, the
harder subset exported, and the Corpus page's Long span tab in AppTest and a real browser.

Two workspaces: the small demo (NarrativeQA questions on two Potter tales, every answer judged), and
the same with questions generated about the entities of *The Tale of Tom Kitten* (§2, Appendix A.1),
answered by the three systems and judged by AutoAIS with quotes, built once per run."""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from lsqa import store
from lsqa.config.study import run_config_from_dict
from lsqa.figures import longspan as figures_longspan
from lsqa.stats import longspan
from lsqa.study import pipeline
from tests.conftest import built_once
from tests.support.apptest_text import as_read
from tests.support.bad_input import assert_refused, invoke, snapshot

GT, AIS = "lexical-gt", "lexical-autoais-fc"
SYSTEMS = {"no_context": "extractive-nocontext", "retrieval": "extractive-rag4k", "full": "extractive-fullbook"}


@pytest.fixture(scope="session")
def entity_template(demo_workspace_template, tmp_path_factory) -> Path:
    def build(folder: Path) -> None:
        ws = folder / "demo.duckdb"
        shutil.copy(demo_workspace_template, ws)
        config = run_config_from_dict({
            "documents": ["The Tale of Tom Kitten"], "questions": "generate", "seed": 0,
            "generation": {"model": "lsqa/template-questions", "entities": 4, "questions_per_entity": 2,
                           "context_tokens": 2000},
            "systems": [{"name": n, "model": "lsqa/extractive", "context": c}
                        for n, c in (("extractive-nocontext", "none"), ("extractive-rag4k", "retrieval:4000"),
                                     ("extractive-fullbook", "full"))],
            "judges": [{"name": AIS, "model": "lsqa/lexical-judge", "kind": "absolute", "context": "full"}],
        })
        pipeline.run(ws, config)

    return built_once(tmp_path_factory, "longspan-entities", build) / "demo.duckdb"


@pytest.fixture
def entity_ws(entity_template, tmp_path) -> Path:
    ws = tmp_path / "demo.duckdb"
    shutil.copy(entity_template, ws)
    return ws


def _by_hand(export: Path, judge: str) -> dict[str, dict]:
    """question → role → right, from the exported verdicts: an answer is right when any of the judge's
    verdicts on it says yes (a ground-truth judge rates against each reference, paper §5.2)."""
    rows = list(csv.DictReader((export / "verdicts.csv").open(encoding="utf-8")))
    role = {s: r for r, s in SYSTEMS.items()}
    out: dict[str, dict] = defaultdict(dict)
    for r in rows:
        if r["judge"] == judge and r["status"] == "ok" and r["system_a"] in role:
            key = role[r["system_a"]]
            out[r["question_id"]][key] = out[r["question_id"]].get(key, False) or r["label"] == "yes"
    return out


def _expected_class(right: dict) -> str | None:
    if set(right) != set(SYSTEMS):
        return None
    if right["no_context"]:
        return "memorised"
    if right["retrieval"]:
        return "retrieval"
    return "needs-full-book" if right["full"] else "unanswered"


@pytest.mark.parametrize("judge", [GT, AIS])
def test_each_question_is_classified_as_its_exported_verdicts_say(demo_workspace, tmp_path, judge):
    out = tmp_path / "export"
    assert invoke("export", "--workspace", demo_workspace, "--out", out).exit_code == 0
    with store.connect(demo_workspace) as con:  # one answer without its verdicts: that question is null
        gone = con.execute("SELECT question_id FROM judgments WHERE judge = ? AND system_a = ? ORDER BY question_id "
                           "LIMIT 1", [judge, SYSTEMS["retrieval"]]).fetchone()[0]
    result = _run_json(demo_workspace, "--judge", judge)
    hand = _by_hand(out, judge)
    hand[gone].pop("retrieval")
    _drop_verdicts(demo_workspace, judge, gone, SYSTEMS["retrieval"])
    result = _run_json(demo_workspace, "--judge", judge)
    assert {k: v for k, v in result["systems"].items()} == {k: [v] for k, v in SYSTEMS.items()}
    assert len(result["questions"]) == 24
    for q in result["questions"]:
        right = hand[q["question_id"]]
        assert [q["no_context_right"], q["retrieval_right"], q["full_right"]] == \
            [right.get("no_context"), right.get("retrieval"), right.get("full")], q["question_id"]
        assert q["class"] == _expected_class(right), q["question_id"]
    assert [q["class"] for q in result["questions"] if q["question_id"] == gone] == [None]
    assert sum(q["class"] is not None for q in result["questions"]) == 23


def _drop_verdicts(ws: Path, judge: str, question_id: str, system: str) -> None:
    with store.write(ws) as con:
        con.execute("DELETE FROM judgments WHERE judge = ? AND question_id = ? AND system_a = ?",
                    [judge, question_id, system])


def _run_json(ws: Path, *args) -> dict:
    r = invoke("longspan", "--workspace", ws, "--json", *args)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_gains_per_book_are_accuracy_differences_on_the_same_questions(demo_workspace):
    result = figures_longspan.analyse(demo_workspace, judge=AIS)
    for book in result["by_document"]:
        qs = [q for q in result["questions"] if q["document_id"] == book["document_id"]]
        for other in ("retrieval", "no_context"):
            both = [q for q in qs if q["full_right"] is not None and q[f"{other}_right"] is not None]
            by_hand = np.mean([q["full_right"] for q in both]) - np.mean([q[f"{other}_right"] for q in both])
            g = book[f"full_vs_{other}"]
            assert g["n"] == len(both) and g["gain"] == pytest.approx(by_hand)
            assert g["ci_low"] <= g["gain"] <= g["ci_high"]
        shares = book["classes"]
        assert sum(shares.values()) == pytest.approx(1.0)
    # The workspace-wide accuracy (lsqa accuracy) on these questions gives the same difference.
    from lsqa.figures.analysis import accuracy

    acc = {r["system"]: r["accuracy"] for r in accuracy(demo_workspace, AIS)}
    everything = longspan.gain(np.array([q["full_right"] for q in result["questions"]], dtype=float),
                               np.array([q["no_context_right"] for q in result["questions"]], dtype=float))
    assert everything["gain"] == pytest.approx(acc[SYSTEMS["full"]] - acc[SYSTEMS["no_context"]])
    assert result["by_document"][0]["full_vs_no_context"]["gain"] > 0.5  # the book matters here


def test_evidence_spans_are_where_the_quotes_and_mentions_are(entity_ws):
    result = figures_longspan.analyse(entity_ws, judge=AIS, )
    with store.connect(entity_ws) as con:
        tom, text, lo, hi = con.execute("SELECT id, full_text, clean_start, clean_end FROM documents WHERE title = "
                                        "'The Tale of Tom Kitten'").fetchone()
        evidence = con.execute("SELECT question_id, evidence FROM judgments WHERE judge = ? AND system_a IN "
                               "(SELECT unnest(?)) AND evidence <> '[]'", [AIS, list(SYSTEMS.values())]).fetchall()
        mentions = dict(((e, (a, b)) for e, a, b in con.execute(
            "SELECT entity_id, min(char_start), max(char_end) FROM mentions GROUP BY entity_id").fetchall()))
    quotes: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for qid, ev in evidence:
        for quote in json.loads(ev):
            quote = quote.strip().strip("'\"“”‘’").strip()  # a quote's own quotation marks are not the book's
            # the same words with any spacing or case: books wrap lines where a model's quote does not
            found = re.compile(r"\s+".join(map(re.escape, quote.split())), re.I).search(text, lo, hi)
            if found:
                quotes[qid].append(found.span())
    entity_questions = [q for q in result["questions"] if q["entity_id"]]
    assert len(entity_questions) >= 4 and {q["entity"] for q in entity_questions}
    checked = 0
    for q in (q for q in result["questions"] if q["document_id"] == tom):
        places = list(quotes.get(q["question_id"], []))
        if q["entity_id"]:
            places.append(mentions[q["entity_id"]])
        if not places:
            assert q["evidence_start"] is None
            continue
        frac = lambda pos: round(min(1, max(0, (pos - lo) / (hi - lo))), 4)  # noqa: E731
        assert q["evidence_start"] == pytest.approx(frac(min(p[0] for p in places)), abs=2e-4)
        assert q["evidence_end"] == pytest.approx(frac(max(p[1] for p in places)), abs=2e-4)
        checked += 1
    assert checked >= 10
    assert result["by_entity"] and all(e["entity"] and e["n_questions"] >= 1 for e in result["by_entity"])


def test_export_writes_the_needs_full_book_questions_with_provenance(entity_ws, tmp_path):
    out = tmp_path / "hard.jsonl"
    r = invoke("longspan", "--workspace", entity_ws, "--judge", AIS, "--export", out)
    assert r.exit_code == 0, r.output
    result = figures_longspan.analyse(entity_ws, judge=AIS, )
    expected = [q for q in result["questions"] if q["class"] == "needs-full-book"]
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["question_id"] for r in rows] == [q["question_id"] for q in expected]
    for row in rows:
        assert row["references"] and row["provenance"]["judge"] == AIS and row["provenance"]["study_config"]
        assert row["provenance"]["systems"]["full"] == ["extractive-fullbook"]
    assert_refused("export over an existing file", ["longspan", "--workspace", entity_ws, "--export", out],
                   workspace=entity_ws, must_name=("already exists",))
    assert invoke("longspan", "--workspace", entity_ws, "--judge", AIS, "--export", out, "--force").exit_code == 0


@pytest.mark.parametrize("args, names", [
    (["--judge", "lexical-sxs-fc"], ("rates pairs",)),
    (["--judge", "nobody"], ("no such judge",)),
    (["--full", "nope"], ("no such system",)),
    (["--evidence-judge", GT], ("cites no evidence",)),
    (["--export", "/nonexistent-folder/x.jsonl"], ("does not exist",)),
])
def test_what_longspan_refuses(demo_workspace, args, names):
    assert_refused(f"longspan {args}", ["longspan", "--workspace", demo_workspace, *args],
                   workspace=demo_workspace, must_name=names)


def test_two_systems_of_one_context_on_one_question_are_named_not_picked(demo_workspace):
    with store.write(demo_workspace) as con:
        con.execute("INSERT INTO systems (name, model, context) VALUES ('other-full', 'imported', 'full')")
        con.execute("INSERT INTO answers (question_id, system_name, text) SELECT question_id, 'other-full', text "
                    "FROM answers WHERE system_name = 'extractive-fullbook' LIMIT 1")
    before = snapshot(demo_workspace)
    with pytest.raises(longspan.LongSpanRefused, match="extractive-fullbook and other-full.*--full"):
        figures_longspan.analyse(demo_workspace)
    assert snapshot(demo_workspace) == before
    assert figures_longspan.analyse(demo_workspace, full="extractive-fullbook", )["systems"]["full"] == \
        ["extractive-fullbook"]


def test_the_corpus_page_long_span_tab(entity_ws, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("LSQA_WORKSPACE", str(entity_ws))
    at = AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=90)
    at.run()
    at.switch_page("pages/corpus.py")
    at.run()
    with store.connect(entity_ws) as con:
        tom = con.execute("SELECT id FROM documents WHERE title = 'The Tale of Tom Kitten'").fetchone()[0]
    at.selectbox(key="co_book").set_value(tom).run()
    at.session_state["co_tab"] = "Long span"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.info, [i.value for i in at.info]
    assert [m.label for m in at.metric] == ["Full book vs retrieval", "Full book vs no context"]
    table = next(d.value for d in at.dataframe if "class" in d.value.columns)
    assert set(table["class"]) <= {*longspan.CLASSES, "not classified"} and len(table) >= 12
    assert at.selectbox(key="co_ls_entity").options  # the entities its questions are about
    captions = as_read(" ".join(c.value for c in at.caption))
    assert re.search(r"of \d+ classified questions", captions)
    # Which figure is which: the metrics are the judge's; no audits here, so the corrected one says judge only.
    assert captions.count("Judge-only figure") == 2 and captions.count("Corrected by audits: judge only") == 2
    result = figures_longspan.analyse(entity_ws, documents=[tom])
    g = result["by_document"][0]["full_vs_retrieval"]
    assert at.metric[0].value == f"{g['gain']:+.0%} (95% CI {g['ci_low']:+.0%} to {g['ci_high']:+.0%}), {g['n']} questions"
    assert not any("book" in d.value.columns for d in at.dataframe)   # built only when opened
    at.session_state["co_ls_all"] = True   # open "All books": every book side by side, held together
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    books = next(d.value for d in at.dataframe if "book" in d.value.columns)
    everything = figures_longspan.analyse(entity_ws)
    assert list(books["book"]) == [d["title"] for d in everything["by_document"]] and len(books) >= 2
    assert everything["simultaneous"]["by_document"]["statement"] in as_read(" ".join(c.value for c in at.caption))


@pytest.mark.browser
def test_the_long_span_tab_in_a_browser_draws_the_chain_and_the_spans(entity_template, tmp_path):
    from tests.support.browser import chromium, expect, need_browser, wait_idle
    from tests.support.streamlit_server import serve

    need_browser()
    ws = tmp_path / "demo.duckdb"
    shutil.copy(entity_template, ws)
    with store.connect(ws) as con:
        tom = con.execute("SELECT id FROM documents WHERE title = 'The Tale of Tom Kitten'").fetchone()[0]
    expected = figures_longspan.analyse(ws, documents=[tom], )
    spans = [q for q in expected["questions"] if q["evidence_start"] is not None]
    with serve(ws) as url, chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/corpus?book={tom}&tab=long-span")
        chart = page.locator('[data-testid="stPlotlyChart"]')
        expect(chart).to_be_visible(timeout=60000)
        wait_idle(page)
        legend = chart.locator(".legendtext").evaluate_all("els => els.map(e => e.textContent)")
        assert any(t.startswith("mentions of ") for t in legend), legend
        # one drawn line per question with an evidence span (each class a trace of segments)
        assert sum(1 for t in legend if not t.startswith("mentions of ")) == len({q["class"] for q in spans})
        points = chart.locator(".scatterlayer .trace .points path").count()
        mentions = longspan_view_mentions(ws, tom, expected)
        assert points >= 2 * len(spans) + mentions
        expect(page.get_by_text(re.compile(r"of \d+ classified questions"))).to_be_visible()


def longspan_view_mentions(ws: Path, doc: str, result: dict) -> int:
    """How many mention ticks the chart draws: the first entity's chain (the one the tab shows first)."""
    from lsqa.dashboard import longspan_view

    first = next(iter(longspan_view.book(ws, doc)["entities"]))
    return len(figures_longspan.mention_fractions(ws, doc, first))


def test_an_audit_item_links_to_its_book_long_span_tab(entity_ws, monkeypatch):
    """From the Audit item to the question's chain and span (issue 31's "evidence chain link"): the
    link the item's caption carries opens the Corpus page on that book's Long span tab."""
    from streamlit.testing.v1 import AppTest

    from lsqa import audit

    monkeypatch.setenv("LSQA_WORKSPACE", str(entity_ws))
    app = str(Path(__file__).parents[2] / "app.py")
    at = AppTest.from_file(app, default_timeout=90)
    at.session_state["annotator"] = "ana"
    at.run()
    at.switch_page("pages/audit.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    from tests.support.audit_desk import desk_html

    shown = desk_html(at)
    link = re.search(r'href="(corpus\?book=([^&"]+)&amp;tab=long-span)"', shown)
    item = audit.item(entity_ws, audit.queue(entity_ws, audit.Filters(), "ana")["rows"][0]["id"])
    assert link.group(2) == item["document_id"] and item["question"]  # the book of the item on screen
    corpus = AppTest.from_file(app, default_timeout=90)
    corpus.query_params["book"] = link.group(2)
    corpus.query_params["tab"] = "long-span"
    corpus.run()
    corpus.switch_page("pages/corpus.py")
    corpus.run()
    assert not corpus.exception, [e.value for e in corpus.exception]
    assert [m.label for m in corpus.metric] == ["Full book vs retrieval", "Full book vs no context"], shown


# ------------------------------------------------------------------ the gains' intervals

def _pairs(a: int, b: int, c: int, d: int) -> tuple[list[bool], list[bool]]:
    """A paired table as two answer columns: a both right, b only the first, c only the second, d neither."""
    return [True] * (a + b) + [False] * (c + d), [True] * a + [False] * b + [True] * c + [False] * d


@pytest.mark.parametrize("method, low, high", [
    ("tango", -0.1240, -0.0054), ("newcombe", -0.1186, -0.0046), ("agresti-min", -0.1182, -0.0045)])
def test_paired_intervals_reproduce_the_published_example(method, low, high):
    """Complete response before and after consolidation therapy (Cavo et al. 2012), the worked example of
    Fagerland, Lydersen & Laake (2014, Stat Med 33:2850; 2017 book ch. 8): 59 both, 6 before only, 16
    after only, 80 neither; their published limits (as their R package contingencytables prints them)."""
    from lsqa.stats.ranking import paired_difference_ci

    ci = paired_difference_ci(*_pairs(59, 6, 16, 80), method=method)
    assert ci.estimate == pytest.approx(-10 / 161)
    assert (round(ci.low, 4), round(ci.high, 4)) == (low, high)


def test_tango_limits_are_where_the_score_statistic_meets_z_and_never_collapse():
    from scipy.stats import norm

    from lsqa.stats.ranking import _tango_statistic, paired_difference_ci

    z = norm.ppf(0.975)
    for table in [(3, 2, 0, 0), (1, 0, 3, 1), (0, 4, 1, 2), (7, 1, 1, 1)]:
        ci = paired_difference_ci(*_pairs(*table))
        n, b, c = sum(table), table[1], table[2]
        assert _tango_statistic(ci.low, b, c, n) == pytest.approx(z, abs=1e-6)
        assert _tango_statistic(ci.high, b, c, n) == pytest.approx(-z, abs=1e-6)
    for n in range(1, 6):   # every pair concordant, all right or all wrong: limits ∓z²/(n + z²), never one point
        for table in [(n, 0, 0, 0), (0, 0, 0, n), (n // 2, 0, 0, n - n // 2)]:
            ci = paired_difference_ci(*_pairs(*table))
            assert ci.estimate == 0 and ci.high - ci.low > 0.4
            assert (ci.low, ci.high) == pytest.approx((-z * z / (n + z * z), z * z / (n + z * z)))
            g = longspan.gain(np.array(_pairs(*table)[0], float), np.array(_pairs(*table)[1], float))
            assert g["ci_high"] - g["ci_low"] > 0.4 and g["too_few_questions"] and "too few questions" in g["note"]


def test_the_old_bootstrap_misses_at_five_questions_and_tango_holds():
    """A modest run of bench/bench_longspan_intervals.py: 5 questions, a true gain of 0.05, 300 worlds per
    discordant rate (seed stated there): the percentile bootstrap used before covers far below 95% and
    is often a single point; Tango's interval covers at least 93% in every setting, never a point."""
    from bench.bench_longspan_intervals import exact_min_coverage, limits, simulate

    lim = limits(5)
    sim = simulate(5, 0.05, 300, 200, lim, cell=0)
    assert sim["bootstrap"]["min"] < 0.5 and sim["bootstrap"]["zero_width"] > 0.2
    assert sim["tango"]["min"] >= 0.93 and sim["tango"]["zero_width"] == 0
    assert exact_min_coverage(10, 0.0, limits(10), 0.6)["tango"] >= 0.93   # exact, over the nuisance grid


# ------------------------------------------------------------------ corrected by audits, JSON, page

def _audit_randomly(ws: Path, judge: str, *, rate: float, flip: set[int] = frozenset()) -> int:
    """Review every verdict a random queue draws; items whose position is in ``flip`` get the other label."""
    from lsqa import audit
    from lsqa.figures import audits

    q = audits.queue(ws, judge, "random", rate=rate, limit=10_000)
    for k, row in enumerate(q["rows"]):
        label = {"yes": "no", "no": "yes"}[row["label"]] if k in flip else row["label"]
        audit.review(ws, "ann", row["id"], label, sampling=row["sampling"])
    return len(q["rows"])


def test_a_gain_corrected_by_audits_that_agree_with_the_judge_is_the_judge_gain(demo_workspace):
    before = figures_longspan.analyse(demo_workspace, judge=AIS)
    for book in before["by_document"]:
        c = book["full_vs_retrieval"]["corrected"]
        assert c["figure"] == "judge-only" and c["gain"] is None and c["note"].startswith("judge only")
    assert _audit_randomly(demo_workspace, AIS, rate=0.7) > 10
    after = figures_longspan.analyse(demo_workspace, judge=AIS)
    assert after["audits"]["design"] == "random" and after["audits"]["n_usable_audits"] > 10
    corrected = 0
    for book in after["by_document"]:
        for other in ("retrieval", "no_context"):
            g = book[f"full_vs_{other}"]
            c = g["corrected"]
            if c["n_audited"]:
                corrected += 1
                assert c["figure"] == "corrected" and c["gain"] == pytest.approx(g["gain"], abs=1e-12)
                if c["ci_low"] is not None:
                    assert c["ci_low"] <= c["gain"] <= c["ci_high"]
    assert corrected >= 2


def test_a_gain_corrected_by_audits_that_disagree_moves_toward_the_people(demo_workspace):
    """The people say no to full-book answers the judge accepted: the corrected gain over the audited
    questions falls below the judge's."""
    from lsqa.figures import audits

    q = audits.queue(demo_workspace, AIS, "random", rate=1.0, limit=10_000)
    flip = {k for k, row in enumerate(q["rows"]) if row["system_a"] == SYSTEMS["full"] and row["label"] == "yes"}
    assert flip
    _audit_randomly(demo_workspace, AIS, rate=1.0, flip=flip)
    result = figures_longspan.analyse(demo_workspace, judge=AIS)
    for book in result["by_document"]:
        g = book["full_vs_no_context"]
        if any(q["document_id"] == book["document_id"] and q["full_right"] for q in result["questions"]):
            assert g["corrected"]["method"] == "human-only"   # every verdict audited: the people's figure
            assert g["corrected"]["gain"] < g["gain"]


def test_longspan_json_names_which_figure_is_which(entity_ws):
    result = _run_json(entity_ws, "--judge", AIS)
    k = len(result["by_document"])
    together = result["simultaneous"]["by_document"]
    assert together["method"] == "bonferroni" and together["k"] == k and together["familywise_level"] == 0.95
    assert together["interval_level"] == pytest.approx(1 - 0.05 / k)
    assert result["simultaneous"]["by_entity"]["k"] == len(result["by_entity"])
    assert result["audits"] == {"design": "", "n_usable_audits": 0}
    for group in result["by_document"] + result["by_entity"]:
        for other in ("retrieval", "no_context"):
            g = group[f"full_vs_{other}"]
            assert {"gain", "ci_low", "ci_high", "n"} <= set(g)             # the fields it always had
            assert g["figure"] == "judge-only" and g["interval"] == "tango score" and g["level"] == 0.95
            assert g["too_few_questions"] == (g["n"] < 10)
            if g["n"]:
                assert g["ci_low"] < g["ci_high"]
                assert g["simultaneous_ci_low"] <= g["ci_low"] and g["ci_high"] <= g["simultaneous_ci_high"]
            assert g["corrected"]["figure"] == "judge-only" and g["corrected"]["gain"] is None
    plain = invoke("longspan", "--workspace", entity_ws, "--judge", AIS)
    assert plain.exit_code == 0 and "hold together at 95%" in plain.stdout and "judge only" in plain.stdout
