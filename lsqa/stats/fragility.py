"""How many verdicts hold each adjacent pair of a Bradley-Terry ranking in place.

Dropping 2 of Chatbot Arena's 57,477 votes changes its top model (Huang, Broderick et al. 2025,
"Dropping just a handful of preferences can change top large language model rankings"). For two
neighbours A above B in a ranking (paper §3.2, ``lsqa.stats.ranking``) this module finds

* ``drop``: the fewest verdicts whose **removal** puts B above A (β_B > β_A after a refit), and
* ``flip``: the fewest verdicts whose **label change** (A / B / tie, to another of the three) does;
* ``inseparable_drop`` / ``inseparable_flip``: the fewest after which A and B are no longer separated
  by the Wald test of their difference, z = (β_A − β_B)/se ≤ z_crit (se = √(eᵀH⁻¹e), H the observed
  information of the ranking's penalised likelihood at the refit; 1.96 at the ranking's 95% level);
  0 where z ≤ z_crit already. Not the bootstrap rank intervals' "separated" (a bootstrap per
  candidate set is beyond reach): the analytic interval, which every exact refit gives with its Hessian.
  The same search, its target moved from β_A − β_B < 0 to β_A − β_B − z_crit·se ≤ 0; a swap counts too,
  so these never exceed ``drop`` / ``flip``.

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
   them is found by refitting prefixes (batched: first a few around the first-order crossing, rescaled
   to the refits that bracket it, then a grid), so the number reported is always a set a refit
   confirmed: an upper bound on the true minimum.
4. Small numbers exact. Every set of up to ``EXACT_UP_TO`` verdict kinds (cell, or cell and new label)
   smaller than the greedy answer is refitted, among all kinds when there are at most ``SEARCH_KINDS``
   of them (so up to 3 the answer is the exact minimum), else among the kinds with the largest pull
   (24 for one verdict, 12 for two, 8 for three) and only where their first-order pull could reach;
   among those, a set is refitted only when its one-step Newton estimate (H⁻¹ at the fit updated for
   the set by the Woodbury identity, Hager 1989) could swap the pair within a margin of the step's
   second-order error (``_Search._may_swap``).

The searches of all pairs run side by side (``_refit_all``): each round, every refit they ask for goes
into one batched ``fit_variants`` solve warm-started at the fit before it.

The cap is every verdict: ``None`` means that no removal (or label change) along the search put B
above A, even after every verdict that pulls that way was used (e.g. B never won anything: removing
verdicts cannot make it win). Pairs in comparison groups never linked get ``None`` too: their
strengths share no scale. Ties of β count as not swapped: B must be strictly above A.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations_with_replacement
from statistics import NormalDist

import numpy as np

from lsqa.stats.ranking import BTResult, ComparisonCounts, StackFit, comparison_groups, fit_variants

SWAP_TOL = 1e-7       # B is above A when β_B − β_A > this (fits converge to ~1e-10)
EXACT_UP_TO = 3       # sizes searched exhaustively below the greedy answer
SEARCH_KINDS = 40     # kinds of verdict searched exhaustively (all of them when there are no more) ...
SEARCH_KINDS_OF_SIZE = {1: 24, 2: 12, 3: 8}  # ... else, per set size, the kinds with the largest pull
FIRST_ORDER_SLACK = 3.0  # among many kinds: try size s only if s best pulls × this reach d
MAX_ROUNDS = 30       # greedy rounds before taking every remaining pulling verdict at once
PREFIX_GRID = 32      # prefixes refitted at once while narrowing the smallest swapping prefix ...
PREFIX_GUESSES = 2    # ... after this many rounds of 4 prefixes around the rescaled first-order crossing
SCREEN_RELATIVE = 0.25  # small sets refitted where the one-step Newton estimate, give or take this ...
SCREEN_SPREAD = 2.0     # ... plus this × the step's largest change of a pair's difference, could swap
REFIT_CHUNK = 256     # variants per batched refit
BLOCKS_FIRST = 512    # greedy: kinds ordered at first (all of them when these do not reach)
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
    inseparable_drop: int | None = None
    inseparable_flip: int | None = None
    inseparable_drop_change: np.ndarray | None = None
    inseparable_flip_change: np.ndarray | None = None

    def fields(self) -> dict:
        """The JSON field of the pair: ``{"drop": n, "flip": n, "inseparable": {"drop": n, "flip": n}}``
        (``inseparable``: the fewest that leave the analytic interval of β_upper − β_lower touching 0;
        0 when it already does)."""
        return {"drop": self.drop, "flip": self.flip,
                "inseparable": {"drop": self.inseparable_drop, "flip": self.inseparable_flip}}


# --------------------------------------------------------------------------------------------
# First order
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Curvature:
    """The penalised NLL near a fit: its Hessian ``H`` (k×k: β, then ln ν when ν is free), and per
    pair and outcome (P, 3) what one more verdict of that cell adds to the score (``a`` along
    e_i − e_j, ``b`` along ln ν) and to the pair's Hessian block (``h_dd``, ``h_dt``, ``h_tt``)."""

    H: np.ndarray
    a: np.ndarray
    b: np.ndarray
    h_dd: np.ndarray
    h_dt: np.ndarray
    h_tt: np.ndarray
    free_theta: bool


