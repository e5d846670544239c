"""The answer in one paragraph: the headline at the top of the Leaderboard, of ``lsqa report`` and
in ``lsqa rank --json`` (``"headline"``), the same text on all three.

Rules, not a model, decide the words (:func:`words`, a pure function of :func:`figures`), and
every figure in it is one the page shows below it:

1. Who is ahead, and who shares the top tier (the 95% simultaneous rank intervals'
   tiers, ``lsqa.stats.rank_intervals``); a system that never won is named as such.
2. The leader against the next system: P(leader beats next), eq. 1 of the paper (§3.2), with its
   bootstrap interval (side-by-side judges); the two accuracies with their intervals (yes/no
   judges, Table 1).
3. How sure: whether the two are separated (rank intervals apart) and, where computed, how
   many verdicts removed or relabelled would swap them (``lsqa.stats.fragility``).
4. Whether the judge can stand in for people: the certification verdict in words with the
   audits it rests on (``lsqa.figures.certification.certify``).
5. What it rests on: verdicts, questions, books, audits, the judge.

Numbers go through ``lsqa.text.numbers`` (three significant digits, no exponent form).
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.figures import certification as figures_certification
from lsqa.stats import certification
from lsqa.stats.fragility import words as fragility_words
from lsqa.store import verdicts as verdicts_store
from lsqa.text import numbers
from lsqa.vocabulary import BINARY, PAIRWISE


def _plural(n: int, word: str) -> str:
    return f"{numbers.count(n)} {word}{'' if n == 1 else 's'}"


def figures(ws: Path, judge: str, *, ranking: dict | None = None, accuracy: list[dict] | None = None,
            queue: str | None = None, certified: dict | None = None) -> dict:
    """The figures the headline states, JSON-ready: from the judge's ranking (``ranking``: an
    ``analysis.ranking`` result) or accuracies (``accuracy``: ``analysis.accuracy`` rows, sorted by
    accuracy here), its certification (``certified``: the judge's ``certify`` result with ``queue``, when
    already computed) and what its verdicts cover."""
    f: dict = {"judge": judge, "family": PAIRWISE if ranking is not None else BINARY}
    if ranking is not None:
        f["systems"] = [{"system": s["system"], "tier": s.get("tier"), "rank": s["rank"],
                         "never_won": bool(s.get("note", "").startswith("never beat"))} for s in ranking["systems"]]
        adjacent = (ranking.get("adjacent") or [None])[0]
        if adjacent is not None:
            f["leader_vs_next"] = {"upper": adjacent["upper"], "lower": adjacent["lower"],
                                   "separated": adjacent["separated"], "fragility": adjacent.get("fragility"),
                                   **(adjacent.get("win_probability") or {"estimate": None, "ci_low": None,
                                                                          "ci_high": None})}
    else:
        from lsqa.stats.rank_intervals import for_accuracies

        rows = sorted(accuracy or [], key=lambda r: -r["accuracy"])
        ri = for_accuracies([r["correct"] for r in rows], [r["n"] for r in rows]) if rows else None
        f["systems"] = [{"system": r["system"], "tier": int(ri.tier[k]), "rank": k + 1, "never_won": r["correct"] == 0,
                         "accuracy": r["accuracy"], "ci_low": r["ci_low"], "ci_high": r["ci_high"]}
                        for k, r in enumerate(rows)]
    cert = certified if certified is not None else figures_certification.certify(ws, judge, queue=queue)
    f["certification"] = {"verdict": cert["verdict"], "n_audits": cert["n_audits"],
                          "audits_needed": cert["audits_needed"],
                          "agreement": {k: cert["agreement"].get(k) for k in ("estimate", "ci_low", "ci_high")}}
    with store.connect(ws) as con:
        f["coverage"] = verdicts_store.judge_coverage(con, judge)
    return f


def _who_leads(f: dict) -> str:
    systems = f["systems"]
    if not systems:
        return "Nothing is ranked yet."
    leader = systems[0]["system"]
    if len(systems) == 1:
        return f"Only {leader} is ranked."
    tier = systems[0]["tier"]
    if tier is None:
        return f"{leader} is ahead (no tiers: bootstrap rounds set to 0)."
    shared = [s["system"] for s in systems[1:] if s["tier"] == tier]
    text = (f"{leader} is ahead, alone in the top tier." if not shared else
            f"{leader} is ahead but shares the top tier with {', '.join(shared)}: the data do not tell them apart.")
    never = [s["system"] for s in systems if s["never_won"]]
    if never:
        what = "never beat another system" if f["family"] == PAIRWISE else "never had an answer accepted"
        text += f" {', '.join(never)} {what}."
    return text


def _pair(f: dict) -> str:
    if f["family"] == BINARY:
        systems = f["systems"]
        if len(systems) < 2:
            return ""
        a, b = systems[0], systems[1]
        return (f"{a['system']} has {numbers.percent(a['accuracy'])} of its answers accepted "
                f"(95% interval {numbers.interval(a['ci_low'], a['ci_high'], scale=100, suffix='%')}), "
                f"{b['system']} {numbers.percent(b['accuracy'])} "
                f"({numbers.interval(b['ci_low'], b['ci_high'], scale=100, suffix='%')}).")
    pair = f.get("leader_vs_next")
    if pair is None:
        return ""
    if pair["estimate"] is None:
        return f"How often {pair['upper']} beats {pair['lower']} cannot be estimated from these verdicts."
    ci = ("no interval: bootstrap rounds set to 0" if pair["ci_low"] is None
          else f"95% interval {numbers.interval(pair['ci_low'], pair['ci_high'], scale=100, suffix='%')}")
    text = f"{pair['upper']} beats {pair['lower']} {numbers.percent(pair['estimate'])} of the time ({ci}; eq. 1)."
    if pair["separated"] is not None:
        text += (" Their rank intervals are apart." if pair["separated"]
                 else " Their rank intervals overlap: which of the two is better is not settled.")
    if pair.get("fragility") is not None:
        text += f" Fragility: {fragility_words(pair['fragility'])}."
    return text


def _judge(f: dict) -> str:
    cert = f["certification"]
    n, verdict = cert["n_audits"], cert["verdict"]
    if verdict == certification.REPLACEABLE:
        return f"The judge can stand in for people on this study (certified on {_plural(n, 'random audit')})."
    if verdict == certification.NOT_REPLACEABLE:
        return f"The judge cannot stand in for people on this study ({_plural(n, 'random audit')} show it)."
    if not n:
        return "Whether the judge can stand in for people is not known yet: no random audits."
    needed = cert["audits_needed"]
    more = f"; about {numbers.count(needed)} more would decide it" if needed else ""
    return f"Whether the judge can stand in for people is undecided after {_plural(n, 'random audit')}{more}."


def _rests_on(f: dict) -> str:
    c = f["coverage"]
    return (f"Rests on {_plural(c['verdicts'], 'verdict')} of {f['judge']} on {_plural(c['questions'], 'question')} "
            f"from {_plural(c['books'], 'book')}, and {_plural(f['certification']['n_audits'], 'audit')}.")


def win_probability_text(p: dict | None) -> str:
    """P(upper beats lower) with its interval for a table cell: "62% (55% – 70%)"."""
    if not p or p.get("estimate") is None:
        return "cannot be estimated"
    if p.get("ci_low") is None:
        return f"{numbers.percent(p['estimate'])} (no interval: bootstrap rounds set to 0)"
    return f"{numbers.percent(p['estimate'])} ({numbers.interval(p['ci_low'], p['ci_high'], scale=100, suffix='%')})"


def basis_text(f: dict) -> str:
    """The judge's coverage and certification in one line, for the detail below the headline."""
    c, cert = f["coverage"], f["certification"]
    return (f"{f['judge']}: {_plural(c['verdicts'], 'decided verdict')} on {_plural(c['questions'], 'question')} from "
            f"{_plural(c['books'], 'book')}. Certification (Agreement page): {cert['verdict']}, on "
            f"{_plural(cert['n_audits'], 'random audit')}.")


def words(f: dict) -> str:
    """The headline from :func:`figures` (a pure function: the same figures give the same words)."""
    return " ".join(part for part in (_who_leads(f), _pair(f), _judge(f), _rests_on(f)) if part)


def for_judge(ws: Path, judge: str, **kw) -> dict:
    """``{"text", "figures"}`` of one judge (:func:`figures`'s keywords)."""
    f = figures(ws, judge, **kw)
    return {"text": words(f), "figures": f}


def for_board(ws: Path, board: dict) -> dict[str, dict]:
    """Judge → :func:`for_judge` of each judge on the Leaderboard (``leaderboard_view.leaderboard``), from
    the rankings and accuracies the page shows; judges with nothing ranked are left out."""
    out = {}
    for entry in board["rankings"]:
        if entry["result"] is not None:
            out[entry["judge"]] = for_judge(ws, entry["judge"], ranking=entry["result"])
    for entry in board["accuracy"]:
        if entry["rows"]:
            out[entry["judge"]] = for_judge(ws, entry["judge"], accuracy=entry["rows"])
    return out
