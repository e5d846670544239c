"""Fragility of each adjacent pair (lsqa.stats.fragility): the fewest verdicts removed, or relabelled,
that swap two neighbours of a Bradley-Terry ranking. Checked against brute force: every set of up to
three removals (and of up to three label changes) refitted with ``fit_bradley_terry``.

Verdicts of one cell (pair, outcome) enter the fit identically, so "every subset of verdicts up to
size 3" is "every multiset of cells up to size 3 within their counts": the brute force below
enumerates those, and refits each with the ranking's own single fit (not the batched one lsqa uses).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from lsqa.cli import app
from lsqa.dashboard import leaderboard_view as lv
from lsqa.figures import analysis
from lsqa.stats import fragility as fr
from lsqa.stats import ranking as rk
from lsqa.stats.ranking import ComparisonCounts, count_comparisons, fit_bradley_terry

SXS = "lexical-sxs-fc"
runner = CliRunner()
LABELS = {"drop": None, "flip": [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]}


def _swapped(counts: np.ndarray, data: ComparisonCounts, upper: int, lower: int, tie_model: str) -> bool:
    fit = fit_bradley_terry(ComparisonCounts(data.systems, data.pairs, counts), tie_model=tie_model)
    return fit.beta[lower] - fit.beta[upper] > fr.SWAP_TOL


Z95 = 1.959963984540054


def _z_scores(counts: np.ndarray, data: ComparisonCounts, pairs, tie_model: str) -> dict:
    """(β_u − β_l) / se per pair, se from a finite-difference Hessian of the ranking's own penalised
    NLL (``ranking._objective``, its λ, ρ and fixed ν) at the refit: independent of fragility's algebra."""
    fit = rk.fit_variants(data, counts[None], tie_model=tie_model)
    m = len(data.systems)
    prob = rk._Problem(m, data.pairs, counts[None], tie_model, fit.lam, fit.rho, fit.theta_fixed)
    free = tie_model == "davidson" and not fit.theta_fixed[0]
    x0 = np.concatenate([fit.beta[0], [fit.theta[0]] if tie_model == "davidson" else []])
    k = m + free
    eps = 1e-4

    def f(x):
        return float(rk._objective(prob, x[None], np.array([0]))[0])

    H = np.zeros((k, k))
    for a in range(k):
        for b in range(k):
            x = [x0.copy() for _ in range(4)]
            for t, (sa, sb) in enumerate([(1, 1), (1, -1), (-1, 1), (-1, -1)]):
                x[t][a] += sa * eps
                x[t][b] += sb * eps
            H[a, b] = (f(x[0]) - f(x[1]) - f(x[2]) + f(x[3])) / (4 * eps * eps)
    H[:m, :m] += 1.0   # the shift of β: pinned, no contrast's variance changes
    out = {}
    for up, low in pairs:
        e = np.zeros(k)
        e[up], e[low] = 1.0, -1.0
        out[(up, low)] = (fit.beta[0, up] - fit.beta[0, low]) / np.sqrt(e @ np.linalg.solve(H, e))
    return out


def _adjacent(data: ComparisonCounts, tie_model: str) -> list[tuple[int, int]]:
    fit = fit_bradley_terry(data, tie_model=tie_model)
    order = sorted(range(len(data.systems)), key=lambda k: (fit.rank[k], data.systems[k]))
    return list(zip(order, order[1:], strict=False))


def brute_force(data: ComparisonCounts, mode: str, tie_model: str, up_to: int = 3, inseparable: bool = False) -> dict:
    """Per adjacent pair, the smallest number (≤ up_to) of removals / label changes that swaps it (with
    ``inseparable``: that leaves its z-score ≤ 1.96; 0 if it already is), or None."""
    P = len(data.pairs)
    if mode == "drop":
        moves = [(p, s, None) for p in range(P) for s in range(3) if data.counts[p, s] >= 1]
    else:
        moves = [(p, s, t) for p in range(P) for s, t in LABELS["flip"] if data.counts[p, s] >= 1]
    pairs = _adjacent(data, tie_model)
    best = {pair: None for pair in pairs}
    if inseparable:
        z0 = _z_scores(data.counts, data, pairs, tie_model)
        best = {pair: 0 if z0[pair] <= Z95 else None for pair in pairs}
    for size in range(1, up_to + 1):
        for chosen in itertools.combinations_with_replacement(moves, size):
            c = data.counts.copy()
            for p, s, t in chosen:
                c[p, s] -= 1
                if t is not None:
                    c[p, t] += 1
            if (c < 0).any():
                continue
            if inseparable:
                z = _z_scores(c, data, [p for p in pairs if best[p] is None], tie_model)
                for pair, zz in z.items():
                    if zz <= Z95:
                        best[pair] = size
                continue
            fit = fit_bradley_terry(ComparisonCounts(data.systems, data.pairs, c), tie_model=tie_model)
            for up, low in pairs:
                if best[(up, low)] is None and fit.beta[low] - fit.beta[up] > fr.SWAP_TOL:
                    best[(up, low)] = size
        if all(v is not None for v in best.values()):
            break
    return best


