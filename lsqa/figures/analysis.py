"""Workspace → statistics: the numbers the dashboard, `lsqa rank/agreement --workspace` and exports show.

Verdicts are read with the label the statistics should use (the judge's, or a human override,
optionally without questions whose reference is flagged; ``lsqa.store.verdicts``), turned into
plain rows and handed to ``lsqa.stats.reports`` / ``lsqa.stats.agreement``. Nothing here is cached: every call
reflects the reviews and flags stored at that moment.

Items. Yes/no verdicts (absolute, ground truth, similarity) rate one answer: item =
(question, system). Side-by-side verdicts rate a pair: item = (question, system_a, system_b), with
labels in system terms, so verdicts seen in different orders are comparable. A ground-truth rater
that used both references says yes if either says yes (paper §5.2); a judge that saw both orders
is represented by the order ``ab`` (``position_bias`` reports how much the other order differs).
Agreement with people is per verdict instead (``rating_rows``): a person reviews one verdict (one
reference, one order), and is compared with the judge's label on it and with other people's on it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from lsqa import store, vocabulary
from lsqa.errors import NoVerdicts
from lsqa.stats.reports import agreement_table, rank_counts
from lsqa.store import results as results_store
from lsqa.store import verdicts as verdicts_store
from lsqa.vocabulary import BINARY, HUMAN, PAIRWISE, item_key


def _collapse(rows: list[dict], label_key: str = "label") -> dict[str, str]:
    """One label per item: either reference counts for yes; order 'ab' represents both orders."""
    by_item: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r[label_key] is not None:
            by_item[item_key(r)].append(r)
    out = {}
    for key, group in by_item.items():
        if group[0]["family"] == BINARY:
            out[key] = "yes" if any(g[label_key] == "yes" for g in group) else group[0][label_key]
        else:
            group.sort(key=lambda g: g["shown_order"])
            out[key] = group[0][label_key]
    return out


def _verdicts(con, judge: str, *, family=None, use_overrides=False, exclude_flagged=False) -> list[dict]:
    return verdicts_store.effective_verdicts(con, judge=judge, family=family, use_overrides=use_overrides,
                                             exclude_flagged=exclude_flagged)


# ------------------------------------------------------------------------------------ rankings

def judges_by_family(workspace: Path) -> dict[str, list[str]]:
    """Judge names: ``pairwise`` (side by side, rankable) and ``binary`` (yes/no, accuracy)."""
    with store.connect(workspace) as con:
        rows = results_store.judges(con)
    out: dict[str, list[str]] = {f: [] for f in vocabulary.FAMILIES}
    for r in rows:
        if r["judge"] not in out[r["family"]]:
            out[r["family"]].append(r["judge"])
    return out


def comparison_rows(workspace: Path, judge: str, *, use_overrides: bool = False, exclude_flagged: bool = False) -> list[dict]:
    """A side-by-side judge's verdicts as ``system_a, system_b, winner, question_id`` rows."""
    with store.connect(workspace) as con:
        rows = _verdicts(con, judge, family=PAIRWISE, use_overrides=use_overrides,
                         exclude_flagged=exclude_flagged)
    return [{"system_a": r["system_a"], "system_b": r["system_b"], "winner": r["label"],
             "question_id": r["question_id"]} for r in rows]


def comparison_groups(workspace: Path, judge: str) -> list[dict]:
    """A side-by-side judge's verdicts counted once for every switch (``lsqa.store.verdicts.comparison_groups``):
    what :func:`comparison_counts`, :func:`ranking` and :func:`pair_counts` take as ``groups`` so that
    one report reads the million verdicts once for its judge-only, overrides and flagged-left-out rankings."""
    with store.connect(workspace) as con:
        return verdicts_store.comparison_groups(con, judge)


