"""The corrected figures in words: the Leaderboard's "corrected by audits" section, ``lsqa report``'s,
and the rank flips as display rows (the figures: ``lsqa.figures.corrected``; the math:
``lsqa.stats.corrected``). Intervals are worded by ``lsqa.text.numbers``: fewer than FEW_AUDITS
audits say "too few audits to say" instead of bounds the audits cannot hold (bench_corrected.py).
"""

from __future__ import annotations

from pathlib import Path

from lsqa.figures import corrected
from lsqa.stats import rank_intervals
from lsqa.stats.corrected import FEW_AUDITS
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.text import numbers
from lsqa.vocabulary import CORRECTED, JUDGE_ONLY, OVERRIDES, PAIRWISE


def _fmt_interval(low: float | None, high: float | None, *, percent: bool = False, n_audits: int | None = None) -> str:
    """A CI for a table cell (``lsqa.text.numbers.interval``): a strength's, or with ``percent`` an
    accuracy's in %. With ``n_audits`` (a corrected interval) fewer than FEW_AUDITS audits say
    "too few audits to say" instead of bounds the audits cannot hold (bench_corrected.py)."""
    return numbers.interval(low, high, limit=None if percent else numbers.STRENGTH_LIMIT, scale=100 if percent else 1,
                            n_audits=n_audits, audits_needed=None if n_audits is None else FEW_AUDITS,
                            unbounded="the audits cannot bound this strength")


def _summary(result: dict) -> str:
    used = result["n_usable_audits"]
    text = (f"{used} usable audits ({result['design']} queue)" if used else "no usable audits yet") + \
        f"; {result['n_reviews_not_used']} other reviews not used (priority queue or another design)."
    if "lam" in result and used:
        text += (f" How much the corrected figures lean on the judge's verdicts: {numbers.figure(result['lam'])} "
                 "(0 = on the audits alone, 1 = on every verdict, corrected by the audits).")
    reviewed = result.get("n_overridden", 0)
    text += f" Overrides ranking: {reviewed} reviewed verdicts (any queue) in place of the judge's." if reviewed \
        else " Nothing reviewed yet: the overrides ranking is the judge's."
    if not result.get("flips"):
        text += " No system changes places between the judge-only, corrected and overrides rankings."
    if result.get("estimand") == "bradley-terry":
        text += " " + JUDGE_ONLY_SAME_AS_TABLE
    return text


# What the judge-only columns of a corrected ranking share with the ranking table, and what not.
JUDGE_ONLY_SAME_AS_TABLE = (
    "Judge-only strengths and ranks here are the ranking table's with the switches off (the judge's labels, "
    "all questions: every verdict one comparison, a tie half a win, 'none' left out, strengths scaled to a "
    "geometric mean of 1). Only their intervals differ: here analytic, like the corrected ones, so that the "
    "two compare; in the ranking table, a bootstrap.")


def ranking_section(result: dict) -> dict:
    """Display rows of a corrected ranking: side by side, adjacent pairs, rank flips."""
    n = len(result["systems"])
    audits = result["n_usable_audits"]
    table = [{"tier": r["tier"], "system": r["system"],
              f"{CORRECTED} ranks (95%)": rank_intervals.ranks_text(r["rank_low"], r["rank_high"], n),
              f"{JUDGE_ONLY} ranks (95%)": rank_intervals.ranks_text(r["judge_only_rank_low"],
                                                                    r["judge_only_rank_high"], n),
              "rank": r["rank"], f"{CORRECTED} strength": numbers.figure(r["strength"]),
              f"{CORRECTED} 95% CI": _fmt_interval(r["ci_low"], r["ci_high"], n_audits=audits),
              f"{JUDGE_ONLY} rank": r["judge_only_rank"], f"{JUDGE_ONLY} strength": numbers.figure(r["judge_only_strength"]),
              f"{JUDGE_ONLY} 95% CI": _fmt_interval(r["judge_only_ci_low"], r["judge_only_ci_high"]),
              "verdicts": r["n"], "audited": r["n_audited"]} for r in result["systems"]]
    adjacent = [{"pair": f"{a['upper']} > {a['lower']}", "separated": _separated_text(a, result["n_usable_audits"]),
                 "strength ratio (95%, simultaneous)": _ratio_text(a, result["n_usable_audits"]),
                 AUDITS_TO_SEPARATE: (
                     "—" if a["separated"] else "not within these verdicts" if a["more_audits_needed"] is None
                     else f"about {numbers.count(a['more_audits_needed'])} to tell {a['upper']} from {a['lower']}")}
                for a in result["adjacent"]]
    return {"table": table, "adjacent": adjacent, "flips": flip_rows(result["flips"])}


# What the adjacent pairs' audit count decides: this pair's order, not whether the judge can replace
# people (the certification's own count, ``certification.audits_to_decide``).
AUDITS_TO_SEPARATE = "more random audits to tell the pair apart (not to certify the judge)"


def _separated_text(pair: dict, n_audits: int) -> str:
    """"yes" only when the rank intervals shown do not overlap and the audits are enough to trust them."""
    if pair.get("too_few_audits"):
        return f"too few audits to say ({n_audits}; at least {FEW_AUDITS} needed)"
    return "yes" if pair["separated"] else "no"