def _confirmed(data: ComparisonCounts, f: fr.PairFragility, mode: str, tie_model: str,
               inseparable: bool = False) -> None:
    """The reported number is the size of a witness that a refit confirms."""
    key = f"inseparable_{mode}" if inseparable else mode
    n, change = getattr(f, key), getattr(f, f"{key}_change")
    if inseparable:
        swap = getattr(f, mode)
        assert swap is None or (n is not None and n <= swap)
    if n is None:
        assert change is None
        return
    assert -change[change < 0].sum() == n
    if mode == "drop":
        assert (change <= 0).all()
    else:
        assert np.allclose(change.sum(axis=1), 0)   # a label change keeps the verdict in its pair
    after = data.counts + change
    assert (after >= 0).all()
    if inseparable:
        assert _z_scores(after, data, [(f.upper, f.lower)], tie_model)[(f.upper, f.lower)] <= Z95 + 1e-6
    else:
        assert _swapped(after, data, f.upper, f.lower, tie_model)


def _random_counts(seed: int, m: int, most: int = 6, spread: float = 0.8) -> ComparisonCounts:
    rng = np.random.default_rng(seed)
    beta = rng.normal(0, spread, m)
    pairs = np.array([(i, j) for i in range(m) for j in range(i + 1, m)])
    counts = []
    for i, j in pairs:
        p = 1 / (1 + np.exp(-(beta[i] - beta[j])))
        outcome = rng.choice(3, size=int(rng.integers(1, most)), p=[0.8 * p, 0.8 * (1 - p), 0.2])
        counts.append(np.bincount(outcome, minlength=3))
    return ComparisonCounts(tuple(f"s{k}" for k in range(m)), pairs, np.array(counts, dtype=float))


def _check_against_brute_force(data: ComparisonCounts, modes, tie_model: str, inseparable: bool = False) -> None:
    result = fr.adjacent_fragility(data, fit_bradley_terry(data, tie_model=tie_model))
    got = {(f.upper, f.lower): f for f in result}
    assert list(got) == _adjacent(data, tie_model)
    for mode in modes:
        best = brute_force(data, mode, tie_model, inseparable=inseparable)
        for pair, f in got.items():
            _confirmed(data, f, mode, tie_model, inseparable)
            n = getattr(f, f"inseparable_{mode}" if inseparable else mode)
            if best[pair] is not None:
                assert n == best[pair], (mode, pair, n, best[pair])
            else:   # nothing of size ≤ 3 swaps them: lsqa's confirmed witness must be larger, or absent
                assert n is None or n > 3, (mode, pair, n)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 6, 7])
@pytest.mark.sampled(3)
def test_three_systems_match_brute_force(seed):
    _check_against_brute_force(_random_counts(seed, 3), ("drop", "flip"), "half")


@pytest.mark.parametrize("seed", [20, 21])
def test_davidson_ties_match_brute_force(seed):
    _check_against_brute_force(_random_counts(seed, 3), ("drop", "flip"), "davidson")


@pytest.mark.parametrize(("seed", "m", "most", "tie_model"),
                         [(3, 3, 20, "half"), (1, 3, 40, "half"), (5, 3, 40, "half"), (8, 3, 40, "half"),
                          (0, 3, 40, "davidson"), (11, 3, 40, "davidson"), (9, 4, 25, "half"), (3, 4, 25, "davidson")])
@pytest.mark.sampled(5)
def test_inseparable_matches_brute_force(seed, m, most, tie_model):
    # Inseparable: the analytic 95% interval of β_upper − β_lower (observed information of the
    # ranking's own model) reaches 0. Brute force: every set of up to three removals or label
    # changes, se from a finite-difference Hessian of the ranking's likelihood. Strengths spread
    # (N(0, 2)) and up to 39 verdicts a pair: separated neighbours, most made inseparable by 1-3.
    data = _random_counts(seed, m, most, spread=1.0 if most == 20 else 2.0)
    _check_against_brute_force(data, ("drop", "flip") if m == 3 else ("drop",), tie_model, inseparable=True)