def comparison_counts(workspace: Path, judge: str, *, use_overrides: bool = False, exclude_flagged: bool = False,
                      by_question: bool = False, groups: list[dict] | None = None):
    """``comparison_rows`` counted for Bradley-Terry (``lsqa.stats.ranking.ComparisonCounts``, with the
    per-question cells when ``by_question``), or None when there are none. Counted in SQL: a
    million verdicts are a few thousand counts, never a Python object each; the counts are those of
    ``count_comparisons`` on ``comparison_rows``, to the bit. Rows that function refuses (a system
    against itself, a label that is not a winner) are read one by one, so that its error is the one
    raised (ValueError). ``groups``: the judge's :func:`comparison_groups`, when already read."""
    import numpy as np

    from lsqa.stats.ranking import count_comparisons, counts_from_cells

    options = dict(use_overrides=use_overrides, exclude_flagged=exclude_flagged, by_question=by_question)
    if groups is not None and not by_question:
        cells = verdicts_store.comparison_counts(None, judge, **options, groups=groups)
    else:
        with store.connect(workspace) as con:
            cells = verdicts_store.comparison_counts(con, judge, **options, groups=groups)
    if cells is None:
        return None
    codes = _winner_codes(cells["labels"])
    if codes is None or cells["same_system"]:
        rows = comparison_rows(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged)
        return count_comparisons([r["system_a"] for r in rows], [r["system_b"] for r in rows],
                                 [r["winner"] for r in rows],
                                 [str(r["question_id"]) for r in rows] if by_question else None)
    t = cells["rows"]
    code = codes[t["label"]]
    if not by_question:
        return counts_from_cells(cells["systems"], t["a"], t["b"], code, t["n"])
    # The questions resampled are those with a comparison that is not 'none', in the rows' order.
    kept = np.unique(t["q"][code != 3])
    return counts_from_cells(cells["systems"], t["a"], t["b"], code, t["n"],
                             np.searchsorted(kept, t["q"]), [cells["questions"][k] for k in kept])


def pair_counts(workspace: Path, judge: str, *, groups: list[dict] | None = None) -> dict[tuple[str, str], int]:
    """The system pairs a side-by-side judge compared (names sorted), with how many of its decided
    verdicts ('none' included) are on each: ``comparison_rows`` counted per pair, in SQL (``groups``:
    the judge's :func:`comparison_groups`, when already read)."""
    if groups is None:
        groups = comparison_groups(workspace, judge)
    cells = verdicts_store.comparison_counts(None, judge, groups=groups)
    out: dict[tuple[str, str], int] = {}
    if cells is None:
        return out
    names, t = cells["systems"], cells["rows"]
    for a, b, n in zip(t["a"].tolist(), t["b"].tolist(), t["n"].tolist(), strict=False):
        pair = tuple(sorted((names[a], names[b])))
        out[pair] = out.get(pair, 0) + n
    return out


def _winner_codes(labels: list):
    """Index into ``WINNERS`` of each stored label, or None when one is not a winner."""
    import numpy as np

    from lsqa.vocabulary import WINNERS, normalize_winner

    try:
        return np.array([WINNERS.index(normalize_winner(label)) for label in labels], dtype=np.int64)
    except ValueError:
        return None


def ranking(workspace: Path, judge: str, *, use_overrides: bool = False, exclude_flagged: bool = False,
            bootstrap: int = 1000, seed: int = 0, by_question: bool = False, anchor: str | None = None,
            tie_model: str = "half", level: float = 0.95, groups: list[dict] | None = None) -> dict:
    """Bradley-Terry strengths e^β with bootstrap CIs from one judge's side-by-side verdicts (§3.2),
    counted in SQL (``comparison_counts``): what ``rank_table`` gives on ``comparison_rows``.
    ``groups``: the judge's :func:`comparison_groups`, when already read (one report, several switches)."""
    data = comparison_counts(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged,
                             by_question=by_question, groups=groups)
    if data is None:
        raise NoVerdicts(f"judge {judge!r} has no decided side-by-side verdicts in this workspace")
    result = rank_counts(data, bootstrap=bootstrap, seed=seed, by_question=by_question, anchor=anchor,
                         tie_model=tie_model, level=level)
    result["judge"] = judge
    return result


def answer_labels(workspace: Path, judge: str, *, use_overrides: bool = False,
                  exclude_flagged: bool = False) -> dict[tuple[str, str], str]:
    """A yes/no judge's one label per answer, ``(question id, system) → yes | no``: what accuracy
    counts (either reference's yes, paper §5.2) and what the long-span classes read."""
    with store.connect(workspace) as con:
        rows = _verdicts(con, judge, family=BINARY, use_overrides=use_overrides, exclude_flagged=exclude_flagged)
    return _collapse(rows)