def _pair_units(d: np.ndarray, theta, tie_model: str, free_theta) -> tuple:
    """Per unit of each cell, at pair differences ``d`` (…, P): what one verdict adds to the score
    (``a`` along e_i − e_j, ``b`` along ln ν; (…, P, 3)) and to the pair's Hessian block (``h_dd``,
    ``h_dt``, ``h_tt``; (…, P)): ``bradley_terry.pair_derivatives``, which are linear in the counts."""
    if tie_model == "davidson":
        theta = np.asarray(theta, dtype=float)[..., None]
        lse = np.logaddexp(np.logaddexp(0.5 * d, -0.5 * d), theta)
        qi, qj, qt = np.exp(0.5 * d - lse), np.exp(-0.5 * d - lse), np.exp(theta - lse)
        diff = qi - qj
        a = np.stack([-0.5 + 0.5 * diff, 0.5 + 0.5 * diff, 0.5 * diff], axis=-1)
        free = np.asarray(free_theta, dtype=float)[..., None]
        b = np.stack([qt, qt, qt - 1.0], axis=-1) * free[..., None]
        return a, b, 0.25 * ((qi + qj) - diff * diff), -qt * 0.5 * diff * free, qt * (1.0 - qt) * free
    s = 1.0 / (1.0 + np.exp(-d))
    zero = np.zeros_like(d)
    return np.stack([s - 1.0, s, s - 0.5], axis=-1), np.zeros(d.shape + (3,)), s * (1.0 - s), zero, zero


def _hessians(data: ComparisonCounts, counts: np.ndarray, fit: StackFit, tie_model: str) -> tuple:
    """The Hessians (V, k, k) of the penalised NLL of V variants (``counts`` (V, P, 3), ``fit`` their
    fits): β, then ln ν under Davidson's model (an identity row where a variant's ν is fixed); plus
    the per-unit parts of :func:`_pair_units`. The shift of β, which the data do not fix, is pinned
    by a constant added to every β entry: it leaves every contrast's variance as it is."""
    m, P = len(data.systems), len(data.pairs)
    i, j = data.pairs[:, 0], data.pairs[:, 1]
    V = len(counts)
    d = fit.beta[:, i] - fit.beta[:, j]
    davidson = tie_model == "davidson"
    free = ~fit.theta_fixed if davidson else np.zeros(V, dtype=bool)
    a, b, unit_dd, unit_dt, unit_tt = _pair_units(d, fit.theta if davidson else None, tie_model, free)
    n = np.asarray(counts, dtype=float).reshape(V, P, 3).sum(axis=2)
    h = n * unit_dd
    k = m + 1 if davidson else m
    idx = np.concatenate([i * k + i, j * k + j, i * k + j, j * k + i])
    vals = np.concatenate([h, h, -h, -h], axis=1)
    H = np.bincount((np.arange(V)[:, None] * k * k + idx[None, :]).reshape(-1), weights=vals.reshape(-1),
                    minlength=V * k * k).reshape(V, k, k)
    H[:, np.arange(m), np.arange(m)] += fit.lam[:, None]
    H[:, :m, :m] += ((2.0 * h.sum(axis=1) / m + 1.0) / m)[:, None, None]
    if davidson:
        col = np.zeros((V, m))
        np.add.at(col, (slice(None), i), n * unit_dt)
        np.add.at(col, (slice(None), j), -n * unit_dt)
        H[:, :m, m] = H[:, m, :m] = col
        H[:, m, m] = np.where(free, (n * unit_tt).sum(axis=1) + fit.rho, 1.0)
    return H, a, b, unit_dd, unit_dt, unit_tt, bool(free[0])


