"""``lsqa rank`` and ``lsqa agreement``: the statistics core on the command line.

Loading (``lsqa.store.importers.table``: the file read and checked in DuckDB) is kept apart from
computing (:func:`rank_table`, :func:`agreement_table`, which take plain rows and return JSON-ready dicts) and from printing (:func:`format_rank_table`,
:func:`format_agreement_table`), so that rows can come from a file or from the workspace.
An :class:`~lsqa.errors.InputError` (or a ValueError from the computation, reported as one naming
the input) is printed by ``friendly_errors`` like every other command's errors: one line on
stderr, exit code 2.
"""

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

import typer

from lsqa.cli.common import WorkspaceOption, bounded, checked_output_file, existing_workspace
from lsqa.errors import InputError
from lsqa.stats.reports import agreement_table, rank_counts, rank_table
from lsqa.text import numbers
from lsqa.vocabulary import CORRECTED, JUDGE_ONLY, TIE_MODELS

# numpy / scipy are imported inside the functions, so that other ``lsqa`` commands start fast.


# --------------------------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------------------------


def _num(x, fmt=None) -> str:
    """A figure in a text table: through the one formatter (``lsqa.text.numbers``: 3 significant
    digits, never exponent form; ``--json`` keeps full precision); ``fmt`` for whole numbers (tiers)."""
    if x is None:
        return "—"
    return fmt.format(x) if fmt else numbers.figure(x)


def _interval(s: Mapping) -> str:
    if not s.get("estimable", True):
        return "not estimable"
    if s["ci_low"] is None:
        return "—"
    return "[" + numbers.interval(s["ci_low"], s["ci_high"], limit=numbers.STRENGTH_LIMIT,
                                  unbounded="the bootstrap cannot bound it").replace(" – ", ", ") + "]"


def format_rank_table(result: Mapping, *, level: float = 0.95, note: str = "") -> str:
    """A readable, aligned table of :func:`rank_table`'s result (``note``: a line on how the CIs
    were made)."""
    n = len(result["systems"])
    header = ["tier", "system", f"ranks ({level:.0%})", "rank", "beta", "strength", f"{level:.0%} CI of strength"]
    body = [
        [_num(s.get("tier"), "{}"), s["system"], _ranks(s, n), str(s["rank"]), numbers.signed(s["beta"]),
         _num(s["strength"]), _interval(s)]
        for s in result["systems"]
    ]
    lines = _align([header, *body], right={0, 3, 4, 5, 6})
    lines.append("")
    lines.append(
        f"{len(result['systems'])} systems, {numbers.count(result['n_comparisons'])} comparisons used, "
        f"{numbers.count(result['n_excluded'])} excluded ('none': both answers wrong)"
    )
    if note:
        lines.append(note)
    lines.append(RANKS_NOTE)
    if result.get("adjacent"):
        from lsqa.stats.fragility import words

        lines.append("")
        lines.append("Neighbours: separated (rank intervals apart), how many verdicts would swap them and, in "
                     "brackets, make them inseparable (analytic interval of the difference reaching 0):")
        grid = [["pair", "separated", "fragility"]] + [
            [f"{a['upper']} > {a['lower']}", "—" if a["separated"] is None else "yes" if a["separated"] else "no",
             words(a["fragility"])] for a in result["adjacent"]]
        lines.extend(_align(grid, right=set()))
    names = [s["system"] for s in result["systems"]]
    if 1 < len(names) <= 12:
        lines.append("")
        lines.append("P(row beats column), eq. 1:")
        wp = result["win_probability"]
        grid = [["", *names]]
        for a in names:
            grid.append([a, *("" if a == b else numbers.figure(wp[a][b]) for b in names)])
        lines.extend(_align(grid, right=set(range(1, len(names) + 1))))
    return "\n".join(lines)


RANKS_NOTE = ("ranks: the ranks each system can hold, all at once with 95% confidence (simultaneous); "
              "a tier groups systems whose ranks cannot be told apart from the tier's first")