def accuracy(workspace: Path, judge: str, *, use_overrides: bool = False, exclude_flagged: bool = False,
             method: str = "normal") -> list[dict]:
    """Share of answers a yes/no judge accepts, per system, with a 95% CI (paper Table 1)."""
    from lsqa.stats.ranking import accuracy_ci

    labels = answer_labels(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged)
    with store.connect(workspace) as con:
        contexts = {s["name"]: s["context"] for s in results_store.list_systems(con)}
    per_system: dict[str, list[str]] = defaultdict(list)
    for key, label in labels.items():
        per_system[key[1]].append(label)
    out = []
    for system, labels in sorted(per_system.items()):
        ci = accuracy_ci(sum(lab == "yes" for lab in labels), len(labels), method=method)
        out.append({"system": system, "context": contexts.get(system, ""), "n": ci.n, "correct": ci.k,
                    "accuracy": ci.p, "ci_low": ci.low, "ci_high": ci.high, "half_width": ci.half_width})
    return sorted(out, key=lambda r: -r["accuracy"])


# ----------------------------------------------------------------------------------- agreement

def parse_human_rater(rater: str) -> tuple[str | None, str | None] | None:
    """``human[:<annotator>][@<judge>]`` → (annotator or None, judge or None); None for a judge name."""
    if rater != HUMAN and not rater.startswith((HUMAN + ":", HUMAN + "@")):
        return None
    rest = rater[len(HUMAN):]
    rest, _, judge = rest.partition("@")
    annotator = rest[1:] if rest.startswith(":") else None
    return annotator or None, judge or None


def rater_labels(workspace: Path, rater: str, *, per_verdict: bool | None = None) -> dict:
    """Labels of a judge name or a human rater.

    A person reviews one verdict at a time, so a human rater's labels are keyed by verdict
    (judgment id): ``human`` is the final label per verdict (adjudicated, else the people's majority,
    none for a tie: ``lsqa.audit.FINAL_LABEL_RULE``), ``human:<annotator>`` one person's; ``@<judge>`` keeps only reviews of that judge's verdicts. A judge's labels are keyed
    by item (answer, or pair of answers: ``_collapse``) unless ``per_verdict``, then by its own
    verdicts. ``per_verdict`` defaults to True for a person, False for a judge.
    """
    with store.connect(workspace) as con:
        return _rater_labels(con, rater, None, parse_human_rater(rater) is not None if per_verdict is None
                             else per_verdict)


@dataclass
class LabelsRead:
    """Raters' labels read once for a report that compares many pairs of raters (the Agreement
    page: every judge against every other and against each person). Every judge's verdicts and
    the human labels of all judges are each read in one query: a query costs much the same whatever
    its size (the derived views are recomputed), so one for all costs little more than one per judge
    (docs/benchmarks-log/2026-12-06-figures-from-code-comments.md)."""

    by_rater: dict[tuple, dict] = field(default_factory=dict)  # (rater, per verdict, order) → labels
    human_rows: list[dict] | None = None
    final_rows: list[dict] | None = None  # final human labels (``human`` rater): verdicts_store.final_labels
    judge_rows: dict[str, list[dict]] | None = None  # judge → its decided verdicts, judge's labels


def _judge_verdicts(con, judge: str, read: LabelsRead | None, reviewed_only: bool = False) -> list[dict]:
    """A judge's decided verdicts with its own labels, in ``effective_verdicts``' order (``reviewed_only``:
    those some person labelled, read alone when no shared ``read`` holds them all)."""
    if read is None or (reviewed_only and read.judge_rows is None):
        return verdicts_store.effective_verdicts(con, judge=judge, reviewed_only=reviewed_only)
    if read.judge_rows is None:
        read.judge_rows = defaultdict(list)
        for r in verdicts_store.effective_verdicts(con):  # ordered by item: each judge's share keeps the order
            read.judge_rows[r["judge"]].append(r)
    return read.judge_rows.get(judge, [])