def _curvature(data: ComparisonCounts, counts: np.ndarray, fit: StackFit, tie_model: str) -> _Curvature:
    H, a, b, h_dd, h_dt, h_tt, free_theta = _hessians(data, np.asarray(counts)[None], _take(fit, slice(0, 1)),
                                                      tie_model)
    k = len(data.systems) + (1 if free_theta else 0)
    return _Curvature(H[0][:k, :k], a[0], b[0], h_dd[0], h_dt[0], h_tt[0], free_theta)


def contrast_se(data: ComparisonCounts, counts: np.ndarray, fit: StackFit, upper: int, lower: int,
                tie_model: str) -> np.ndarray:
    """(V,): the standard error of β_upper − β_lower for each of V variants (``counts`` (V, P, 3),
    ``fit`` their ``fit_variants``): √(eᵀH⁻¹e), e = e_upper − e_lower, H the observed information
    (Hessian of the penalised NLL, as the ranking's own model and prior have it) at the variant's fit."""
    H = _hessians(data, counts, fit, tie_model)[0]
    e = np.zeros(H.shape[1])
    e[upper], e[lower] = 1.0, -1.0
    try:
        u = np.linalg.solve(H, np.broadcast_to(e, H.shape[:2])[..., None])[..., 0]
    except np.linalg.LinAlgError:
        u = np.stack([np.linalg.lstsq(h, e, rcond=None)[0] for h in H])
    return np.sqrt(np.maximum(u[:, upper] - u[:, lower], 0.0))


def _pulls_from(cur: _Curvature, pairs: np.ndarray, u: np.ndarray) -> np.ndarray:
    du = u[pairs[:, 0]] - u[pairs[:, 1]]
    return -(du[:, None] * cur.a + (u[-1] if cur.free_theta else 0.0) * cur.b)