def test_inseparable_counts_are_found_and_not_above_the_swap():
    # 30 to 10: z ≈ 3; a few removals of A's wins leave it at 1.96, long before B is above A.
    data = _counts([("A", "B", "A")] * 30 + [("A", "B", "B")] * 10)
    (f,) = fr.adjacent_fragility(data, fit_bradley_terry(data))
    assert 0 < f.inseparable_drop < f.drop and 0 < f.inseparable_flip < f.flip
    assert brute_force(data, "flip", "half", up_to=4, inseparable=True)[(0, 1)] == f.inseparable_flip == 4
    _confirmed(data, f, "drop", "half", inseparable=True)
    _confirmed(data, f, "flip", "half", inseparable=True)
    # 3 to 1 is inseparable as it stands: 0
    data = _counts([("A", "B", "A")] * 3 + [("A", "B", "B")])
    (f,) = fr.adjacent_fragility(data, fit_bradley_terry(data))
    assert f.fields()["inseparable"] == {"drop": 0, "flip": 0}


@pytest.mark.parametrize("seed", [10, 11, 13])
def test_four_systems_match_brute_force(seed):
    _check_against_brute_force(_random_counts(seed, 4), ("drop",), "half")


def test_four_systems_relabelled_match_brute_force():
    _check_against_brute_force(_random_counts(12, 4, most=4), ("flip",), "half")


def _counts(rows: list[tuple[str, str, str]]) -> ComparisonCounts:
    a, b, w = zip(*rows, strict=False)
    return count_comparisons(a, b, w)


def test_hand_cases():
    # A beat B 3 to 1. Removing two of A's wins leaves 1-1 (level, not swapped); three leave B alone
    # with a win. Relabelling one gives 2-2; two give 1-3.
    data = _counts([("A", "B", "A")] * 3 + [("A", "B", "B")])
    (f,) = fr.adjacent_fragility(data, fit_bradley_terry(data))
    assert (f.drop, f.flip) == (3, 2)
    # B never won: no removal can put it above A (removing all leaves them level); three label changes do.
    data = _counts([("A", "B", "A")] * 5)
    (f,) = fr.adjacent_fragility(data, fit_bradley_terry(data))
    assert (f.drop, f.flip) == (None, 3)
    assert f.fields() == {"drop": None, "flip": 3, "inseparable": {"drop": 0, "flip": 0}}
    _check_against_brute_force(data, ("drop", "flip"), "half")


def test_a_pair_never_compared_directly_is_moved_through_the_others():
    # A and B never met: A beat C 3-1, B and C split 2-2. Only verdicts about C can swap A and B.
    data = _counts([("A", "C", "A")] * 3 + [("A", "C", "B")] + [("B", "C", "A"), ("B", "C", "B")] * 2)
    fit = fit_bradley_terry(data)
    a, b = data.systems.index("A"), data.systems.index("B")
    f = fr.pair_fragility(data, a, b)
    assert f.drop is not None and f.flip is not None
    _confirmed(data, f, "drop", "half")
    _confirmed(data, f, "flip", "half")
    assert fit.beta[a] > fit.beta[b]
    _check_against_brute_force(data, ("drop", "flip"), "half")


def test_systems_never_linked_get_no_number():
    data = _counts([("A", "B", "A"), ("A", "B", "B"), ("A", "B", "A"), ("C", "D", "A"), ("C", "D", "B")])
    c, b = data.systems.index("C"), data.systems.index("B")
    assert fr.pair_fragility(data, b, c).fields() == {"drop": None, "flip": None,
                                                     "inseparable": {"drop": None, "flip": None}}


def test_words():
    assert fr.words({"drop": 3, "flip": 2}) == "3 verdicts removed would swap them; 2 verdicts relabelled would"
    assert fr.words({"drop": 1, "flip": 1}) == "1 verdict removed would swap them; 1 verdict relabelled would"
    assert fr.words({"drop": None, "flip": 4}) == ("no removal of verdicts found that swaps them; "
                                                   "4 verdicts relabelled would swap them")
    assert fr.words({"drop": 9, "flip": 5, "inseparable": {"drop": 3, "flip": 1}}) == (
        "9 verdicts removed would swap them; 5 verdicts relabelled would (inseparable: 3 removed; 1 relabelled)")
    assert fr.words({"drop": 2, "flip": 1, "inseparable": {"drop": 0, "flip": 0}}) == (
        "2 verdicts removed would swap them; 1 verdict relabelled would (already inseparable)")
    assert fr.words({"drop": None, "flip": 4, "inseparable": {"drop": None, "flip": 2}}).endswith(
        "(inseparable: no removal found; 2 relabelled)")


