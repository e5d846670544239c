"""How many verdicts hold each adjacent pair of a Bradley-Terry ranking in place.

Dropping 2 of Chatbot Arena's 57,477 votes changes its top model (Huang, Broderick et al. 2025,
"Dropping just a handful of preferences can change top large language model rankings"). For two
neighbours A above B in a ranking (paper §3.2, ``lsqa.stats.ranking``) this module finds

* ``drop``: the fewest verdicts whose **removal** puts B above A (β_B > β_A after a refit), and
* ``flip``: the fewest verdicts whose **label change** (A / B / tie, to another of the three) does.

Both count verdicts of any pair: a win of A over a third system moves β_A too. A verdict enters the
fit only through its cell (pair, outcome), so the search is over how many verdicts of each cell to
remove or relabel, and every refit is on cell counts (P pairs × 3), never on rows.

Method: the Approximate Maximum Influence Perturbation of Broderick, Giordano & Meager (2020, "An
automatic finite-sample robustness metric: when can dropping a little data make a big difference?"),
as Huang et al. apply it to Bradley-Terry, with every answer confirmed by an exact refit:

1. First order. At the fit, ``u = H⁻¹(e_A − e_B)`` (H the Hessian of the negative log-likelihood in β,
   and ln ν under Davidson's tie model) gives the pull of one verdict of each cell on d = β_A − β_B:
   ``∂d/∂c_k = −uᵀ ∂g/∂c_k`` (g the score, linear in the counts; the implicit-function form of one
   Newton step, as ``lsqa.stats.corrected.label_pulls`` is for single labels).
2. Greedy. Take verdicts in order of pull (most negative first, each cell up to its count) until the
   first-order d falls below 0; refit exactly (``ranking.fit_variants``: the same prior and tie rules
   as the ranking); if B is not yet above A, take the pulls again at the refit and go on.
3. Smallest confirmed. Once a refit swaps them, the fewest verdicts along that path that still swap
   them is found by refitting prefixes (batched), so the number reported is always a set a refit
   confirmed: an upper bound on the true minimum.
4. Small numbers exact. Every set of up to ``EXACT_UP_TO`` verdict kinds (cell, or cell and new label)
   smaller than the greedy answer is refitted, among all kinds when there are at most ``SEARCH_KINDS``
   of them (so up to 3 the answer is the exact minimum), else among the kinds with the largest pull
   (24 for one verdict, 12 for two, 8 for three) and only where their first-order pull could reach.

The cap is every verdict: ``None`` means that no removal (or label change) along the search put B
above A, even after every verdict that pulls that way was used (e.g. B never won anything: removing
verdicts cannot make it win). Pairs in comparison groups never linked get ``None`` too: their
strengths share no scale. Ties of β count as not swapped: B must be strictly above A.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations_with_replacement

import numpy as np

from lsqa.stats.ranking import (
    BTResult,
    ComparisonCounts,
    StackFit,
    _pair_derivatives,
    comparison_groups,
    fit_variants,
)

SWAP_TOL = 1e-7       # B is above A when β_B − β_A > this (fits converge to ~1e-10)
EXACT_UP_TO = 3       # sizes searched exhaustively below the greedy answer
SEARCH_KINDS = 40     # kinds of verdict searched exhaustively (all of them when there are no more) ...
SEARCH_KINDS_OF_SIZE = {1: 24, 2: 12, 3: 8}  # ... else, per set size, the kinds with the largest pull
FIRST_ORDER_SLACK = 3.0  # among many kinds: try size s only if s best pulls × this reach d
MAX_ROUNDS = 30       # greedy rounds before taking every remaining pulling verdict at once
PREFIX_GRID = 32      # prefixes refitted at once while narrowing the smallest swapping prefix
MODES = ("drop", "flip")


@dataclass(frozen=True)
class PairFragility:
    """One adjacent pair (indices into the systems): the fewest verdicts removed (``drop``) or
    relabelled (``flip``) that put ``lower`` above ``upper``, None when none was found; ``*_change``
    a confirmed witness as a (P, 3) change of the counts (negative: taken from that cell)."""

    upper: int
    lower: int
    drop: int | None
    flip: int | None
    drop_change: np.ndarray | None = None
    flip_change: np.ndarray | None = None

    def fields(self) -> dict:
        """The JSON field of the pair: ``{"drop": n, "flip": n}``."""
        return {"drop": self.drop, "flip": self.flip}


# --------------------------------------------------------------------------------------------
# First order
# --------------------------------------------------------------------------------------------


def cell_pulls(data: ComparisonCounts, counts: np.ndarray, fit: StackFit, upper: int, lower: int,
               tie_model: str) -> np.ndarray:
    """(P, 3): first-order change of β_upper − β_lower per verdict added to each cell, at ``fit``
    (a one-variant ``fit_variants`` of ``counts``). Removing one verdict of cell k moves it by −pull[k]."""
    m = len(data.systems)
    i, j = data.pairs[:, 0], data.pairs[:, 1]
    beta = fit.beta[0]
    davidson = tie_model == "davidson"
    theta = fit.theta if davidson else None
    c = np.asarray(counts, dtype=float)[None]
    t = _pair_derivatives((beta[i] - beta[j])[None], theta, c, tie_model)
    h = t["h_dd"][0]
    free_theta = davidson and not fit.theta_fixed[0]
    k = m + 1 if free_theta else m
    H = np.zeros((k, k))
    np.add.at(H, (i, i), h)
    np.add.at(H, (j, j), h)
    np.add.at(H, (i, j), -h)
    np.add.at(H, (j, i), -h)
    H[np.arange(m), np.arange(m)] += fit.lam[0]
    H[:m, :m] += (2.0 * h.sum() / m + 1.0) / m   # pins the shift (the right side is ⟂ 1), well scaled
    if free_theta:
        hdt = t["h_dt"][0]
        col = np.zeros(m)
        np.add.at(col, i, hdt)
        np.add.at(col, j, -hdt)
        H[:m, m] = H[m, :m] = col
        H[m, m] = t["h_tt"][0] + fit.rho[0]
    rhs = np.zeros(k)
    rhs[upper], rhs[lower] = 1.0, -1.0
    try:
        u = np.linalg.solve(H, rhs)
    except np.linalg.LinAlgError:
        u = np.linalg.lstsq(H, rhs, rcond=None)[0]
    du = u[i] - u[j]
    if davidson:   # score in d and ln ν, per unit of each cell (ranking._pair_derivatives, linear in c)
        lse = np.logaddexp(np.logaddexp(0.5 * (beta[i] - beta[j]), -0.5 * (beta[i] - beta[j])), theta[0])
        qi = np.exp(0.5 * (beta[i] - beta[j]) - lse)
        qj = np.exp(-0.5 * (beta[i] - beta[j]) - lse)
        qt = np.exp(theta[0] - lse)
        diff = qi - qj
        a = np.stack([-0.5 + 0.5 * diff, 0.5 + 0.5 * diff, 0.5 * diff], axis=1)
        b = np.stack([qt, qt, qt - 1.0], axis=1) if free_theta else np.zeros((len(i), 3))
        return -(du[:, None] * a + (u[m] if free_theta else 0.0) * b)
    s = 1.0 / (1.0 + np.exp(-(beta[i] - beta[j])))
    a = np.stack([s - 1.0, s, s - 0.5], axis=1)
    return -du[:, None] * a


def _kinds(P: int, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Kinds of change on the flattened (P·3) cells: one verdict taken from ``src`` and, for a label
    change, put in ``tgt`` (the same pair, another outcome; −1 for a removal)."""
    if mode == "drop":
        src = np.arange(3 * P)
        return src, np.full(3 * P, -1)
    p = np.repeat(np.arange(P), 6)
    s = np.tile(np.array([0, 0, 1, 1, 2, 2]), P)
    t = np.tile(np.array([1, 2, 0, 2, 0, 1]), P)
    return 3 * p + s, 3 * p + t