def _ratio_text(pair: dict, n_audits: int) -> str:
    """The strength ratio's interval, or why there is none: too few audits, or past RATIO_LIMIT."""
    if "ratio_low" not in pair:
        return "—"
    return numbers.interval(pair["ratio_low"], pair["ratio_high"], limit=numbers.RATIO_LIMIT, suffix="×",
                            n_audits=n_audits, audits_needed=FEW_AUDITS if pair.get("too_few_audits") else None,
                            unbounded=f"{pair['upper']} may be far stronger or weaker than {pair['lower']}")


def _mover_text(m: dict, view: str, binary: bool, question=None, escape=None) -> str:
    """One mover in words; ``question(m)`` renders its question (default: the text, escaped) and
    ``escape`` every other piece (default: none), for a Markdown table whose questions are links."""
    esc = escape or (lambda x: x)
    q = question(m) if question else esc(m.get("question", m["question_id"]))
    where = q if binary else q + esc(f" ({m['system_a']} vs {m['system_b']})")
    if view == OVERRIDES and m["overridden"]:
        return where + esc(": " + ", ".join(f"judge {v['judge_label']} → human {v['human_label']}"
                                            for v in m["overridden"]))
    if binary:
        return where + esc(f" on {m['system_a']}: judge {'yes' if m['judge_outcome'] else 'no'} → "
                           f"human {'yes' if m['human_outcome'] else 'no'}")
    return where + esc(f": judge {_outcome_words(m['judge_outcome'], m)} → human {_outcome_words(m['human_outcome'], m)}")


def _outcome_words(value: float, m: dict) -> str:
    """A side-by-side outcome (1 = system_a better, 0 = system_b, 0.5 = tie or both wrong) in words."""
    if value >= 0.75:
        return f"{m['system_a']} better"
    if value <= 0.25:
        return f"{m['system_b']} better"
    return "tie or both wrong"


def _order(s: str, t: str, ranks: dict[str, int]) -> str:
    if ranks[s] == ranks[t]:
        return f"{s} = {t}"
    return " > ".join(sorted((s, t), key=ranks.get))


def flip_rows(flips: list[dict], *, binary: bool = False, question=None, escape=None) -> list[dict]:
    """One display row per rank flip: the pair's order in each view and, for the corrected and the
    overrides views, the audited verdicts that pulled hardest towards that view's order.

    ``question(mover)``: how a mover's question is shown (default: its text); ``escape``: applied to
    every other piece of text (default: none) -- the Leaderboard's Markdown table links each question
    to its verdict on the Audit page (``leaderboard_view.flip_markdown``)."""
    esc = escape or (lambda x: x)
    rows = []
    for f in flips:
        s, t = f["systems"]
        row = {"systems": esc(f"{s} / {t}"),
               **{f"{view} order": esc(_order(s, t, ranks)) for view, ranks in f["ranks"].items()}}
        for view, label in ((CORRECTED, "random audits that moved it"), (OVERRIDES, "overrides that moved it")):
            movers = f["moved_by"].get(view)
            if movers is None:
                row[label] = esc("—")
                continue
            text = (esc("; ").join(_mover_text(m, view, binary, question, escape) for m in movers)
                    or esc("none pull this way"))
            more = f["n_pushing"][view] - len(movers)
            row[label] = text + (esc(f" (and {more} more)") if more > 0 else "")
        rows.append(row)
    return rows


def accuracy_section(result: dict) -> dict:
    n = len(result["systems"])
    table = [{"tier": r["tier"], "system": r["system"],
              f"{CORRECTED} ranks (95%)": rank_intervals.ranks_text(r["rank_low"], r["rank_high"], n),
              f"{JUDGE_ONLY} ranks (95%)": rank_intervals.ranks_text(r["judge_only_rank_low"],
                                                                    r["judge_only_rank_high"], n),
              f"{CORRECTED} accuracy %": numbers.figure(100 * r["estimate"]),
              f"{CORRECTED} 95% CI %": _fmt_interval(r["ci_low"], r["ci_high"], percent=True, n_audits=r["n_audited"]),
              f"{JUDGE_ONLY} accuracy %": numbers.figure(100 * r["judge_only"]),
              f"{JUDGE_ONLY} 95% CI %": _fmt_interval(r["judge_only_ci_low"], r["judge_only_ci_high"], percent=True),
              "verdicts": r["n"], "audited": r["n_audited"]} for r in result["systems"]]
    return {"table": table, "adjacent": [], "flips": flip_rows(result["flips"], binary=True)}


@kept_while_unchanged()
def board(workspace: Path, judges: dict[str, list[str]]) -> list[dict]:
    """The Leaderboard's "corrected by audits" section: one entry per judge (``judges`` by family)."""
    out = []
    for fam, names in judges.items():
        for judge in names:
            entry = {"judge": judge, "estimand": "bradley-terry" if fam == PAIRWISE else "accuracy",
                     "error": "", "warnings": [], "summary": "", "table": [], "adjacent": [], "flips": [],
                     "raw_flips": []}
            try:
                if fam == PAIRWISE:
                    result = corrected.corrected_ranking(workspace, judge)
                    entry.update(ranking_section(result))
                else:
                    result = corrected.corrected_accuracy(workspace, judge)
                    entry.update(accuracy_section(result))
            except ValueError as exc:
                entry["error"] = str(exc)
                out.append(entry)
                continue
            entry.update(summary=_summary(result), warnings=result["warnings"], raw_flips=result["flips"])
            out.append(entry)
    return out
