"""``lsqa rank`` and ``lsqa agreement``: the statistics core on the command line.

Loading (``lsqa.tables``) is kept apart from computing (:func:`rank_table`, :func:`agreement_table`,
which take plain rows and return JSON-ready dicts) and from printing (:func:`format_rank_table`,
:func:`format_agreement_table`), so that rows can come from a file or from the workspace.
An :class:`~lsqa.errors.InputError` (or a ValueError from the computation, reported as one) is
printed to stderr and exits with code 2, without traceback.
"""

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Optional

import typer

from lsqa.errors import InputError

# numpy / scipy are imported inside the functions, so that other ``lsqa`` commands start fast.
EXIT_INPUT_ERROR = 2
TIE_MODELS = ("half", "davidson")


def _finite(x) -> Optional[float]:
    """JSON has no NaN / inf: undefined numbers become null."""
    x = float(x)
    return x if math.isfinite(x) else None


# --------------------------------------------------------------------------------------------
# Computing
# --------------------------------------------------------------------------------------------


def rank_table(
    rows: Iterable[Mapping],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    by_question: bool = False,
    anchor: Optional[str] = None,
    tie_model: str = "half",
    level: float = 0.95,
) -> dict:
    """Bradley-Terry ranking (paper §3.2) of rows with ``system_a, system_b, winner`` (+ ``question_id``).

    Returns ``{"systems": [{"system", "beta", "strength", "ci_low", "ci_high", "rank"}, ...]
    (strongest first), "win_probability": {sys_i: {sys_j: P(i beats j)}}, "n_comparisons",
    "n_excluded"}``; ``ci_low`` / ``ci_high`` bound the strength e^β (null when ``bootstrap=0``).
    Raises ValueError for unusable rows.
    """
    from lsqa.ranking import bootstrap_bradley_terry, count_comparisons, fit_bradley_terry

    rows = list(rows)
    if not rows:
        raise ValueError("no comparisons")
    qids = None
    if by_question:
        qids = [r.get("question_id") for r in rows]
        if any(q is None or str(q).strip() == "" for q in qids):
            raise ValueError("--by-question needs a question_id in every row")
        qids = [str(q) for q in qids]
    data = count_comparisons(
        [r["system_a"] for r in rows], [r["system_b"] for r in rows], [r["winner"] for r in rows], qids
    )
    if data.n_comparisons == 0:
        raise ValueError("every comparison is 'none' (both answers wrong): nothing to rank")
    fit = fit_bradley_terry(data, tie_model=tie_model, anchor=anchor)
    ci = None
    if bootstrap > 0:
        ci = bootstrap_bradley_terry(data, rounds=bootstrap, level=level, seed=seed, by_question=by_question,
                                     tie_model=tie_model, anchor=anchor)
    order = sorted(range(len(fit.systems)), key=lambda k: (fit.rank[k], fit.systems[k]))
    systems = []
    for k in order:
        systems.append({
            "system": fit.systems[k],
            "beta": _finite(fit.beta[k]),
            "strength": _finite(fit.strength[k]),
            "ci_low": _finite(ci.strength_low[k]) if ci else None,
            "ci_high": _finite(ci.strength_high[k]) if ci else None,
            "rank": int(fit.rank[k]),
        })
    win_probability = {
        fit.systems[i]: {fit.systems[j]: _finite(fit.win_probability[i, j]) for j in order if j != i}
        for i in order
    }
    return {
        "systems": systems,
        "win_probability": win_probability,
        "n_comparisons": data.n_comparisons,
        "n_excluded": data.n_excluded,
    }