def _solve(H: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(H, rhs)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(H, rhs, rcond=None)[0]


def cell_pulls(data: ComparisonCounts, counts: np.ndarray, fit: StackFit, upper: int, lower: int,
               tie_model: str, z: float = 0.0) -> np.ndarray:
    """(P, 3): first-order change of β_upper − β_lower per verdict added to each cell, at ``fit``
    (a one-variant ``fit_variants`` of ``counts``). Removing one verdict of cell k moves it by −pull[k].
    With ``z`` > 0, of the gap β_upper − β_lower − z·se (se: :func:`contrast_se`), se's change taken
    at the fit's β (the verdict's own information; its shift of β on the information is left out)."""
    cur = _curvature(data, counts, fit, tie_model)
    rhs = np.zeros(len(cur.H))
    rhs[upper], rhs[lower] = 1.0, -1.0
    u = _solve(cur.H, rhs)
    return _pulls_from(cur, data.pairs, u) - z * _se_pulls(cur, data.pairs, u, upper, lower)


def _se_pulls(cur: _Curvature, pairs: np.ndarray, u: np.ndarray, upper: int, lower: int) -> np.ndarray:
    """(P, 3): ∂se/∂(one verdict more in the cell) at fixed β, u = H⁻¹e: −uᵀ(ΔH)u / (2 se), the same
    for the three outcomes of a pair (a label change leaves it as it is)."""
    se = np.sqrt(max(u[upper] - u[lower], 1e-300))
    du = u[pairs[:, 0]] - u[pairs[:, 1]]
    quad = cur.h_dd * du * du
    if cur.free_theta:
        quad = quad + 2.0 * cur.h_dt * du * u[-1] + cur.h_tt * u[-1] ** 2
    return np.repeat((-quad / (2.0 * se))[:, None], 3, axis=1)


class _AtFit:
    """What every search shares at the full fit: H⁻¹, hence each pair's pulls and, for a few
    verdicts changed, the one-step Newton estimate of the refit (the screen of the small sets)."""

    def __init__(self, data: ComparisonCounts, fit: StackFit, tie_model: str):
        self.data, self.fit, self.tie_model, self.m = data, fit, tie_model, len(data.systems)
        self.cur = _curvature(data, data.counts, fit, tie_model)
        self._kinds: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        try:
            self.Hinv = np.linalg.inv(self.cur.H)
        except np.linalg.LinAlgError:
            self.Hinv = np.linalg.pinv(self.cur.H)

    def kinds(self, mode: str) -> tuple[np.ndarray, np.ndarray]:
        if mode not in self._kinds:
            self._kinds[mode] = _kinds(len(self.data.pairs), mode)
        return self._kinds[mode]

    def pulls(self, upper: int, lower: int, z: float = 0.0) -> np.ndarray:
        u = self.Hinv[:, upper] - self.Hinv[:, lower]
        out = _pulls_from(self.cur, self.data.pairs, u)
        return out - z * _se_pulls(self.cur, self.data.pairs, u, upper, lower) if z else out

    def one_step(self, src: np.ndarray, tgt: np.ndarray, kinds: np.ndarray,
                 contrast: tuple[int, int] | None = None):
        """(S, k): one Newton step from the fit for each of S sets of ``kinds`` (S, s), one verdict
        each. The perturbed Hessian is H + V C Vᵀ, V the sets' pair directions (and ln ν), so the
        step −(H + V C Vᵀ)⁻¹ V α is H⁻¹ V (I + C G)⁻¹ α with G = Vᵀ H⁻¹ V (Woodbury), O(s³) a set.
        None where some I + C G is singular. With ``contrast`` (upper, lower), also (S,) the variance
        eᵀ(H + V C Vᵀ)⁻¹e of β_upper − β_lower at the fit's β with the set's counts (Woodbury again:
        eᵀH⁻¹e − wᵀ(I + C G)⁻¹ C w, w = Vᵀ H⁻¹ e)."""
        cur, Hi, m = self.cur, self.Hinv, self.m
        S, s = kinds.shape
        pair = src[kinds] // 3
        i, j = self.data.pairs[pair, 0], self.data.pairs[pair, 1]
        A, Bt = cur.a.reshape(-1), cur.b.reshape(-1)
        t, has_t = np.maximum(tgt[kinds], 0), tgt[kinds] >= 0
        alpha = -A[src[kinds]] + np.where(has_t, A[t], 0.0)
        dn = np.where(has_t, 0.0, -1.0)     # a removal takes one from the pair's n; a relabel does not
        r = s + 1 if cur.free_theta else s
        G = np.zeros((S, r, r))
        G[:, :s, :s] = (Hi[i[:, :, None], i[:, None, :]] - Hi[i[:, :, None], j[:, None, :]]
                        - Hi[j[:, :, None], i[:, None, :]] + Hi[j[:, :, None], j[:, None, :]])
        C = np.zeros((S, r, r))
        C[:, np.arange(s), np.arange(s)] = dn * cur.h_dd[pair]
        al = np.zeros((S, r))
        al[:, :s] = alpha
        if cur.free_theta:
            G[:, :s, s] = G[:, s, :s] = Hi[i, m] - Hi[j, m]
            G[:, s, s] = Hi[m, m]
            C[:, :s, s] = C[:, s, :s] = dn * cur.h_dt[pair]
            C[:, s, s] = (dn * cur.h_tt[pair]).sum(axis=1)
            al[:, s] = (-Bt[src[kinds]] + np.where(has_t, Bt[t], 0.0)).sum(axis=1)
        if contrast is not None:
            up, low = contrast
            ue = Hi[:, up] - Hi[:, low]
            w = np.zeros((S, r))
            w[:, :s] = ue[i] - ue[j]
            if cur.free_theta:
                w[:, s] = ue[m]
            al = np.concatenate([al[..., None], (C @ w[..., None])], axis=2)
        else:
            al = al[..., None]
        try:
            sol = np.linalg.solve(np.eye(r) + C @ G, al)
        except np.linalg.LinAlgError:
            return None
        y = sol[..., 0]
        z = np.zeros((S, len(Hi)))
        rows = np.repeat(np.arange(S), s)
        np.add.at(z, (rows, i.reshape(-1)), y[:, :s].reshape(-1))
        np.add.at(z, (rows, j.reshape(-1)), -y[:, :s].reshape(-1))
        if cur.free_theta:
            z[:, m] = y[:, s]
        if contrast is not None:
            return -(z @ Hi), (ue[up] - ue[low]) - (w * sol[..., 1]).sum(axis=1)
        return -(z @ Hi)


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


def _smallest_first(values: np.ndarray, idx: np.ndarray, head: int | None) -> np.ndarray:
    """``idx`` in increasing ``values`` (stable), or only its first ``head`` and any tied with the last
    of them: the same head as the whole order's, at the cost of a partition."""
    if head is not None and len(idx) > head:
        v = values[idx]
        idx = idx[v <= np.partition(v, head - 1)[head - 1]]
    return idx[np.argsort(values[idx], kind="stable")]


def _take(fit: StackFit, rows: slice) -> StackFit:
    return StackFit(fit.beta[rows], None if fit.theta is None else fit.theta[rows], fit.lam[rows], fit.rho[rows],
                    fit.theta_fixed[rows])


# --------------------------------------------------------------------------------------------
# The search
# --------------------------------------------------------------------------------------------


class _Search:
    """The fewest verdicts of one mode that put ``lower`` above ``upper`` (``z`` = 0), or that make
    the gap β_upper − β_lower − z·se reach 0 (``z`` > 0: the two inseparable, :func:`contrast_se`).
    Below, "gap" is that quantity (β_upper − β_lower itself when z = 0) and a change "reaches" when a
    refit puts the gap below −``SWAP_TOL`` (swap) or at or below 0 (inseparable). ``run`` is a
    generator: it yields the cell counts it needs refitted (and β to start from) and is sent back
    their fits, so that :func:`_refit_all` batches the refits of every pair's search into shared solves."""

    def __init__(self, at: _AtFit, upper: int, lower: int, mode: str, fast: bool, z: float = 0.0):
        self.at, self.data, self.fit0, self.a, self.b = at, at.data, at.fit, upper, lower
        self.fast, self.z = fast, z
        self.edge = 0.0 if z else -SWAP_TOL
        self.P = len(self.data.pairs)
        self.base = np.floor(self.data.counts.reshape(-1) + 1e-9)
        self.src, self.tgt = at.kinds(mode)
        self.pull0 = _kind_pulls(at.pulls(upper, lower, z), self.src, self.tgt)
        d0 = float(self.fit0.beta[0, upper] - self.fit0.beta[0, lower])
        self.se0 = float(contrast_se(self.data, self.data.counts[None], self.fit0, upper, lower, at.tie_model)[0]) \
            if z else 0.0
        self.gap0 = d0 - z * self.se0

    def reached(self, gap) -> np.ndarray:
        return gap <= 0.0 if self.z else gap < -SWAP_TOL

    def _refit(self, flats: np.ndarray, start: np.ndarray):
        fit = yield flats, start
        gap = fit.beta[:, self.a] - fit.beta[:, self.b]
        if self.z:
            gap = gap - self.z * contrast_se(self.data, flats.reshape(len(flats), self.P, 3), fit, self.a, self.b,
                                             self.at.tie_model)
        return gap, fit

    def run(self):
        greedy = yield from self._greedy()
        best = yield from self._exhaustive(greedy[0])
        return best if best[0] is not None else greedy

    # -- greedy with exact refits --------------------------------------------------------------

    def _blocks(self, flat: np.ndarray, fit: StackFit | None, d: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Kinds with a negative pull, most negative first, each with the verdicts its source still
        has (a source cell's verdicts go to its first kind in that order). Only as far as needed:
        the first ``BLOCKS_FIRST`` when their first-order reach closes ``d`` (the same head as the
        whole list's), else all."""
        pull = self.pull0 if fit is None else _kind_pulls(
            cell_pulls(self.data, flat.reshape(self.P, 3), fit, self.a, self.b, self.at.tie_model, self.z),
            self.src, self.tgt)
        cand = np.flatnonzero((pull < 0) & (flat[self.src] >= 1))
        for head in (BLOCKS_FIRST, None):
            part = _smallest_first(pull, cand, head)
            _, first = np.unique(self.src[part], return_index=True)
            part = part[np.sort(first)]
            units = flat[self.src[part]]
            if head is None or len(part) == len(cand) or (d + np.cumsum(units * pull[part]) < self.edge).any():
                return part, units, pull[part]

    def _greedy(self):
        flat, fit = self.base.copy(), self.fit0
        d = self.gap0
        done = 0
        for rnd in range(MAX_ROUNDS + 1):
            kinds, units, pull = self._blocks(flat, None if rnd == 0 else fit, d)
            if not len(kinds):
                return None, None
            reach = d + np.cumsum(units * pull)
            hit = np.flatnonzero(reach < self.edge)
            if hit.size and rnd < MAX_ROUNDS:
                last = hit[0]
                before = reach[last - 1] if last else d
                need = int(np.ceil((before - self.edge + SWAP_TOL) / -pull[last]))
                kinds, units, pull = kinds[: last + 1], units[: last + 1].copy(), pull[: last + 1]
                units[last] = min(units[last], max(1, need))
            new = _apply(flat, self.src, self.tgt, kinds, units)
            dd, newfit = yield from self._refit(new[None], fit.beta[0])
            if self.reached(dd[0]):
                return (yield from self._smallest_prefix(flat, done, kinds, units, pull, fit, d, float(dd[0])))
            flat, fit, d, done = new, newfit, float(dd[0]), done + int(units.sum())
        return None, None

    def _smallest_prefix(self, flat, done, kinds, units, pull, fit, d_lo, d_hi):
        """The fewest of this round's verdicts (taken in its order) that, after the ``done`` of
        earlier rounds, swap the pair; every prefix tried is refitted. Fast: the first-order path of
        the round, rescaled to the refits that bracket the answer, says where to refit next (a few
        prefixes around its crossing); else, and when that does not close in, a grid of prefixes."""
        cum = np.cumsum(units)
        lo, hi = 0, int(cum[-1])          # prefix lo is known not to swap (or is 0), hi swaps
        path = np.concatenate([[0.0], np.cumsum(np.repeat(pull, units.astype(int)))])  # first order, per verdict
        guesses = PREFIX_GUESSES if self.fast else 0

        def prefix(n: int) -> np.ndarray:
            take = np.clip(n - (cum - units), 0, units)
            return _apply(flat, self.src, self.tgt, kinds, take)

        while hi - lo > 1:
            span = path[hi] - path[lo]
            if guesses and span < 0:
                guesses -= 1
                n = np.arange(lo + 1, hi)
                est = d_lo + (path[n] - path[lo]) * (d_hi - d_lo) / span
                cross = n[np.argmax(est < self.edge)] if (est < self.edge).any() else hi
                grid = np.unique(np.clip(cross + np.arange(-2, 2), lo + 1, hi - 1))
            else:
                grid = np.unique(np.linspace(lo + 1, hi - 1, num=min(PREFIX_GRID, hi - lo - 1)).round().astype(int))
            dd, _ = yield from self._refit(np.stack([prefix(n) for n in grid]), fit.beta[0])
            swapped = np.flatnonzero(self.reached(dd))
            if swapped.size:
                hi, d_hi = int(grid[swapped[0]]), float(dd[swapped[0]])
                if swapped[0]:
                    lo, d_lo = int(grid[swapped[0] - 1]), float(dd[swapped[0] - 1])
            else:
                lo, d_lo = int(grid[-1]), float(dd[-1])
        return done + hi, (prefix(hi) - self.base).reshape(self.P, 3) + 0.0

    # -- small numbers, exhaustively -----------------------------------------------------------

    def _exhaustive(self, greedy: int | None):
        top = EXACT_UP_TO if greedy is None else min(EXACT_UP_TO, greedy - 1)
        if top < 1:
            return None, None
        pull = self.pull0
        avail = np.flatnonzero(self.base[self.src] >= 1)
        restricted = len(avail) > SEARCH_KINDS
        if restricted:
            ranked = _smallest_first(pull, avail, max(SEARCH_KINDS_OF_SIZE.values()))
        d0 = self.gap0 - self.edge
        for size in range(1, top + 1):
            if restricted:
                avail = ranked[: SEARCH_KINDS_OF_SIZE[size]]
                if FIRST_ORDER_SLACK * -pull[avail[:size]].sum() < d0:
                    continue   # the best `size` pulls, even tripled, do not reach: not worth the refits
            sets = [s for s in combinations_with_replacement(range(len(avail)), size) if self._fits_counts(avail, s)]
            if not sets:
                continue
            chosen = avail[np.array(sets)]
            if restricted and self.fast:
                chosen = chosen[self._may_swap(chosen, d0)]
                if not len(chosen):
                    continue
            flats = np.stack([_apply(self.base, self.src, self.tgt, c, np.ones(size)) for c in chosen])
            dd, _ = yield from self._refit(flats, self.fit0.beta[0])
            hit = np.flatnonzero(self.reached(dd))
            if hit.size:
                return size, (flats[hit[0]] - self.base).reshape(self.P, 3) + 0.0
        return None, None

    def _may_swap(self, chosen: np.ndarray, d0: float) -> np.ndarray:
        """Which sets a refit must check: those whose one-step Newton estimate of β_A − β_B comes
        within a margin of 0 (of z·se, inseparable). The step's error is second order in its size, so
        the margin is the step's effect on the pair times (``SCREEN_RELATIVE`` + ``SCREEN_SPREAD`` ×
        the largest change of any pair's difference), plus that change squared. se: its Woodbury
        value at the fit's β with the set's counts, times e^(``SCREEN_SPREAD`` × that change, and
        ln ν's): a pair's information changes by at most e^(±its difference's change) under eq. 1,
        so the refit's se is within e^(±change/2) of it."""
        out = self.at.one_step(self.src, self.tgt, chosen, (self.a, self.b) if self.z else None)
        if out is None:
            return np.ones(len(chosen), dtype=bool)
        dx, var = out if self.z else (out, None)
        m = self.at.m
        d0 = float(self.fit0.beta[0, self.a] - self.fit0.beta[0, self.b])
        step = dx[:, self.a] - dx[:, self.b]
        spread = dx[:, :m].max(axis=1) - dx[:, :m].min(axis=1)
        margin = (SCREEN_RELATIVE + SCREEN_SPREAD * spread) * np.abs(step) + spread * spread
        if not self.z:
            return d0 + step - margin < 0.0
        change = spread + (np.abs(dx[:, m]) if self.at.cur.free_theta else 0.0)
        se_high = np.sqrt(np.maximum(var, 0.0)) * np.exp(SCREEN_SPREAD * change)
        return d0 + step - margin <= self.z * se_high

    def _fits_counts(self, avail: np.ndarray, chosen: tuple) -> bool:
        used: dict[int, int] = {}
        for k in chosen:
            s = int(self.src[avail[k]])
            used[s] = used.get(s, 0) + 1
        return all(self.base[s] >= n for s, n in used.items())


def _refit_all(data: ComparisonCounts, tie_model: str, searches: list[_Search]) -> list:
    """Run the searches side by side: each round, every refit they ask for goes into shared
    ``fit_variants`` solves (``REFIT_CHUNK`` variants each), so the per-solve cost is paid once a round."""
    m, P = len(data.systems), len(data.pairs)
    runs = [s.run() for s in searches]
    results: list = [None] * len(runs)
    pending: dict[int, tuple] = {}

    def advance(k: int, value) -> None:
        try:
            pending[k] = runs[k].send(value)
        except StopIteration as stop:
            results[k] = stop.value
            pending.pop(k, None)

    for k in range(len(runs)):
        advance(k, None)
    while pending:
        keys = list(pending)
        flats = np.concatenate([pending[k][0] for k in keys])
        starts = np.concatenate([np.broadcast_to(pending[k][1], (len(pending[k][0]), m)) for k in keys])
        parts = [fit_variants(data, flats[c: c + REFIT_CHUNK].reshape(-1, P, 3), tie_model=tie_model,
                              start=starts[c: c + REFIT_CHUNK]) for c in range(0, len(flats), REFIT_CHUNK)]
        fit = StackFit(np.concatenate([f.beta for f in parts]),
                       None if parts[0].theta is None else np.concatenate([f.theta for f in parts]),
                       np.concatenate([f.lam for f in parts]), np.concatenate([f.rho for f in parts]),
                       np.concatenate([f.theta_fixed for f in parts]))
        off = 0
        for k in keys:
            n = len(pending[k][0])
            advance(k, _take(fit, slice(off, off + n)))
            off += n
    return results


# --------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------


def z_crit(level: float) -> float:
    """The two-sided normal critical value of ``level`` (1.96 at 0.95)."""
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def _fragility(data: ComparisonCounts, pairs: list[tuple[int, int]], tie_model: str, fit: StackFit,
               fast: bool, level: float) -> list[PairFragility]:
    groups = comparison_groups(data)
    at = _AtFit(data, fit, tie_model)
    z = z_crit(level)
    linked = [(a, b) for a, b in pairs if groups[a] == groups[b]]
    searches = [_Search(at, a, b, mode, fast, zz) for a, b in linked for zz in (0.0, z) for mode in MODES]
    # already inseparable: 0 verdicts, nothing to search
    todo = [s for s in searches if not (s.z and s.reached(s.gap0))]
    done = dict(zip(map(id, todo), _refit_all(data, tie_model, todo), strict=False))
    found = iter(done.get(id(s), (0, np.zeros((len(data.pairs), 3)))) for s in searches)
    out = {}
    for a, b in linked:
        (drop, drop_change), (flip, flip_change) = next(found), next(found)
        insep = []
        for swap, swap_change in ((drop, drop_change), (flip, flip_change)):
            n, change = next(found)
            if swap is not None and (n is None or swap < n):   # a swap leaves them inseparable too
                n, change = swap, swap_change
            insep += [n, change]
        out[(a, b)] = PairFragility(a, b, drop, flip, drop_change, flip_change, insep[0], insep[2], insep[1], insep[3])
    return [out.get((a, b), PairFragility(a, b, None, None)) for a, b in pairs]


def pair_fragility(data: ComparisonCounts, upper: int, lower: int, *, tie_model: str = "half",
                   fit: StackFit | None = None, fast: bool = True, level: float = 0.95) -> PairFragility:
    """``drop`` and ``flip`` for ``upper`` (ranked above) and ``lower`` (indices into ``data.systems``),
    and their ``inseparable_*`` at ``level``. ``fast=False`` refits every small set and narrows
    prefixes by grid only (the reference the fast path is tested against); both report only sets an
    exact refit confirmed."""
    if fit is None:
        fit = fit_variants(data, data.counts[None], tie_model=tie_model)
    return _fragility(data, [(upper, lower)], tie_model, fit, fast, level)[0]


def adjacent_fragility(data: ComparisonCounts, ranking: BTResult, *, fast: bool = True,
                       level: float = 0.95) -> list[PairFragility]:
    """:func:`pair_fragility` of each pair of neighbours in ``ranking`` (a ``fit_bradley_terry`` of
    ``data``), strongest first as the ranking table lists them (rank, then name); all pairs' refits
    share batched solves."""
    order = sorted(range(len(ranking.systems)), key=lambda k: (ranking.rank[k], ranking.systems[k]))
    fit = fit_variants(data, data.counts[None], tie_model=ranking.tie_model, start=ranking.beta)
    return _fragility(data, list(zip(order, order[1:], strict=False)), ranking.tie_model, fit, fast, level)


def words(fragility: dict | None) -> str:
    """A pair's ``{"drop": n, "flip": n}`` in words: "3 verdicts removed would swap them; 2 relabelled would",
    then, with ``inseparable``, "(inseparable: 1 removed; 1 relabelled)" or "(already inseparable)"."""
    if fragility is None:
        return "not computed"
    drop, flip = fragility.get("drop"), fragility.get("flip")

    def count(n: int) -> str:
        return f"{n:,} verdict{'' if n == 1 else 's'}"

    first = ("no removal of verdicts found that swaps them" if drop is None
             else f"{count(drop)} removed would swap them")
    second = ("no relabelling found that swaps them" if flip is None
              else f"{count(flip)} relabelled would" if drop is not None else f"{count(flip)} relabelled would swap them")
    insep = fragility.get("inseparable")
    if not insep:
        return f"{first}; {second}"
    a, b = insep.get("drop"), insep.get("flip")
    if a == 0 or b == 0:
        return f"{first}; {second} (already inseparable)"

    ra = "no removal found" if a is None else f"{a:,} removed"
    rb = "no relabelling found" if b is None else f"{b:,} relabelled"
    return f"{first}; {second} (inseparable: {ra}; {rb})"