def _ranks(s: Mapping, n: int) -> str:
    from lsqa.stats.rank_intervals import ranks_text

    if s.get("rank_low") is None:
        return "—"
    return ranks_text(s["rank_low"], s["rank_high"], n)


def format_agreement_table(result: Mapping, rater_a: str, rater_b: str) -> str:
    """A readable summary of :func:`agreement_table`'s result, with the confusion matrix."""
    ci = result["kappa_ci"]
    ci_text = "" if ci is None else f"  (95% CI {numbers.figure(ci[0])} to {numbers.figure(ci[1])})"
    lines = [
        f"{rater_a} vs {rater_b}: {result['n']} items rated by both",
        f"agreement      {numbers.percent(result['agreement'])}",
        f"Cohen's kappa  {_num(result['kappa'])}{ci_text}",
        "",
        f"confusion (rows = {rater_a}, columns = {rater_b}):",
    ]
    labels = [str(x) for x in result["labels"]]
    grid = [["", *labels, "total"]]
    for lab, row in zip(labels, result["confusion"], strict=False):
        grid.append([lab, *(str(v) for v in row), str(sum(row))])
    cols = [sum(col) for col in zip(*result["confusion"], strict=False)] if result["confusion"] else []
    grid.append(["total", *(str(v) for v in cols), str(sum(cols))])
    lines.extend(_align(grid, right=set(range(1, len(labels) + 2))))
    return "\n".join(lines)


def _align(grid: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[c]) for r in grid) for c in range(len(grid[0]))]
    return [
        "  ".join(cell.rjust(w) if c in right else cell.ljust(w) for c, (cell, w) in enumerate(zip(r, widths, strict=False))).rstrip()
        for r in grid
    ]


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def _refuse_workspace_options(input, **options) -> None:
    """--input reads a file: options that choose what to read from a workspace would be ignored."""
    given = [f"--{name.replace('_', '-')}" for name, value in options.items() if value]
    if given:
        raise InputError(input, f"--input reads this file, so {' and '.join(given)} would be ignored",
                         hint=f"give either --input FILE or {given[0]} (with the workspace), not both")


def _rank_rows(input, workspace, judge, use_overrides, exclude_flagged, by_question):
    """``(source, rows, counts)``: comparison rows from a file, or a judge's verdicts in a workspace
    counted in SQL (``analysis.comparison_counts``; rows None)."""
    if input is not None:
        from lsqa.store.importers.table import load_comparisons

        _refuse_workspace_options(input, workspace=workspace, judge=judge, human_overrides=use_overrides,
                                  exclude_flagged=exclude_flagged)
        return input, load_comparisons(input).rows, None
    if judge is None:
        raise InputError("lsqa rank", "give --input FILE, or --judge NAME (with --workspace or the default workspace)")
    from lsqa.figures import analysis
    ws = existing_workspace(workspace)
    try:
        counts = analysis.comparison_counts(ws, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged,
                                            by_question=by_question)
    except ValueError as exc:
        raise InputError(ws, str(exc)) from None
    if counts is None:
        judges = analysis.judges_by_family(ws)
        what = ("a yes/no judge: it has no side-by-side verdicts to rank" if judge in judges["binary"]
                else "has no decided side-by-side verdicts here")
        raise InputError(ws, f"judge {judge!r} {what}",
                         hint=f"use one of the side-by-side judges: {', '.join(judges['pairwise']) or 'none yet'}")
    return ws, None, counts


def _rating_rows(input, workspace, rater_a, rater_b):
    """Long-format rating rows from a file, or the two raters' labels from a workspace."""
    if input is not None:
        from lsqa.store.importers.table import load_ratings

        _refuse_workspace_options(input, workspace=workspace)
        return input, load_ratings(input).rows
    from lsqa.figures import analysis
    ws = existing_workspace(workspace)
    return ws, analysis.rating_rows(ws, [rater_a, rater_b])


# Bounds of the number options, checked in one line before any work (lsqa.cli.common.bounded):
# 100,000 bootstrap rounds are minutes of work already; a seed is what numpy accepts (0 to 2³²−1).
MAX_BOOTSTRAP = 100_000
MAX_SEED = 2**32 - 1