def agreement_table(
    rows: Iterable[Mapping],
    rater_a: str,
    rater_b: str,
    *,
    labels: Optional[Sequence[str]] = None,
    bootstrap: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict:
    """Agreement of two raters over the items both labelled, from long-format rows
    (``item_id, rater, label``).

    Returns ``{"n", "agreement", "kappa", "kappa_ci", "labels", "confusion"}``; ``confusion`` is
    a list of rows in the order of ``labels``, rows = rater A (paper Fig. 4). Undefined κ → null.
    """
    from lsqa.agreement import compare_raters, paired_labels

    rows = list(rows)
    if rater_a == rater_b:
        raise ValueError("--rater-a and --rater-b are the same rater")
    _, la, lb = paired_labels(
        [r["item_id"] for r in rows], [r["rater"] for r in rows], [r["label"] for r in rows], rater_a, rater_b
    )
    if not la:
        raise ValueError(f"raters {rater_a!r} and {rater_b!r} have no item in common")
    res = compare_raters(la, lb, labels=labels, rounds=bootstrap, level=level, seed=seed)
    ci = [_finite(res.kappa_ci[0]), _finite(res.kappa_ci[1])]
    return {
        "n": res.n,
        "agreement": res.agreement,
        "kappa": _finite(res.kappa),
        "kappa_ci": None if bootstrap <= 0 or ci[0] is None else ci,
        "labels": list(res.labels),
        "confusion": res.confusion.matrix.astype(int).tolist(),
    }


# --------------------------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------------------------


def _num(x, fmt="{:.4f}") -> str:
    return "—" if x is None else fmt.format(x)


def format_rank_table(result: Mapping, *, level: float = 0.95, note: str = "") -> str:
    """A readable, aligned table of :func:`rank_table`'s result (``note``: a line on how the CIs
    were made)."""
    header = ["rank", "system", "beta", "strength", f"{level:.0%} CI of strength"]
    body = [
        [str(s["rank"]), s["system"], _num(s["beta"], "{:+.4f}"), _num(s["strength"]),
         "—" if s["ci_low"] is None else f"[{s['ci_low']:.4f}, {s['ci_high']:.4f}]"]
        for s in result["systems"]
    ]
    lines = _align([header, *body], right={0, 2, 3})
    lines.append("")
    lines.append(
        f"{len(result['systems'])} systems, {result['n_comparisons']} comparisons used, "
        f"{result['n_excluded']} excluded ('none': both answers wrong)"
    )
    if note:
        lines.append(note)
    names = [s["system"] for s in result["systems"]]
    if 1 < len(names) <= 12:
        lines.append("")
        lines.append("P(row beats column), eq. 1:")
        wp = result["win_probability"]
        grid = [["", *names]]
        for a in names:
            grid.append([a, *("" if a == b else f"{wp[a][b]:.3f}" for b in names)])
        lines.extend(_align(grid, right=set(range(1, len(names) + 1))))
    return "\n".join(lines)


def format_agreement_table(result: Mapping, rater_a: str, rater_b: str) -> str:
    """A readable summary of :func:`agreement_table`'s result, with the confusion matrix."""
    ci = result["kappa_ci"]
    ci_text = "" if ci is None else f"  (95% CI {ci[0]:.3f} to {ci[1]:.3f})"
    lines = [
        f"{rater_a} vs {rater_b}: {result['n']} items rated by both",
        f"agreement      {result['agreement']:.1%}",
        f"Cohen's kappa  {_num(result['kappa'], '{:.3f}')}{ci_text}",
        "",
        f"confusion (rows = {rater_a}, columns = {rater_b}):",
    ]
    labels = [str(x) for x in result["labels"]]
    grid = [["", *labels, "total"]]
    for lab, row in zip(labels, result["confusion"]):
        grid.append([lab, *(str(v) for v in row), str(sum(row))])
    cols = [sum(col) for col in zip(*result["confusion"])] if result["confusion"] else []
    grid.append(["total", *(str(v) for v in cols), str(sum(cols))])
    lines.extend(_align(grid, right=set(range(1, len(labels) + 2))))
    return "\n".join(lines)


def _align(grid: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[c]) for r in grid) for c in range(len(grid[0]))]
    return [
        "  ".join(cell.rjust(w) if c in right else cell.ljust(w) for c, (cell, w) in enumerate(zip(r, widths))).rstrip()
        for r in grid
    ]


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def _fail(exc: InputError) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(code=EXIT_INPUT_ERROR)


def rank_command(
    input: Path = typer.Option(
        ..., "--input", "-i", help="CSV or JSONL with system_a, system_b, winner (A/B/tie/none), optional question_id."
    ),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=0, help="Bootstrap rounds for the CIs (0 = none)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    by_question: bool = typer.Option(False, "--by-question", help="Resample whole questions, not single comparisons."),
    anchor: Optional[str] = typer.Option(
        None, "--anchor", help="System whose beta is fixed at 0 (default: mean beta = 0)."
    ),
    tie_model: str = typer.Option(
        "half", "--tie-model", help="half: a tie is half a win each; davidson: Davidson (1970)."
    ),
    level: float = typer.Option(0.95, "--level", min=0.5, max=0.999, help="Confidence level of the intervals."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Rank systems from pairwise verdicts with Bradley-Terry (paper §3.2) and bootstrap CIs."""
    try:
        if tie_model not in TIE_MODELS:
            raise InputError(input, f"unknown tie model {tie_model!r}", hint="use half or davidson")
        from lsqa.tables import load_comparisons

        table = load_comparisons(input)
        try:
            result = rank_table(table.rows, bootstrap=bootstrap, seed=seed, by_question=by_question,
                                anchor=anchor, tie_model=tie_model, level=level)
        except ValueError as exc:
            raise InputError(input, str(exc)) from None
    except InputError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    note = (f"CIs: percentile bootstrap, {bootstrap} rounds, seed {seed}, resampling "
            f"{'whole questions' if by_question else 'comparisons'}" if bootstrap else "no bootstrap (--bootstrap 0)")
    typer.echo(format_rank_table(result, level=level, note=note))


def agreement_command(
    input: Path = typer.Option(..., "--input", "-i", help="CSV or JSONL in long format: item_id, rater, label."),
    rater_a: str = typer.Option(..., "--rater-a", help="First rater (rows of the confusion matrix)."),
    rater_b: str = typer.Option(..., "--rater-b", help="Second rater (columns)."),
    labels: Optional[str] = typer.Option(None, "--labels", help="Comma-separated label order (default: inferred)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=0, help="Bootstrap rounds for the kappa CI (0 = none)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Agreement of two raters: percent agreement, Cohen's kappa with CI, confusion matrix (paper Fig. 4)."""
    try:
        from lsqa.tables import load_ratings

        table = load_ratings(input)
        order = [x.strip() for x in labels.split(",")] if labels else None
        try:
            result = agreement_table(table.rows, rater_a, rater_b, labels=order, bootstrap=bootstrap, seed=seed)
        except ValueError as exc:
            raise InputError(input, str(exc)) from None
    except InputError as exc:
        _fail(exc)
    typer.echo(json.dumps(result, indent=2) if as_json else format_agreement_table(result, rater_a, rater_b))


def register(app: typer.Typer) -> None:
    """Add ``rank`` and ``agreement`` to the ``lsqa`` app (called by lsqa/cli.py)."""
    app.command("rank")(rank_command)
    app.command("agreement")(agreement_command)