def _rater_labels(con, rater: str, read: LabelsRead | None, per_verdict: bool,
                  shown_order: str | None = None) -> dict:
    """``rater_labels`` (``shown_order``: only verdicts given with the answers in that order)."""
    human = parse_human_rater(rater)
    if human is None:  # per verdict, a judge is compared with people only on verdicts people labelled
        rows = [r for r in _judge_verdicts(con, rater, read, reviewed_only=per_verdict)
                if shown_order is None or r["shown_order"] == shown_order]
        return {r["id"]: r["label"] for r in rows if r["label"] is not None} if per_verdict else _collapse(rows)
    annotator, judge = human
    if not annotator:
        # "human": the final label per verdict (adjudicated, else the people's majority; a tie is left
        # out), defined once in the workspace's final_human_labels view (migration 0016).
        if read is None:
            finals = verdicts_store.final_labels(con, judge=judge)
        else:
            if read.final_rows is None:
                read.final_rows = verdicts_store.final_labels(con)
            finals = [r for r in read.final_rows if not judge or r["judge"] == judge]
        return {r["judgment_id"]: r["label"] for r in finals
                if shown_order is None or r["shown_order"] == shown_order}
    if read is None:
        rows = verdicts_store.human_labels(con, judge=judge)
    else:
        if read.human_rows is None:
            read.human_rows = verdicts_store.human_labels(con)
        rows = [r for r in read.human_rows if not judge or r["judge"] == judge]
    if annotator:
        rows = [r for r in rows if r["annotator"] == annotator]
    if shown_order is not None:
        rows = [r for r in rows if r["shown_order"] == shown_order]
    return _human_verdicts(rows)


def _human_verdicts(rows: list[dict]) -> dict[str, str]:
    """Verdict (judgment id) → the latest human label among ``rows`` (one annotator's rows: their
    own label; the ``human`` rater reads the final labels instead). Never collapsed over a judge's references or orders, nor across
    judges: a person's review of one verdict is compared with that verdict, and two people's
    reviews are paired only on the same verdict."""
    latest: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: r["review_id"]):
        if r["label"] is not None:
            latest[r["judgment_id"]] = r
    return {jid: r["label"] for jid, r in latest.items()}


def rating_rows(workspace: Path, raters: list[str], *, read: LabelsRead | None = None,
                shown_order: str | None = None) -> list[dict]:
    """Long-format ``item_id, rater, label`` rows of workspace raters (the `lsqa agreement` file format).

    The unit: when a person is among ``raters`` every rater is read per verdict (a judge's labels on
    its own verdicts; ``item_id`` = judgment id), so a person is compared with the judge's label on
    the very verdict they reviewed and two people only on verdicts both reviewed; between judges
    only, per item (answer or pair of answers; ``item_id`` = the item's key), since two judges
    never share a verdict. ``shown_order``: only verdicts given in that answer order (``ab``, ``ba``).
    ``read``: labels already read in this report (filled in here), so that a report comparing many
    pairs reads each rater once."""
    read = LabelsRead() if read is None else read
    per_verdict = any(parse_human_rater(r) is not None for r in raters)
    keys = [(rater, per_verdict, shown_order) for rater in dict.fromkeys(raters)]
    missing = [k for k in keys if k not in read.by_rater]
    if missing:
        with store.connect(workspace) as con:
            for key in missing:
                read.by_rater[key] = _rater_labels(con, key[0], read, per_verdict, shown_order)
    return [{"item_id": k, "rater": rater, "label": v} for rater in raters
            for k, v in read.by_rater[(rater, per_verdict, shown_order)].items()]


def agreement(workspace: Path, rater_a: str, rater_b: str, *, bootstrap: int = 1000, seed: int = 0,
              read: LabelsRead | None = None, shown_order: str | None = None) -> dict:
    """Agreement %, Cohen's κ with a bootstrap CI and the confusion matrix of two raters (Fig. 4).

    A judge against a person, or two people: over the verdicts both labelled (``rating_rows``);
    two judges: over the items both judged. ``shown_order``: only verdicts given in that order."""
    return agreement_table(rating_rows(workspace, [rater_a, rater_b], read=read, shown_order=shown_order),
                           rater_a, rater_b, bootstrap=bootstrap, seed=seed)