def _kind_pulls(pull: np.ndarray, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    flat = pull.reshape(-1)
    return -flat[src] + np.where(tgt >= 0, flat[np.maximum(tgt, 0)], 0.0)


def _apply(flat: np.ndarray, src: np.ndarray, tgt: np.ndarray, kinds: np.ndarray, units: np.ndarray) -> np.ndarray:
    out = flat.copy()
    np.subtract.at(out, src[kinds], units)
    keep = tgt[kinds] >= 0
    np.add.at(out, tgt[kinds][keep], units[keep])
    return out


# --------------------------------------------------------------------------------------------
# The search
# --------------------------------------------------------------------------------------------


class _Search:
    """The fewest verdicts of one mode that put ``lower`` above ``upper``."""

    def __init__(self, data: ComparisonCounts, fit0: StackFit, upper: int, lower: int, mode: str, tie_model: str):
        self.data, self.fit0, self.a, self.b, self.tie_model = data, fit0, upper, lower, tie_model
        self.P = len(data.pairs)
        self.base = np.floor(data.counts.reshape(-1) + 1e-9)
        self.src, self.tgt = _kinds(self.P, mode)
        self.refits = 0

    def _fit(self, flats: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, StackFit]:
        fit = fit_variants(self.data, flats.reshape(len(flats), self.P, 3), tie_model=self.tie_model, start=start)
        self.refits += len(flats)
        return fit.beta[:, self.a] - fit.beta[:, self.b], fit

    def run(self) -> tuple[int | None, np.ndarray | None]:
        greedy = self._greedy()
        best = self._exhaustive(greedy[0])
        return best if best[0] is not None else greedy

    # -- greedy with exact refits --------------------------------------------------------------

    def _blocks(self, flat: np.ndarray, fit: StackFit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Kinds with a negative pull, most negative first, each with the verdicts its source still
        has (a source cell's verdicts go to its first kind in that order)."""
        pull = _kind_pulls(cell_pulls(self.data, flat.reshape(self.P, 3), fit, self.a, self.b, self.tie_model),
                           self.src, self.tgt)
        cand = np.flatnonzero((pull < 0) & (flat[self.src] >= 1))
        cand = cand[np.argsort(pull[cand], kind="stable")]
        _, first = np.unique(self.src[cand], return_index=True)
        cand = cand[np.sort(first)]
        return cand, flat[self.src[cand]], pull[cand]

    def _greedy(self) -> tuple[int | None, np.ndarray | None]:
        flat, fit = self.base.copy(), self.fit0
        d = float(fit.beta[0, self.a] - fit.beta[0, self.b])
        done = 0
        for rnd in range(MAX_ROUNDS + 1):
            kinds, units, pull = self._blocks(flat, fit)
            if not len(kinds):
                return None, None
            reach = d + np.cumsum(units * pull)
            hit = np.flatnonzero(reach < -SWAP_TOL)
            if hit.size and rnd < MAX_ROUNDS:
                last = hit[0]
                before = reach[last - 1] if last else d
                need = int(np.ceil((before + 2 * SWAP_TOL) / -pull[last]))
                kinds, units = kinds[: last + 1], units[: last + 1].copy()
                units[last] = min(units[last], max(1, need))
            new = _apply(flat, self.src, self.tgt, kinds, units)
            dd, newfit = self._fit(new[None], fit.beta[0])
            if dd[0] < -SWAP_TOL:
                return self._smallest_prefix(flat, done, kinds, units, fit)
            flat, fit, d, done = new, newfit, float(dd[0]), done + int(units.sum())
        return None, None

    def _smallest_prefix(self, flat, done, kinds, units, fit) -> tuple[int, np.ndarray]:
        """The fewest of this round's verdicts (taken in its order) that, after the ``done`` of
        earlier rounds, swap the pair; every prefix tried is refitted."""
        cum = np.cumsum(units)
        lo, hi = 0, int(cum[-1])          # prefix lo is known not to swap (or is 0), hi swaps

        def prefix(n: int) -> np.ndarray:
            take = np.clip(n - (cum - units), 0, units)
            return _apply(flat, self.src, self.tgt, kinds, take)

        while hi - lo > 1:
            grid = np.unique(np.linspace(lo + 1, hi - 1, num=min(PREFIX_GRID, hi - lo - 1)).round().astype(int))
            dd, _ = self._fit(np.stack([prefix(n) for n in grid]), fit.beta[0])
            swapped = grid[dd < -SWAP_TOL]
            if swapped.size:
                hi = int(swapped[0])
                below = grid[grid < hi]
                lo = int(below[-1]) if below.size else lo
            else:
                lo = int(grid[-1])
        return done + hi, (prefix(hi) - self.base).reshape(self.P, 3) + 0.0

    # -- small numbers, exhaustively -----------------------------------------------------------

    def _exhaustive(self, greedy: int | None) -> tuple[int | None, np.ndarray | None]:
        top = EXACT_UP_TO if greedy is None else min(EXACT_UP_TO, greedy - 1)
        if top < 1:
            return None, None
        pull = _kind_pulls(cell_pulls(self.data, self.data.counts, self.fit0, self.a, self.b, self.tie_model),
                           self.src, self.tgt)
        avail = np.flatnonzero(self.base[self.src] >= 1)
        restricted = len(avail) > SEARCH_KINDS
        if restricted:
            ranked = avail[np.argsort(pull[avail], kind="stable")]
        d0 = float(self.fit0.beta[0, self.a] - self.fit0.beta[0, self.b])
        for size in range(1, top + 1):
            if restricted:
                avail = ranked[: SEARCH_KINDS_OF_SIZE[size]]
                if FIRST_ORDER_SLACK * -pull[avail[:size]].sum() < d0:
                    continue   # the best `size` pulls, even tripled, do not reach: not worth the refits
            sets = [s for s in combinations_with_replacement(range(len(avail)), size) if self._fits_counts(avail, s)]
            if not sets:
                continue
            flats = np.stack([_apply(self.base, self.src, self.tgt, avail[list(s)], np.ones(size)) for s in sets])
            dd, _ = self._fit(flats, self.fit0.beta[0])
            hit = np.flatnonzero(dd < -SWAP_TOL)
            if hit.size:
                return size, (flats[hit[0]] - self.base).reshape(self.P, 3) + 0.0
        return None, None

    def _fits_counts(self, avail: np.ndarray, chosen: tuple) -> bool:
        used: dict[int, int] = {}
        for k in chosen:
            s = int(self.src[avail[k]])
            used[s] = used.get(s, 0) + 1
        return all(self.base[s] >= n for s, n in used.items())


# --------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------


def pair_fragility(data: ComparisonCounts, upper: int, lower: int, *, tie_model: str = "half",
                   fit: StackFit | None = None) -> PairFragility:
    """``drop`` and ``flip`` for ``upper`` (ranked above) and ``lower`` (indices into ``data.systems``)."""
    if fit is None:
        fit = fit_variants(data, data.counts[None], tie_model=tie_model)
    groups = comparison_groups(data)
    if groups[upper] != groups[lower]:
        return PairFragility(upper, lower, None, None)
    out = {}
    for mode in MODES:
        out[mode] = _Search(data, fit, upper, lower, mode, tie_model).run()
    return PairFragility(upper, lower, out["drop"][0], out["flip"][0], out["drop"][1], out["flip"][1])


def adjacent_fragility(data: ComparisonCounts, ranking: BTResult) -> list[PairFragility]:
    """:func:`pair_fragility` of each pair of neighbours in ``ranking`` (a ``fit_bradley_terry`` of
    ``data``), strongest first as the ranking table lists them (rank, then name)."""
    order = sorted(range(len(ranking.systems)), key=lambda k: (ranking.rank[k], ranking.systems[k]))
    fit = fit_variants(data, data.counts[None], tie_model=ranking.tie_model, start=ranking.beta)
    return [pair_fragility(data, a, b, tie_model=ranking.tie_model, fit=fit) for a, b in zip(order, order[1:])]


def words(fragility: dict | None) -> str:
    """A pair's ``{"drop": n, "flip": n}`` in words: "3 verdicts removed would swap them; 2 relabelled would"."""
    if fragility is None:
        return "not computed"
    drop, flip = fragility.get("drop"), fragility.get("flip")

    def count(n: int) -> str:
        return f"{n:,} verdict{'' if n == 1 else 's'}"

    first = ("no removal of verdicts found that swaps them" if drop is None
             else f"{count(drop)} removed would swap them")
    second = ("no relabelling found that swaps them" if flip is None
              else f"{count(flip)} relabelled would" if drop is not None else f"{count(flip)} relabelled would swap them")
    return f"{first}; {second}"