def test_rank_json_on_the_demo_workspace_is_confirmed_and_exact_to_two(demo_workspace):
    out = runner.invoke(app, ["rank", "--workspace", str(demo_workspace), "--judge", SXS, "--json",
                              "--bootstrap", "200"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    names = [s["system"] for s in result["systems"]]
    assert [(a["upper"], a["lower"]) for a in result["adjacent"]] == list(zip(names, names[1:], strict=False))
    by_name = {s["system"]: s for s in result["systems"]}
    data = analysis.comparison_counts(demo_workspace, SXS)
    fit = fit_bradley_terry(data)
    best = brute_force(data, "drop", "half", up_to=2)
    for a in result["adjacent"]:
        assert set(a["fragility"]) == {"drop", "flip", "inseparable"}
        assert a["separated"] == (by_name[a["upper"]]["rank_high"] < by_name[a["lower"]]["rank_low"])
        up, low = data.systems.index(a["upper"]), data.systems.index(a["lower"])
        f = fr.pair_fragility(data, up, low)
        assert f.fields() == a["fragility"]
        for mode in ("drop", "flip"):
            _confirmed(data, f, mode, "half")
            _confirmed(data, f, mode, "half", inseparable=True)
        if best[(up, low)] is not None:
            assert a["fragility"]["drop"] == best[(up, low)]
        else:
            assert a["fragility"]["drop"] is None or a["fragility"]["drop"] > 2
    assert fit.n_comparisons == result["n_comparisons"]
    text = runner.invoke(app, ["rank", "--workspace", str(demo_workspace), "--judge", SXS, "--bootstrap", "0"])
    assert "Neighbours" in text.stdout and "would swap them" in text.stdout


def test_leaderboard_says_how_many_verdicts_would_swap_neighbours(demo_workspace, monkeypatch):
    from tests.dashboard.test_dashboard_pages import open_app, pick_judge

    monkeypatch.setenv("LSQA_WORKSPACE", str(demo_workspace))
    at = open_app(page="leaderboard")
    pick_judge(at, SXS)
    frame = next(df.value for df in at.dataframe if "verdicts that would swap them" in df.value.columns)
    result = analysis.ranking(demo_workspace, SXS, bootstrap=1000)
    assert list(frame["verdicts that would swap them"]) == [fr.words(a["fragility"]) for a in result["adjacent"]]
    assert any("removed would swap them" in v for v in frame["verdicts that would swap them"])
    assert set(frame["separated"]) <= {"yes", "no"}
    assert any(lv.NEIGHBOURS_HELP in str(c.value) for c in at.caption)


def _many_systems(seed: int, m: int = 40, n: int = 6_000) -> ComparisonCounts:
    """Arena-like verdicts: a random pair each, outcome from eq. 1 with 10% ties, strengths N(0, 1)."""
    rng = np.random.default_rng(seed)
    beta = rng.normal(0.0, 1.0, m)
    a = rng.integers(0, m, n)
    b = rng.integers(0, m - 1, n)
    b = b + (b >= a)
    p = 1.0 / (1.0 + np.exp(-(beta[a] - beta[b])))
    winner = np.where(rng.random(n) < 0.1, "tie", np.where(rng.random(n) < p, "A", "B"))
    names = np.array([f"s{k:02d}" for k in range(m)])
    return count_comparisons(list(names[a]), list(names[b]), list(winner))


@pytest.mark.parametrize(("seed", "tie_model"), [(30, "half"), (31, "half"), (32, "davidson")])
@pytest.mark.sampled(3)
def test_fast_path_gives_the_reference_answers_at_forty_systems(seed, tie_model):
    # Among 40 systems the small sets are searched among the kinds of largest pull: the fast path
    # refits only those its one-step estimate puts near a swap, and narrows prefixes around the
    # first-order crossing. Its answers and witnesses must be those of refitting everything.
    data = _many_systems(seed)
    fit = fit_bradley_terry(data, tie_model=tie_model)
    fast = fr.adjacent_fragility(data, fit)
    slow = fr.adjacent_fragility(data, fit, fast=False)
    assert [f.fields() for f in fast] == [f.fields() for f in slow]
    assert any(f.drop is not None and f.drop <= fr.EXACT_UP_TO for f in fast)   # the small-set search ran
    for f, g in zip(fast, slow, strict=False):
        for mode in ("drop", "flip"):
            a, b = getattr(f, f"{mode}_change"), getattr(g, f"{mode}_change")
            assert (a is None) == (b is None) and (a is None or np.array_equal(a, b)), (f.upper, f.lower, mode)
            _confirmed(data, f, mode, tie_model)


@pytest.mark.parametrize(("data", "tie_model"), [(_many_systems(30), "half"), (_many_systems(32), "davidson"),
                                                 (_random_counts(41, 6, most=8), "davidson"),
                                                 (_random_counts(43, 6, most=8), "half"),
                                                 (_random_counts(46, 6, most=40, spread=3.0), "half"),
                                                 (_random_counts(47, 6, most=40, spread=3.0), "davidson")],
                         ids=["40-half", "40-davidson", "6-few-davidson", "6-few-half", "6-spread-half", "6-spread-davidson"])
@pytest.mark.sampled(5)
def test_the_screen_of_small_sets_never_drops_a_set_that_swaps(data, tie_model):
    # The fast path refits a small set only when its one-step Newton estimate (Woodbury update of H⁻¹
    # at the fit), widened by the margin, could swap the pair. Every candidate set of the closest
    # neighbours is refitted here: the estimate must be within its margin of the refit, and no set
    # that a refit swaps may be screened out. Verdicts few (6 systems, ≤ 7 a pair) make the steps large.
    bt = fit_bradley_terry(data, tie_model=tie_model)
    fit = fr.fit_variants(data, data.counts[None], tie_model=tie_model, start=bt.beta)
    at = fr._AtFit(data, fit, tie_model)
    adjacent = _adjacent(data, tie_model)
    pairs = sorted(adjacent, key=lambda p: bt.beta[p[0]] - bt.beta[p[1]])[:3]
    z = {p: fr._Search(at, *p, "drop", fast=True, z=fr.z_crit(0.95)).gap0 for p in adjacent}
    pairs += sorted((p for p in adjacent if z[p] > 0), key=z.get)[:3]   # separated, the nearest to not
    assert len(pairs) > 3 or max(z.values()) <= 0
    for a, b in pairs:
        d0 = float(fit.beta[0, a] - fit.beta[0, b])
        for mode in fr.MODES:
            s = fr._Search(at, a, b, mode, fast=True)
            ranked = fr._smallest_first(s.pull0, np.flatnonzero(s.base[s.src] >= 1), 24)
            for size, top in fr.SEARCH_KINDS_OF_SIZE.items():
                kinds = ranked[:top]
                sets = [c for c in itertools.combinations_with_replacement(range(len(kinds)), size)
                        if s._fits_counts(kinds, c)]
                chosen = kinds[np.array(sets)]
                dx = at.one_step(s.src, s.tgt, chosen)
                step = dx[:, a] - dx[:, b]
                spread = dx[:, : len(data.systems)].max(axis=1) - dx[:, : len(data.systems)].min(axis=1)
                margin = (fr.SCREEN_RELATIVE + fr.SCREEN_SPREAD * spread) * np.abs(step) + spread ** 2
                flats = np.stack([fr._apply(s.base, s.src, s.tgt, c, np.ones(size)) for c in chosen])
                refit = fr.fit_variants(data, flats.reshape(len(flats), -1, 3), tie_model=tie_model, start=fit.beta[0])
                d = refit.beta[:, a] - refit.beta[:, b]
                assert (np.abs(d - (d0 + step)) <= margin).all(), (a, b, mode, size)
                assert not ((d < -fr.SWAP_TOL) & ~s._may_swap(chosen, d0)).any(), (a, b, mode, size)
                # inseparable: the screen must keep every set whose refit leaves z ≤ z_crit
                zs = fr._Search(at, a, b, mode, fast=True, z=fr.z_crit(0.95))
                se = fr.contrast_se(data, flats.reshape(len(flats), -1, 3), refit, a, b, tie_model)
                reach = d - zs.z * se <= 0.0
                assert not (reach & ~zs._may_swap(chosen, d0)).any(), (a, b, mode, size, "inseparable")
