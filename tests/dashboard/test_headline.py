"""The headline in words (lsqa.dashboard.headline): the wording rules as a pure function of the
figures, on extreme inputs (5 audits; a system that never wins; 1 book; 40 books; no bootstrap),
and the same text in ``lsqa rank --json`` and at the top of ``lsqa report``."""

from __future__ import annotations

import json
import re

from lsqa.dashboard import headline, report
from lsqa.stats.certification import NOT_REPLACEABLE, REPLACEABLE, UNDECIDED
from tests.dashboard.test_report import BOOT, SXS, YES_NO, Page, audited
from tests.support.bad_input import invoke

NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def pairwise(*, audits=5, verdict=UNDECIDED, needed=None, books=2, never_won=False, separated=False,
             fragility=None, p=(0.62, 0.551, 0.693), tiers=(1, 1, 2)) -> dict:
    systems = [{"system": name, "tier": tier, "rank": k + 1, "never_won": never_won and k == 2}
               for k, (name, tier) in enumerate(zip(("fullbook", "rag4k", "nocontext"), tiers, strict=False))]
    return {"judge": "sxs", "family": "pairwise", "systems": systems,
            "leader_vs_next": {"upper": "fullbook", "lower": "rag4k", "separated": separated,
                               "fragility": fragility, "estimate": p[0], "ci_low": p[1], "ci_high": p[2]},
            "certification": {"verdict": verdict, "n_audits": audits, "audits_needed": needed},
            "coverage": {"verdicts": 1234, "questions": 96, "books": books}}


def test_five_audits_say_undecided_with_the_count_and_what_would_decide():
    text = headline.words(pairwise(audits=5, needed=40))
    assert "undecided after 5 random audits; about 40 more would decide it" in text
    assert "and 5 audits." in text
    assert headline.words(pairwise(audits=0)).count("no random audits") == 1


def test_the_leader_the_top_tier_and_the_win_probability_with_its_interval():
    text = headline.words(pairwise())
    assert text.startswith("fullbook is ahead but shares the top tier with rag4k: the data do not tell them apart.")
    assert "fullbook beats rag4k 62.0% of the time (95% interval 55.1% – 69.3%; eq. 1)." in text
    assert "Their rank intervals overlap: which of the two is better is not settled." in text
    alone = headline.words(pairwise(tiers=(1, 2, 3), separated=True, fragility={"drop": 12, "flip": 7}))
    assert alone.startswith("fullbook is ahead, alone in the top tier.")
    assert "Their rank intervals are apart. Fragility: 12 verdicts removed would swap them; 7 verdicts relabelled would." \
        in alone


def test_a_system_that_never_wins_is_named_and_no_digits_beyond_three():
    text = headline.words(pairwise(never_won=True, p=(0.9999999, 0.99999, 1.0)))
    assert "nocontext never beat another system." in text
    assert "100% of the time (95% interval 100% – 100%" in text
    assert not re.search(r"\d[eE][-+]?\d", text)


def test_one_book_and_forty_books_and_certified_or_not():
    one = headline.words(pairwise(books=1, verdict=REPLACEABLE, audits=120))
    assert "from 1 book, and 120 audits." in one
    assert "The judge can stand in for people on this study (certified on 120 random audits)." in one
    forty = headline.words(pairwise(books=40, verdict=NOT_REPLACEABLE, audits=60))
    assert "Rests on 1,234 verdicts of sxs on 96 questions from 40 books, and 60 audits." in forty
    assert "The judge cannot stand in for people on this study (60 random audits show it)." in forty


def test_no_bootstrap_no_interval_and_a_yes_no_judge():
    f = pairwise(tiers=(None, None, None), p=(0.62, None, None))
    f["leader_vs_next"]["separated"] = None
    text = headline.words(f)
    assert "fullbook is ahead (no tiers: bootstrap rounds set to 0)." in text
    assert "62.0% of the time (no interval: bootstrap rounds set to 0; eq. 1)." in text
    binary = {"judge": "ais", "family": "binary",
              "systems": [{"system": "a", "tier": 1, "rank": 1, "never_won": False, "accuracy": 0.958,
                           "ci_low": 0.8779, "ci_high": 1.0},
                          {"system": "b", "tier": 2, "rank": 2, "never_won": True, "accuracy": 0.0,
                           "ci_low": 0.0, "ci_high": 0.0}],
              "certification": {"verdict": UNDECIDED, "n_audits": 0, "audits_needed": None},
              "coverage": {"verdicts": 48, "questions": 24, "books": 1}}
    text = headline.words(binary)
    assert text.startswith("a is ahead, alone in the top tier. b never had an answer accepted.")
    assert "a has 95.8% of its answers accepted (95% interval 87.8% – 100%), b 0% (0% – 0%)." in text


def test_the_same_headline_in_rank_json_and_the_report_and_every_figure_below(demo_workspace, tmp_path):
    ws = demo_workspace
    audited(ws, SXS, 5)
    res = invoke("rank", "--workspace", ws, "--judge", SXS, "--bootstrap", BOOT, "--json")
    assert res.exit_code == 0, res.stderr
    said = json.loads(res.stdout)["headline"]
    page = Page(report.build(ws, SXS, bootstrap=BOOT))
    top = page.text("headline")
    assert said in top and "undecided after 5 random audits" in said and "extractive-fullbook" in said
    assert re.search(r"\d+(\.\d+)?% of the time \(95% interval", said)
    # Every figure in the headline is one the report shows below it.
    below = " ".join(page.text(s) for s in page.sections if s != "headline")
    for figure in NUMBER.findall(said):
        assert re.search(rf"(?<![\d.,]){re.escape(figure)}(?![\d,]|\.\d)", below), figure
    # The yes/no judge too.
    yes_no = Page(report.build(ws, YES_NO, bootstrap=BOOT))
    text = yes_no.text("headline")
    below = " ".join(yes_no.text(s) for s in yes_no.sections if s != "headline")
    assert "of its answers accepted" in text
    for figure in NUMBER.findall(text.split("Every figure here")[0]):
        assert re.search(rf"(?<![\d.,]){re.escape(figure)}(?![\d,]|\.\d)", below), figure