def _check_numbers(*, bootstrap: int | None = None, seed: int | None = None, level: float | None = None) -> None:
    bounded("--bootstrap", bootstrap, 0, MAX_BOOTSTRAP)
    bounded("--seed", seed, 0, MAX_SEED)
    bounded("--level", level, 0.5, 0.999)


def rank_command(
    input: Optional[Path] = typer.Option(
        None, "--input", "-i", help="CSV or JSONL with system_a, system_b, winner (A/B/tie/none), optional question_id."
    ),
    workspace: Optional[Path] = WorkspaceOption,
    judge: Optional[str] = typer.Option(None, "--judge", help="Side-by-side judge whose verdicts to rank."),
    use_overrides: bool = typer.Option(False, "--human-overrides", help="Use human overrides instead of the judge."),
    exclude_flagged: bool = typer.Option(False, "--exclude-flagged", help="Leave out questions with flagged references."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help=f"Bootstrap rounds for the CIs (0 = none, at most {MAX_BOOTSTRAP:,})."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    by_question: bool = typer.Option(False, "--by-question", help="Resample whole questions, not single comparisons."),
    anchor: Optional[str] = typer.Option(
        None, "--anchor", help="System whose beta is fixed at 0 (default: mean beta = 0)."
    ),
    tie_model: str = typer.Option(
        "half", "--tie-model", help="half: a tie is half a win each; davidson: Davidson (1970)."
    ),
    level: float = typer.Option(0.95, "--level", help="Confidence level of the intervals (0.5 to 0.999)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    corrected: bool = typer.Option(
        False, "--corrected", help="PPI++ strengths corrected by the audits (random/active/imported reviews), "
                                   "with the judge-only strengths beside them (needs --judge)."),
    audit_queue: Optional[str] = typer.Option(
        None, "--audit-queue", help="With --corrected: which audits to use (random, active, import; "
                                    "default: the one with most usable audits)."),
    style_control: Optional[str] = typer.Option(
        None, "--style-control", help="length: also fit Bradley-Terry with the answers' length difference as a "
                                      "covariate (LMArena's style control); reports its coefficient with a CI "
                                      "and the style-controlled strengths beside the plain ones (needs --judge)."),
) -> None:
    """Rank systems from pairwise verdicts with Bradley-Terry (paper §3.2) and bootstrap CIs."""
    _check_numbers(bootstrap=bootstrap, seed=seed, level=level)
    if style_control is not None:
        _check_style_control(style_control, input=input, corrected=corrected, tie_model=tie_model)
    if corrected:
        # The corrected report's judge-only figures are the plain ranking's (judge's labels, all
        # questions, ties half a win, mean β = 0): options that would change them are refused, not ignored.
        ignored = [opt for opt, on in (("--input", input is not None), ("--anchor", anchor is not None),
                                       ("--tie-model", tie_model != "half"), ("--human-overrides", use_overrides),
                                       ("--exclude-flagged", exclude_flagged)) if on]
        if ignored:
            raise InputError("lsqa rank --corrected", f"{' and '.join(ignored)} would be ignored: the corrected "
                             "ranking and its judge-only figures use the judge's labels on all questions, ties "
                             "as half a win and mean beta = 0",
                             hint=f"leave out {ignored[0]}, or run lsqa rank without --corrected")
        _corrected_command("rank", workspace, judge, audit_queue, level, as_json)
        return
    if tie_model not in TIE_MODELS:
        raise InputError("--tie-model", f"unknown tie model {tie_model!r}", hint=f"use {' or '.join(TIE_MODELS)}")
    source, rows, counts = _rank_rows(input, workspace, judge, use_overrides, exclude_flagged, by_question)
    try:
        if counts is None:
            result = rank_table(rows, bootstrap=bootstrap, seed=seed, by_question=by_question,
                                anchor=anchor, tie_model=tie_model, level=level)
        else:
            result = rank_counts(counts, bootstrap=bootstrap, seed=seed, by_question=by_question,
                                 anchor=anchor, tie_model=tie_model, level=level)
    except ValueError as exc:
        raise InputError(source, str(exc)) from None
    if style_control is not None:
        from lsqa.figures import analysis

        try:
            result["style_control"] = analysis.style_ranking(
                source, judge, use_overrides=use_overrides, exclude_flagged=exclude_flagged, bootstrap=bootstrap,
                seed=seed, by_question=by_question, anchor=anchor, level=level)
        except ValueError as exc:
            raise InputError(source, str(exc)) from None
    if counts is not None:
        # The answer in one paragraph, as at the top of the Leaderboard and of `lsqa report` (the same
        # words for the same view, bootstrap rounds and seed).
        from lsqa.dashboard import headline

        result["headline"] = headline.for_judge(source, judge, ranking=result)["text"]
    for warning in result.get("warnings", []):
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    note = (f"CIs: percentile bootstrap, {bootstrap} rounds, seed {seed}, resampling "
            f"{'whole questions' if by_question else 'comparisons'}" if bootstrap else "no bootstrap (--bootstrap 0)")
    typer.echo(format_rank_table(result, level=level, note=note))
    if style_control is not None:
        typer.echo("")
        typer.echo(format_style_table(result["style_control"], result, level=level))


def _check_style_control(feature: str, *, input, corrected: bool, tie_model: str) -> None:
    """Refuse, before any work, what style control cannot do (docs/limits.md)."""
    from lsqa.stats.style_control import FEATURES

    if feature not in FEATURES:
        raise InputError("--style-control", f"unknown style feature {feature!r}", hint=f"use {' or '.join(FEATURES)}")
    if input is not None:
        raise InputError(input, "--style-control needs the answers' lengths, which a comparisons file does not hold",
                         hint="rank a workspace judge's verdicts (--judge NAME), or leave out --style-control")
    if corrected:
        raise InputError("lsqa rank --corrected", "--style-control is not combined with the corrected ranking",
                         hint="run lsqa rank --style-control length and lsqa rank --corrected separately")
    if tie_model != "half":
        raise InputError("--tie-model", f"style control counts a tie as half a win each, not {tie_model!r}",
                         hint="leave out --tie-model with --style-control")


def format_style_table(style: Mapping, plain: Mapping, *, level: float = 0.95) -> str:
    """Style-controlled strengths beside the plain ones, and the length coefficient with its CI."""
    n = len(style["systems"])
    before = {s["system"]: s for s in plain["systems"]}
    header = ["tier", "system", f"ranks ({level:.0%})", "strength", f"{level:.0%} CI of strength",
              "plain strength", "plain rank"]
    body = [[_num(s.get("tier"), "{}"), s["system"], _ranks(s, n), _num(s["strength"]), _interval(s),
             _num(before.get(s["system"], {}).get("strength")), str(before.get(s["system"], {}).get("rank", "—"))]
            for s in style["systems"]]
    coef, longer = style["coefficient"], style["longer_wins"]
    ci = "" if coef["ci_low"] is None else f" [{numbers.signed(coef['ci_low'])}, {numbers.signed(coef['ci_high'])}]"
    lines = [f"Style-controlled ({style['feature']}): d = {style['definition']}", *_align([header, *body], right={0, 3, 5, 6}),
             "",
             (f"length coefficient: {numbers.signed(coef['estimate'])}{ci} (log-odds per unit of d, fitted on the decisive "
              "verdicts; an answer twice as long as the other (d = 1/3) gains a third of it; > 0: longer answers "
              "win by themselves)" if coef["estimate"] is not None
              else "length coefficient: not estimable (no decisive verdict: every decided verdict is a tie)")]
    if longer["n"]:
        lines.append(f"longer answer won {numbers.percent(longer['share'])} [{numbers.percent(longer['ci_low'])}, "
                     f"{numbers.percent(longer['ci_high'])}] of {numbers.count(longer['n'])} decisive verdicts of answers "
                     "of different length")
    return "\n".join(lines)


def agreement_command(
    input: Optional[Path] = typer.Option(None, "--input", "-i", help="CSV or JSONL in long format: item_id, rater, label."),
    workspace: Optional[Path] = WorkspaceOption,
    rater_a: str = typer.Option(..., "--rater-a", help="First rater (rows of the confusion matrix)."),
    rater_b: str = typer.Option(..., "--rater-b", help="Second rater (columns)."),
    labels: Optional[str] = typer.Option(None, "--labels", help="Comma-separated label order (default: inferred)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help=f"Bootstrap rounds for the kappa CI (0 = none, at most {MAX_BOOTSTRAP:,})."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Agreement of two raters: percent agreement, Cohen's kappa with CI, confusion matrix (paper Fig. 4).

    Workspace raters: judge names, ``human`` or ``human:<annotator>``."""
    _check_numbers(bootstrap=bootstrap, seed=seed)
    source, rows = _rating_rows(input, workspace, rater_a, rater_b)
    order = [x.strip() for x in labels.split(",")] if labels else None
    try:
        result = agreement_table(rows, rater_a, rater_b, labels=order, bootstrap=bootstrap, seed=seed)
    except ValueError as exc:
        raise InputError(source, str(exc)) from None
    typer.echo(json.dumps(result, indent=2) if as_json else format_agreement_table(result, rater_a, rater_b))


def format_corrected(result: Mapping) -> str:
    """A corrected report (``lsqa.figures.corrected``) as an aligned table, judge-only beside it."""
    ranking = result["estimand"] == "bradley-terry"
    value, judge_value = ("strength", "judge_only_strength") if ranking else ("estimate", "judge_only")
    low, high = ("judge_only_ci_low", "judge_only_ci_high")
    n = len(result["systems"])
    header = ["tier", "system", "ranks", CORRECTED, f"{result['level']:.0%} CI", f"{JUDGE_ONLY} ranks", JUDGE_ONLY,
              "CI", "n", "n_audited"]
    def interval(a, b) -> str:  # None: not estimable (lsqa.figures.corrected._mark_not_estimable)
        return "not estimable" if a is None or b is None else f"[{numbers.figure(a)}, {numbers.figure(b)}]"

    body = [[_num(s.get("tier"), "{}"), s["system"], _ranks(s, n), numbers.figure(s[value]),
             interval(s["ci_low"], s["ci_high"]),
             _ranks({"rank_low": s.get("judge_only_rank_low"), "rank_high": s.get("judge_only_rank_high")}, n),
             numbers.figure(s[judge_value]), interval(s[low], s[high]), str(s["n"]), str(s["n_audited"])]
            for s in result["systems"]]
    lines = _align([header, *body], right={0, 3, 6, 8, 9})
    lines.append("")
    lines.append(f"{result['n_usable_audits']} usable audits ({result['design'] or 'none'}); "
                 f"{result['n_reviews_not_used']} other reviews not used (priority queue or another design)")
    lines.append(RANKS_NOTE)
    lines.extend(f"warning: {w}" for w in result["warnings"])
    return "\n".join(lines)


def _corrected_command(what: str, workspace, judge, audit_queue, level, as_json) -> None:
    from lsqa.figures import corrected

    if not judge:
        raise InputError(f"lsqa {what}", "--corrected needs --judge NAME (and --workspace or the default one)")
    if audit_queue not in (None, "random", "active", "import"):
        raise InputError(f"lsqa {what}", f"unknown audit queue {audit_queue!r}", hint="use random, active or import")
    ws = existing_workspace(workspace)
    try:
        if what == "rank":
            result = corrected.corrected_ranking(ws, judge, queue=audit_queue, level=level)
        else:
            result = corrected.corrected_accuracy(ws, judge, queue=audit_queue, level=level)
    except ValueError as exc:
        raise InputError(ws, str(exc)) from None
    typer.echo(json.dumps(result, indent=2) if as_json else format_corrected(result))


def accuracy_command(
    workspace: Optional[Path] = WorkspaceOption,
    judge: str = typer.Option(..., "--judge", help="Yes/no judge (AutoAIS, ground truth, similarity)."),
    corrected: bool = typer.Option(False, "--corrected", help="PPI++ accuracy corrected by the audits, "
                                                              "with the judge-only accuracy beside it."),
    audit_queue: Optional[str] = typer.Option(None, "--audit-queue", help="With --corrected: random, active or import."),
    level: float = typer.Option(0.95, "--level", help="Confidence level of the intervals (0.5 to 0.999)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Accuracy per system under a yes/no judge (paper Table 1), judge-only or corrected by audits."""
    _check_numbers(level=level)
    if corrected:
        _corrected_command("accuracy", workspace, judge, audit_queue, level, as_json)
        return
    from lsqa.figures import analysis

    ws = existing_workspace(workspace)
    rows = analysis.accuracy(ws, judge)
    if not rows:
        raise InputError(ws, f"judge {judge!r} has no decided yes/no verdicts in this workspace", hint="use a yes/no judge")
    from lsqa.stats.rank_intervals import for_accuracies

    ranks = for_accuracies([r["correct"] for r in rows], [r["n"] for r in rows], level=level)
    out = [{"system": r["system"], "estimate": r["accuracy"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
            "n": r["n"], "n_audited": 0, **ranks.fields(k)} for k, r in enumerate(rows)]
    if as_json:
        typer.echo(json.dumps({"judge": judge, "estimand": "accuracy", "systems": out}, indent=2))
        return
    grid = [["tier", "system", "ranks", "accuracy", "95% CI", "n"]] + [
        [str(r["tier"]), r["system"], _ranks(r, len(out)), numbers.percent(r["estimate"]),
         f"[{numbers.percent(r['ci_low'])}, {numbers.percent(r['ci_high'])}]", str(r["n"])] for r in out]
    typer.echo("\n".join([*_align(grid, right={0, 3, 5}), "", RANKS_NOTE]))


def format_certification(result: Mapping) -> str:
    """A certification (``lsqa.figures.certification.certify``) as lines: the verdict first, then the figures."""
    t = result["thresholds"]

    def pct(x) -> str:
        return numbers.percent(x)

    def span(r: Mapping) -> str:
        return "—" if r["ci_low"] is None else f"[{pct(r['ci_low'])}, {pct(r['ci_high'])}]"

    a = result["agreement"]
    from lsqa.stats.certification import POWER

    needed = f"; about {result['audits_needed']} more random audits would decide it with {POWER:.0%} probability" \
        if result["audits_needed"] is not None else ""
    lines = [f"{result['judge']}: {result['verdict']}{needed}",
             f"{result['n_audits']} audits ({result['design'] or 'none'} queue); thresholds: lower bounds of "
             f"agreement ≥ {t['min_agreement']:.0%}, of each gated recall ≥ {t['min_recall']:.0%} "
             f"({t['level']:.0%} intervals)", f"bounds: {result['rule']}", ""]
    grid = [["figure", "estimate", f"{t['level']:.0%} CI", "audits", "gated"],
            ["agreement with people", pct(a["estimate"]), span(a), str(result["n_audits"]), "yes"]]
    grid += [[f"recall of {r['label']}", pct(r["recall"]), span(r), str(r["n"]), "yes" if r["gated"] else "no"]
             for r in result["per_label"]]
    lines += _align(grid, right={1, 3})
    top = result["ceiling"]
    if top:
        lines += ["", f"on {top['n_verdicts']} verdicts two or more people labelled: people agree with each other "
                      f"{pct(top['people']['estimate'])}, the judge agrees with them {pct(top['judge']['estimate'])}"]
    alt = result["alt_test"]
    if alt:
        lines += ["", f"alternative annotator test (ε = {alt['epsilon']}): the judge wins against "
                      f"{alt['winning_rate']:.0%} of {alt['n_annotators']} annotators — "
                      f"{'passed' if alt['passed'] else 'failed'} (50% passes)"]
    lines += [""] + [f"- {r}" for r in result["reasons"]] + [f"note: {n}" for n in result["notes"]]
    return "\n".join(lines)


def certify_command(
    workspace: Optional[Path] = WorkspaceOption,
    judge: str = typer.Option(..., "--judge", help="The judge to certify."),
    min_agreement: float = typer.Option(0.9, "--min-agreement", help="Lower bound its agreement with people must reach."),
    min_recall: float = typer.Option(0.8, "--min-recall", help="Lower bound each gated per-label recall must reach."),
    epsilon: float = typer.Option(0.15, "--epsilon", help="Alternative annotator test's ε (0.1 crowd workers, "
                                                          "0.15 skilled annotators, 0.2 experts)."),
    level: float = typer.Option(0.95, "--level", help="Confidence level of the intervals."),
    audit_queue: Optional[str] = typer.Option(None, "--audit-queue", help="random, active or import (default: the "
                                                                          "one with the most audits)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """Can this judge replace the annotators? Replaceable, not replaceable or undecided, from its audits."""
    from lsqa.figures.certification import Thresholds, certify

    ws = existing_workspace(workspace)
    if not judge.strip():  # no judge is named '' (the name rule refuses it): an unknown judge, not "undecided"
        raise InputError("lsqa certify", f"no judge {judge!r} in this workspace",
                         hint="give one of its judges; `lsqa rank` and `lsqa accuracy` list them")
    thresholds = Thresholds(min_agreement=min_agreement, min_recall=min_recall, epsilon=epsilon,
                             level=level)
    try:
        result = certify(ws, judge, queue=audit_queue, thresholds=thresholds)
    except ValueError as exc:
        raise InputError("lsqa certify", str(exc)) from None
    typer.echo(json.dumps(result, indent=2) if as_json else format_certification(result))


def report_command(
    workspace: Optional[Path] = WorkspaceOption,
    judge: str = typer.Option(..., "--judge", help="The judge to report on."),
    out: str = typer.Option(..., "--out", help="The HTML file to write (one self-contained page, opens offline)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help=f"Bootstrap rounds for the strength intervals "
                                                            f"(0 = none, at most {MAX_BOOTSTRAP:,})."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    audit_queue: Optional[str] = typer.Option(None, "--audit-queue", help="random, active or import (default: the "
                                                                          "one with the most audits)."),
    since: Optional[Path] = typer.Option(None, "--since", help="An earlier report (its HTML file, or the figures JSON "
                                                               "it embeds): list what moved since."),
    dashboard_url: Optional[str] = typer.Option(None, "--dashboard-url", help="Where its links to the Audit page lead "
                                                "(default LSQA_DASHBOARD_URL, else http://127.0.0.1:8501)."),
) -> None:
    """A report a stakeholder can be handed: tiers, certification, bias, switches and provenance in one HTML file."""
    from lsqa.dashboard import links, report

    home = links.home(dashboard_url)  # before anything is read or written

    _check_numbers(bootstrap=bootstrap, seed=seed)
    if audit_queue not in (None, "random", "active", "import"):
        raise InputError("--audit-queue", f"unknown audit queue {audit_queue!r}", hint="use random, active or import")
    checked_output_file(out, "report.html")  # as written: `newdir/` is a folder, not a file named newdir
    out = Path(out)
    ws = existing_workspace(workspace)
    try:
        before = report.read_figures(since) if since is not None else None
    except ValueError as exc:
        raise InputError(since, str(exc).removeprefix(f"{since}: ").removeprefix(f"{since} ")) from None
    try:
        page, _, moved = report.build_with_figures(ws, judge, bootstrap=bootstrap, seed=seed, queue=audit_queue,
                                                   since=before, address=home)
    except ValueError as exc:
        raise InputError(ws, str(exc)) from None
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise InputError(out, f"cannot be written: {exc.strerror or exc}", hint="give a path you can write to") \
            from None
    typer.echo(f"wrote {out} ({len(page.encode('utf-8')):,} bytes): report on {judge}")
    if before is not None:
        typer.echo(f"since the report of {before.get('made', 'before')}: "
                   + (f"{len(moved)} change{'' if len(moved) == 1 else 's'}" if moved else "nothing moved"))
        for line in moved:
            typer.echo(f"- {line}")