def position_bias(workspace: Path, judge: str) -> dict:
    """How a side-by-side judge depends on the order it saw the answers (FastChat/LLMBar practice).

    ``first_position_rate``: share of decisive verdicts that picked the answer shown first.
    With both orders: consistency and κ between the two orders (``lsqa.stats.agreement``).
    Counted in SQL (``lsqa.store.verdicts.order_counts``): a million verdicts are three counts and
    the label pairs of the items judged in both orders, with how many items had each.
    """
    import numpy as np

    from lsqa.stats.agreement import position_consistency

    with store.connect(workspace) as con:
        counts = verdicts_store.order_counts(con, judge)
    decisive = counts["n_decisive"]
    out = {"judge": judge, "n": counts["n"], "n_decisive": decisive,
           "first_position_rate": (counts["n_first"] / decisive) if decisive else None}
    if counts["both"]:
        n = [k for _, _, k in counts["both"]]
        pc = position_consistency(np.repeat(np.array([ab for ab, _, _ in counts["both"]], dtype=object), n),
                                  np.repeat(np.array([ba for _, ba, _ in counts["both"]], dtype=object), n))
        out.update(n_both_orders=pc.n, consistency=pc.consistency, kappa=pc.kappa)
    return out


def self_preference(workspace: Path, judges: tuple[str, str], systems: tuple[str, str]) -> dict:
    """The §5.1 2×2: how often each of two judges prefers each of two systems' answers."""
    from lsqa.stats.agreement import preference_table

    judge_col, choice_col = [], []
    for judge in judges:
        for key, label in rater_labels(workspace, judge).items():
            parts = key
            if len(parts) != 3 or set(parts[1:]) != set(systems):
                continue
            winner = {"A": parts[1], "B": parts[2]}.get(label, label)
            judge_col.append(judge)
            choice_col.append(winner)
    if not judge_col:
        raise NoVerdicts(f"no side-by-side verdicts of {judges} on {systems}")
    table = preference_table(judge_col, choice_col, list(systems))
    return {"judges": list(table.judges), "systems": list(table.sources), "counts": table.counts.tolist(),
            "totals": table.totals.tolist(), "rates": table.rates.tolist()}


def annotator_agreement(workspace: Path) -> dict:
    """Agreement among annotators over verdicts reviewed by two or more: Krippendorff's α (nominal,
    missing ratings allowed) and Fleiss' κ over the verdicts every annotator reviewed (``n_items``
    and ``n_complete`` count verdicts)."""
    import math

    from lsqa.stats.agreement import category_counts, fleiss_kappa, krippendorff_alpha_nominal

    with store.connect(workspace) as con:
        rows = verdicts_store.human_labels(con)
    # Verdicts, as the annotator-pair tables count them (``rater_labels('human:<name>')``): two
    # people's labels count as a pair only on the same verdict, never across references or judges.
    by_item: dict[str, dict[str, str]] = defaultdict(dict)
    per_annotator: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        per_annotator[r["annotator"]].append(r)
    for annotator, own in per_annotator.items():
        for key, label in _human_verdicts(own).items():
            by_item[key][annotator] = label
    annotators = sorted({a for labels in by_item.values() for a in labels})
    shared = sorted(i for i, labels in by_item.items() if len(labels) >= 2)
    out = {"annotators": annotators, "n_items": len(shared), "n_complete": 0, "fleiss_kappa": None,
           "krippendorff_alpha": None}
    if not shared:
        return out
    finite = lambda x: None if x is None or not math.isfinite(x) else float(x)  # noqa: E731
    matrix = [[by_item[i].get(a) for i in shared] for a in annotators]  # raters × items, None = not rated
    out["krippendorff_alpha"] = finite(krippendorff_alpha_nominal(matrix))
    complete = [i for i in shared if len(by_item[i]) == len(annotators)]
    out["n_complete"] = len(complete)
    if complete:
        _, counts = category_counts([[by_item[i][a] for i in complete] for a in annotators])
        out["fleiss_kappa"] = finite(fleiss_kappa(counts))
    return out


# -------------------------------------------------------------------------------------- export

def export(workspace: Path, out: Path, fmt: str, *, force: bool = False) -> dict[str, int]:
    """Tables as files plus one ranking file (JSON) per side-by-side judge, all inside ``out``.

    ``out`` must be new, empty or a previous export unless ``force`` (``lsqa.store.export``); the
    files appear together when all are written. A ranking file is named from a safe slug of the
    judge's name (``ranking_<slug>.json``) and holds the real name under ``judge``."""
    import json

    from lsqa.store import export as export_store

    # The folder is checked (and its temporary twin made) before the workspace is read.
    with export_store.export_folder(Path(out), force=force) as writer:
        with store.connect(workspace) as con:
            written = export_store.export_tables(con, writer, fmt)
            pairwise_judges = sorted({j["judge"] for j in results_store.judges(con) if j["family"] == PAIRWISE})
        rankings = {}
        for judge in pairwise_judges:
            try:
                rankings[judge] = ranking(workspace, judge)
            except NoVerdicts:
                continue
        slugs = export_store.file_slugs(rankings)
        for judge, result in rankings.items():
            name = f"ranking_{slugs[judge]}.json"
            writer.file(name).write_text(json.dumps({**result, "judge": judge}, indent=2), encoding="utf-8")
            written[name] = len(result["systems"])
    return written


# ------------------------------------------------------------------------------- style control

def style_rows(workspace: Path, judge: str, *, use_overrides: bool = False, exclude_flagged: bool = False) -> list[dict]:
    """``comparison_rows`` plus the two answers' lengths in words (``len_a``, ``len_b``), the verdict's
    ``id`` and both labels (``judge_label``; ``human_label``: the latest review, None if unreviewed).
    Verdicts whose answers are no longer stored are left out (style control needs their lengths)."""
    with store.connect(workspace) as con:
        lengths = verdicts_store.answer_lengths(con, judge)
        if not lengths:  # no verdict has both answers stored: nothing to read row by row
            return []
        rows = _verdicts(con, judge, family=PAIRWISE, use_overrides=use_overrides, exclude_flagged=exclude_flagged)
    return [{"id": r["id"], "system_a": r["system_a"], "system_b": r["system_b"], "winner": r["label"],
             "question_id": r["question_id"], "len_a": lengths[r["id"]][0], "len_b": lengths[r["id"]][1],
             "judge_label": r["judge_label"], "human_label": r["human_label"]}
            for r in rows if r["id"] in lengths]


def style_ranking(workspace: Path, judge: str, *, use_overrides: bool = False, exclude_flagged: bool = False,
                  bootstrap: int = 1000, seed: int = 0, by_question: bool = False, anchor: str | None = None,
                  level: float = 0.95) -> dict:
    """Style-controlled Bradley-Terry (answer length as a covariate; ``lsqa.stats.style_control``)
    of one judge's side-by-side verdicts, read as ``ranking`` reads them."""
    from lsqa.stats.style_control import style_table

    rows = style_rows(workspace, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged)
    if not rows:
        raise NoVerdicts(f"judge {judge!r} has no decided side-by-side verdicts in this workspace")
    result = style_table(rows, bootstrap=bootstrap, seed=seed, by_question=by_question, anchor=anchor, level=level)
    result["judge"] = judge
    return result


def length_preference(workspace: Path, judge: str, *, bootstrap: int = 1000, seed: int = 0) -> dict:
    """How much a side-by-side judge prefers longer answers, and how much the people who audited it do.

    One estimator for all three figures: the length coefficient of the style-controlled fit (with a
    bootstrap CI) and the share of decisive verdicts won by the longer answer (Wilson CI). ``judge``:
    on all its decided verdicts; ``audited.judge`` and ``audited.people``: on the verdicts people
    reviewed, with the judge's labels and with the latest person's label of each, so the two differ
    only by who labelled. ``audited`` is None when nobody reviewed a verdict of the judge."""
    from lsqa.stats.style_control import LENGTH_UNIT, length_coefficient, style_data

    rows = style_rows(workspace, judge)

    def coefficient(rs: list[dict], label: str) -> dict:
        data = style_data([r["system_a"] for r in rs], [r["system_b"] for r in rs], [r[label] for r in rs],
                          [r["len_a"] for r in rs], [r["len_b"] for r in rs])
        return length_coefficient(data, bootstrap=bootstrap, seed=seed)

    audited = [r for r in rows if r["human_label"] is not None]
    return {"judge": judge, "unit": LENGTH_UNIT, "n": len(rows),
            "all_verdicts": coefficient(rows, "winner") if rows else None,
            "audited": {"n": len(audited), "judge": coefficient(audited, "judge_label"),
                        "people": coefficient(audited, "human_label")} if audited else None}
