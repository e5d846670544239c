"""The one Bradley-Terry fitting core: plain, with covariates, and weighted; batched Newton and sandwich covariance.

Every Bradley-Terry in lsqa is fitted here: the plain ranking (paper §3.2 eq. 1-2, ``lsqa.stats.ranking``,
half-win ties or Davidson's tie model), style control (covariates such as the length difference,
``lsqa.stats.style_control``; Li et al. 2024, LMSYS blog "Does style matter?") and the corrected PPI++ fit
(weighted pseudo-counts, ``lsqa.stats.corrected``; Angelopoulos et al. 2023, Boyeau et al. 2024).

Model. A *cell* ``r`` is a comparison of system ``i_r`` with ``j_r`` at covariates ``z_r`` (k of them,
possibly none), holding outcome counts ``(wins of i, wins of j, ties)``; its logit is

    η_r = β_i − β_j + z_rᵀc

and the loss is the negative log-likelihood summed over cells (ties half a win each: ``n·softplus(η) −
(wins_i + ties/2)·η``; Davidson 1970: see :func:`pair_nll`), plus the ridge ``(λ/2)(|β|² + |c|²)`` where the
maximum-likelihood estimate does not exist, minus ``offsetᵀc`` (the exact linear part of rows binned into
one cell, below). Counts may be fractional, and for PPI++'s rectified pseudo-data even negative (the
curvature then uses the non-negative part, which keeps every Newton step a descent direction).

Identification: the likelihood depends on β only through differences; mean β = 0 throughout (the Newton
Hessian gets ``a·11ᵀ`` on its β block, which pins the shift without changing the step). An anchor is a
shift applied afterwards (:func:`identify`).

Fit: damped Newton (IRLS) with backtracking on a whole stack of B datasets at once that share cells and
covariates (bootstrap rounds, what-if variants): a round costs one small linear solve per Newton step,
independent of the number of raw comparisons. Newton rather than Hunter's (2004) MM: quadratic convergence.

Covariance: the sandwich (robust, Huber 1967; White 1980) ``H⁻¹ J H⁻¹`` with ``H`` the Hessian and ``J`` the
sum of the outer products of the per-comparison scores, or of their sums per cluster (a question: the
cluster-robust form, Liang & Zeger 1986), identified like β (:func:`sandwich`). It is what arena-rank
reports for plain and contextual Bradley-Terry and what ppi-python uses for PPI++ logistic regression.

Aggregating rows with covariates (:func:`covariate_cells`). A covariate per comparison means one row per
verdict; rows are therefore collapsed per (pair, covariate cell). Up to ``EXACT_MAX_ROWS`` rows a cell is
one pair at one exact covariate value: the fit is the per-row maximum-likelihood fit, only faster. Above,
each covariate is cut into ``BINS`` equal bins; a cell's rows are replaced by two pseudo-rows at ``z̄ ± √v``
per covariate (mean and variance of the cell's rows, each with half the counts: a two-point rule that matches
the first two moments, so the softplus term is exact to fourth order in the within-cell spread), and the
linear term ``Σ y_r z_r``, which cells cannot hold, enters exactly through ``offset``. A million verdicts
among 100 systems become at most pairs × bins × 2 cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

FALLBACK_PRIOR = 0.1          # λ of the Gaussian prior on β when the MLE does not exist
FALLBACK_TIE_PRIOR = 0.1      # same, on ln ν, for Davidson data made only of ties
THETA_NO_TIES = -50.0         # ln ν held here (ν ≈ 2e-22, i.e. plain BT) for data without ties
NEWTON_TOL = 1e-10            # stop when every parameter moves less than this, or ...
STEP_TOL = 1e-6               # ... after a full Newton step below this (error then ~ STEP_TOL²)
NEWTON_MAX_ITER = 200
MAX_BACKTRACK = 40
SAFE_STEP = 1e-3              # Newton steps smaller than this are taken without a line search
EXACT_MAX_ROWS = 50_000       # up to this many rows, covariate cells are exact (one covariate value each)
BINS = 20                     # above it, bins per covariate (two pseudo-rows per cell: module docstring)


def sigmoid(x):
    """Stable logistic: exp of a non-positive number only."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def softplus(x):
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def identify(beta: np.ndarray, systems, anchor: str | None) -> np.ndarray:
    """Shift β (last axis) to mean 0, or so that the anchor system has β exactly 0."""
    if anchor is None:
        return beta - beta.mean(axis=-1, keepdims=True)
    if anchor not in systems:
        raise ValueError(f"anchor system {anchor!r} is not among the systems {list(systems)}; use one of them")
    a = list(systems).index(anchor)
    return beta - beta[..., a : a + 1]


def identify_cov(cov: np.ndarray, m: int, systems=None, anchor: str | None = None) -> np.ndarray:
    """The covariance of mean-0 β (first ``m`` parameters) re-identified like :func:`identify` (anchor)."""
    if anchor is None:
        return cov
    a = list(systems).index(anchor)
    T = np.eye(len(cov))
    T[:m, a] -= 1.0
    return T @ cov @ T.T


# --------------------------------------------------------------------------------------------
# The problem: B datasets on the same cells
# --------------------------------------------------------------------------------------------


@dataclass
class Problem:
    """B datasets on the same m systems and P cells; counts ``c`` of shape (B, P, 3).

    ``pairs[p] = (i, j)`` (any order, repeats allowed: several cells of one pair at other covariates),
    ``z`` (P, k) covariates or None, ``offset`` (k,) or (B, k) the exact linear term of binned rows."""

    m: int
    pairs: np.ndarray
    c: np.ndarray
    tie_model: str
    lam: np.ndarray               # (B,) ridge on β (and on the covariates' coefficients)
    rho: np.ndarray               # (B,) ridge on θ = ln ν (Davidson only)
    theta_fixed: np.ndarray | None = None  # (B,) bool: θ held fixed (data without ties)
    z: np.ndarray | None = None
    offset: np.ndarray | None = None
    Dt: sparse.csr_matrix = field(init=False)     # (m, P) incidence, transposed: +1 at i, -1 at j
    absDt: sparse.csr_matrix = field(init=False)
    off_ij: np.ndarray = field(init=False)   # flat indices of H[i, j] and H[j, i], one per distinct pair
    off_ji: np.ndarray = field(init=False)
    to_pairs: sparse.csr_matrix | None = field(init=False)  # (P, distinct pairs) when pairs repeat

    def __post_init__(self):
        P, m = len(self.pairs), self.m
        # Sparse: products with the incidence matrix cost O(B·P), not O(B·P·m), and stay off BLAS
        # threads (which only fight each other on a small, shared machine).
        rows = np.concatenate([self.pairs[:, 0], self.pairs[:, 1]])
        cols = np.concatenate([np.arange(P), np.arange(P)])
        self.Dt = sparse.csr_matrix((np.r_[np.ones(P), -np.ones(P)], (rows, cols)), shape=(m, P))
        self.absDt = abs(self.Dt)
        lo, hi = np.minimum(self.pairs[:, 0], self.pairs[:, 1]), np.maximum(self.pairs[:, 0], self.pairs[:, 1])
        key = lo * m + hi
        uniq, inv = np.unique(key, return_inverse=True)
        if len(uniq) == P and (P == 0 or np.all(self.pairs[:, 0] != self.pairs[:, 1])) and np.array_equal(
                np.sort(key), key) and np.array_equal(lo, self.pairs[:, 0]):
            self.to_pairs = None
            self.off_ij = self.pairs[:, 0] * m + self.pairs[:, 1]
            self.off_ji = self.pairs[:, 1] * m + self.pairs[:, 0]
        else:
            self.to_pairs = sparse.csr_matrix((np.ones(P), (np.arange(P), inv)), shape=(P, len(uniq)))
            self.off_ij = (uniq // m) * m + uniq % m
            self.off_ji = (uniq % m) * m + uniq // m
        if self.theta_fixed is None:
            self.theta_fixed = np.zeros(len(self.lam), dtype=bool)
        if self.z is not None:
            self.z = np.asarray(self.z, dtype=float).reshape(P, -1)
            if self.tie_model != "half":
                raise ValueError("covariates are fitted with ties as half a win (tie_model='half')")

    @property
    def n_cov(self) -> int:
        return 0 if self.z is None else self.z.shape[1]

    @property
    def k(self) -> int:
        return self.m + (self.tie_model == "davidson") + self.n_cov


def pair_nll(d, theta, c, tie_model):
    """Per-dataset negative log-likelihood, summed over cells, as a function of the logit d.

    half:     NLL = n·softplus(d) − w_i·d, with w_i = wins_i + ties/2 (eq. 2 per pair).
    davidson: NLL = −(wins_i − wins_j)·d/2 − ties·θ + n·ln(e^{d/2} + e^{−d/2} + e^θ), θ = ln ν.
    """
    wi, wj, t = c[..., 0], c[..., 1], c[..., 2]
    n = wi + wj + t
    if tie_model == "half":
        return np.sum(n * softplus(d) - (wi + 0.5 * t) * d, axis=-1)
    th = theta[:, None]
    lse = np.logaddexp(np.logaddexp(0.5 * d, -0.5 * d), th)
    return np.sum(-(wi - wj) * 0.5 * d - t * th + n * lse, axis=-1)


def pair_derivatives(d, theta, c, tie_model) -> dict:
    """First and second derivatives of :func:`pair_nll` in d (per cell) and θ (summed)."""
    wi, wj, t = c[..., 0], c[..., 1], c[..., 2]
    n = wi + wj + t
    if tie_model == "half":
        s = sigmoid(d)
        return dict(g_d=n * s - (wi + 0.5 * t), h_dd=np.maximum(n, 0.0) * s * (1.0 - s))
    th = theta[:, None]
    lse = np.logaddexp(np.logaddexp(0.5 * d, -0.5 * d), th)
    qi, qj, qt = np.exp(0.5 * d - lse), np.exp(-0.5 * d - lse), np.exp(th - lse)
    diff = qi - qj
    return dict(
        g_d=-(wi - wj) * 0.5 + n * 0.5 * diff,
        h_dd=n * 0.25 * ((qi + qj) - diff * diff),
        g_t=np.sum(-t + n * qt, axis=-1),
        h_dt=-n * qt * 0.5 * diff,
        h_tt=np.sum(n * qt * (1.0 - qt), axis=-1),
    )


def logits(prob: Problem, x: np.ndarray) -> np.ndarray:
    """η[b, p] = β_i − β_j (+ z_pᵀc) for cell p = (i, j)."""
    beta = x[:, : prob.m]
    eta = beta[:, prob.pairs[:, 0]] - beta[:, prob.pairs[:, 1]]
    if prob.z is not None:
        eta = eta + x[:, prob.k - prob.n_cov:] @ prob.z.T
    return eta


def to_systems(Dt: sparse.csr_matrix, per_pair: np.ndarray) -> np.ndarray:
    """Σ over cells of per-cell values into their systems: (B, P) → (B, m)."""
    return np.asarray((Dt @ per_pair.T).T)


def _theta(prob: Problem, x):
    return x[:, prob.m] if prob.tie_model == "davidson" else None


def _offset(prob: Problem, rows) -> np.ndarray | None:
    if prob.offset is None:
        return None
    off = np.asarray(prob.offset, dtype=float)
    return off[rows] if off.ndim == 2 else np.broadcast_to(off, (len(rows), off.shape[-1]))


def objective(prob: Problem, x, rows):
    theta = _theta(prob, x)
    nll = pair_nll(logits(prob, x), theta, prob.c[rows], prob.tie_model)
    beta = x[:, : prob.m]
    coef = x[:, prob.k - prob.n_cov:] if prob.n_cov else None
    pen = np.sum(beta * beta, axis=1) + (np.sum(coef * coef, axis=1) if coef is not None else 0.0)
    nll = nll + 0.5 * prob.lam[rows] * pen
    if theta is not None:
        nll = nll + 0.5 * prob.rho[rows] * theta * theta
    off = _offset(prob, rows)
    if off is not None:
        nll = nll - np.sum(off * coef, axis=1)
    return nll


def gram(prob: Problem, h: np.ndarray, *, pin: bool = True) -> np.ndarray:
    """Σ_cells h·x xᵀ over the β and covariate parameters, x = (e_i − e_j, z), as (B, k, k) (θ's row and
    column left 0); with ``pin`` the β block gets ``a·11ᵀ`` (the shift, which the data do not fix)."""
    m, nb = prob.m, h.shape[0]
    diag = to_systems(prob.absDt, h)
    hp = h if prob.to_pairs is None else np.asarray((prob.to_pairs.T @ h.T).T)
    Hb = np.zeros((nb, m * m))
    Hb[:, prob.off_ij] = -hp
    Hb[:, prob.off_ji] = -hp
    Hb[:, np.arange(m) * (m + 1)] += diag
    if pin:  # a·11ᵀ pins the shift; a of the order of the curvature keeps the system well scaled
        Hb += (diag.mean(axis=1, keepdims=True) + 1.0) / m
    if prob.k == m:
        return Hb.reshape(nb, m, m)
    H = np.zeros((nb, prob.k, prob.k))
    H[:, :m, :m] = Hb.reshape(nb, m, m)
    q = prob.n_cov
    if q:
        z = prob.z
        cross = np.stack([to_systems(prob.Dt, h * z[:, col]) for col in range(q)], axis=2)   # (B, m, q)
        H[:, :m, -q:] = cross
        H[:, -q:, :m] = cross.transpose(0, 2, 1)
        H[:, -q:, -q:] = np.einsum("bp,pk,pl->bkl", h, z, z)
    return H


def newton(prob: Problem, x0: np.ndarray, tol: float = NEWTON_TOL, max_iter: int = NEWTON_MAX_ITER):
    """Damped Newton on the (penalised) negative log-likelihood for all B datasets at once.

    The β-block of the Hessian is a weighted graph Laplacian, singular along 1 (β is defined up to
    a shift). Adding ``a·11ᵀ`` makes it invertible without changing the step: the gradient sums to
    −λ·Σβ = 0 for mean-zero β, so the step stays mean-zero and β keeps mean 0 throughout.
    Returns (x, iterations, converged)."""
    m, k, q = prob.m, prob.k, prob.n_cov
    x = np.array(x0, dtype=float)
    B = x.shape[0]
    iters = np.zeros(B, dtype=np.int64)
    fval = np.full(B, np.nan)  # objective at the current point, when known
    active = np.arange(B)
    flat = np.zeros(B, dtype=bool)  # met a singular Hessian: not converged, whatever its last step
    davidson = prob.tie_model == "davidson"
    for _ in range(max_iter):
        if active.size == 0:
            break
        xa = x[active]
        ca = prob.c[active]
        lam, rho = prob.lam[active], prob.rho[active]
        beta = xa[:, :m]
        theta = xa[:, m] if davidson else None
        t = pair_derivatives(logits(prob, xa), theta, ca, prob.tie_model)

        nb = active.size
        grad = np.empty((nb, k))
        grad[:, :m] = to_systems(prob.Dt, t["g_d"]) + lam[:, None] * beta
        if q:
            coef = xa[:, k - q:]
            grad[:, k - q:] = t["g_d"] @ prob.z + lam[:, None] * coef
            off = _offset(prob, active)
            if off is not None:
                grad[:, k - q:] -= off
        H = gram(prob, t["h_dd"])
        if q:
            H[:, k - q:, k - q:] += lam[:, None, None] * np.eye(q)
        H[:, np.arange(m), np.arange(m)] += lam[:, None]
        if davidson:
            grad[:, m] = t["g_t"] + rho * theta
            hbt = to_systems(prob.Dt, t["h_dt"])
            H[:, :m, m] = hbt
            H[:, m, :m] = hbt
            H[:, m, m] = t["h_tt"] + rho
            fixed = prob.theta_fixed[active]
            if fixed.any():  # decouple θ so that its Newton step is 0
                grad[fixed, m] = 0.0
                H[fixed, m, :] = 0.0
                H[fixed, :, m] = 0.0
                H[fixed, m, m] = 1.0
        step, singular = newton_steps(H, grad)
        if singular.any():  # no unique Newton step: this dataset's MLE is not a finite point (see newton_steps)
            flat[active[singular]] = True
            step[singular] = 0.0

        # Backtracking: halve the step of any dataset whose objective did not decrease. Inside
        # Newton's quadratic region a tiny step cannot overshoot: only larger ones are checked,
        # so the objective is rarely evaluated once the fit is warm.
        scale = np.ones(nb)
        big = np.max(np.abs(step), axis=1) > SAFE_STEP
        todo = np.flatnonzero(big)
        if todo.size:
            current = fval[active[todo]]
            unknown = np.isnan(current)
            if unknown.any():
                current[unknown] = objective(prob, xa[todo[unknown]], active[todo[unknown]])
            for _ in range(MAX_BACKTRACK):
                trial = xa[todo] + scale[todo, None] * step[todo]
                new = objective(prob, trial, active[todo])
                bad = new > current + 1e-12 * (1.0 + np.abs(current))
                fval[active[todo[~bad]]] = new[~bad]  # objective at the accepted point, for next time
                if not bad.any():
                    break
                todo, current = todo[bad], current[bad]
                scale[todo] *= 0.5
        fval[active[~big]] = np.nan  # moved without evaluating: value unknown
        move = scale[:, None] * step
        x[active] = xa + move
        iters[active] += 1
        # Quadratic convergence: after a full step of size s the error is O(s²), so a full step
        # below STEP_TOL leaves an error far below NEWTON_TOL and the confirming step is skipped.
        size = np.max(np.abs(move), axis=1)
        done = (size < tol) | ((size < STEP_TOL) & (scale == 1.0)) | singular
        active = active[~done]
    converged = ~flat
    converged[active] = False
    return x, iters, converged


def newton_steps(H: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton steps ``-H⁻¹·grad`` of a stack of datasets, and which datasets had a singular ``H``.

    ``H`` is positive definite wherever the fit has a finite optimum. It is singular where the
    likelihood is flat along some direction: Davidson data whose likelihood is highest at infinity
    (e.g. one pair only ties, another only wins of one side: ν → ∞ while β spreads out), or a
    covariate that alone separates the outcomes. One such dataset must not stop the others (a
    bootstrap fits hundreds at once): it is reported, and its caller refits it with the fallback priors."""
    try:
        return -np.linalg.solve(H, grad[..., None])[..., 0], np.zeros(len(H), dtype=bool)
    except np.linalg.LinAlgError:
        steps, singular = np.zeros_like(grad), np.zeros(len(H), dtype=bool)
        for r in range(len(H)):
            try:
                steps[r] = -np.linalg.solve(H[r], grad[r])
            except np.linalg.LinAlgError:
                singular[r] = True
        return steps, singular


# --------------------------------------------------------------------------------------------
# Sandwich (robust) covariance
# --------------------------------------------------------------------------------------------


def constrained_inverse(H: np.ndarray, m: int) -> np.ndarray:
    """``H⁻¹`` on the mean-0 β subspace: ``P (H + a·ee ᵀ)⁻¹ P`` with e = (1_m, 0), P the centring of β."""
    k = len(H)
    e = np.zeros(k)
    e[:m] = 1.0
    a = (np.trace(H[:m, :m]) / m + 1.0) / m
    inv = np.linalg.inv(H + a * np.outer(e, e))
    P = np.eye(k)
    P[:m, :m] -= 1.0 / m
    return P @ inv @ P


@dataclass(frozen=True)
class Rows:
    """Comparisons one per row, for the sandwich: systems ``ia`` / ``ib``, outcome ``y`` of A (1, 0, ½),
    covariates ``z`` (N, k) or None, weight ``w`` of each comparison's score, ``n`` how many identical
    comparisons the row stands for (counts of a cell), cluster index (with ``n`` = 1) or None."""

    ia: np.ndarray
    ib: np.ndarray
    y: np.ndarray
    z: np.ndarray | None = None
    w: np.ndarray | None = None
    cluster: np.ndarray | None = None
    n: np.ndarray | None = None


def row_scores_meat(m: int, x: np.ndarray, rows: Rows) -> np.ndarray:
    """``J = Σ g gᵀ`` of the per-row scores ``g = w(σ(η) − y)·(e_a − e_b, z)`` at parameters ``x`` (β then
    the covariates' coefficients), summed within each cluster first when ``rows.cluster`` is given."""
    q = 0 if rows.z is None else rows.z.shape[1]
    beta, coef = x[:m], x[m:m + q]
    eta = beta[rows.ia] - beta[rows.ib]
    if q:
        eta = eta + rows.z @ coef
    r = sigmoid(eta) - rows.y
    if rows.w is not None:
        r = r * rows.w
    K = m + q
    if rows.cluster is None:
        return gram_rows(m, rows.ia, rows.ib, rows.z, r * r if rows.n is None else rows.n * r * r)
    n = len(r)
    cols = [rows.ia, rows.ib] + [np.full(n, m + col) for col in range(q)]
    vals = [r, -r] + [r * rows.z[:, col] for col in range(q)]
    G = sparse.csr_matrix((np.concatenate(vals), (np.tile(rows.cluster, 2 + q), np.concatenate(cols))),
                          shape=(int(rows.cluster.max()) + 1, K))
    return np.asarray((G.T @ G).todense())


def gram_rows(m: int, ia: np.ndarray, ib: np.ndarray, z: np.ndarray | None, h: np.ndarray) -> np.ndarray:
    """``Σ h·x xᵀ`` over rows with x = (e_a − e_b, z), (K, K), by bincount (no N × K matrix)."""
    q = 0 if z is None else z.shape[1]
    K = m + q
    M = (np.bincount(ia * m + ia, h, m * m) + np.bincount(ib * m + ib, h, m * m)
         - np.bincount(ia * m + ib, h, m * m) - np.bincount(ib * m + ia, h, m * m)).reshape(m, m)
    out = np.zeros((K, K))
    out[:m, :m] = M
    if q:
        hz = h[:, None] * z
        cross = np.stack([np.bincount(ia, hz[:, col], m) - np.bincount(ib, hz[:, col], m) for col in range(q)], 1)
        out[:m, m:] = cross
        out[m:, :m] = cross.T
        out[m:, m:] = z.T @ hz
    return out


def sandwich(m: int, x: np.ndarray, rows: Rows, lam: float = 0.0) -> np.ndarray:
    """Sandwich covariance ``H⁻¹ J H⁻¹`` of (β, c) at the fit ``x`` (β mean 0), half-win ties.

    ``H`` is the Hessian of the (penalised) loss, ``J`` the outer products of the per-row scores
    (per cluster when given): robust to a misspecified tie model and to overdispersion. Identified
    like β (mean 0); pass the result through :func:`identify_cov` for an anchor."""
    q = 0 if rows.z is None else rows.z.shape[1]
    beta, coef = x[:m], x[m:m + q]
    eta = beta[rows.ia] - beta[rows.ib]
    if q:
        eta = eta + rows.z @ coef
    s = sigmoid(eta)
    h = s * (1 - s) if rows.w is None else np.maximum(rows.w, 0.0) * s * (1 - s)
    if rows.n is not None:
        h = rows.n * h
    H = gram_rows(m, rows.ia, rows.ib, rows.z, h) + lam * np.eye(m + q)
    Hi = constrained_inverse(H, m)
    return Hi @ row_scores_meat(m, x, rows) @ Hi


# --------------------------------------------------------------------------------------------
# Rows with covariates → cells
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CovariateCells:
    """Rows collapsed per (ordered pair, covariate cell): ``pairs`` (P, 2) with i < j, ``counts`` (P, 3)
    (wins of i, of j, ties; weighted), ``z`` (P, k) from i's side, ``offset`` (k,) (module docstring);
    ``exact`` when every cell holds one covariate value (no binning). ``slot_of_row`` maps each row to its
    (source cell, outcome) slot ``3·cell + outcome`` and ``split`` each source cell to its 1-2 cells;
    ``slot_offset`` (3·cells, k) the offset each slot's rows contribute (for resampled rounds)."""

    pairs: np.ndarray
    counts: np.ndarray
    z: np.ndarray
    offset: np.ndarray
    exact: bool
    n_source: int
    slot_of_row: np.ndarray
    split: sparse.csr_matrix
    slot_offset: np.ndarray

    def round_counts(self, slots: np.ndarray) -> np.ndarray:
        """(B, 3·source cells) slot counts of resampled rounds → (B, P, 3) cell counts."""
        b = slots.shape[0]
        src = slots.reshape(b, self.n_source, 3)
        return np.stack([np.asarray((self.split.T @ src[:, :, o].T).T) for o in range(3)], axis=2)


def covariate_cells(ia: np.ndarray, ib: np.ndarray, y: np.ndarray, z: np.ndarray, *,
                    weights: np.ndarray | None = None, exact: bool | None = None, bins: int = BINS) -> CovariateCells:
    """Collapse rows (A = ``ia``, B = ``ib``, outcome ``y`` of A: 1, 0 or ½; covariates ``z`` (N, k) from
    A's side) into cells; exact (one covariate value per cell) when ``exact`` or, by default, when there
    are at most ``EXACT_MAX_ROWS`` rows (module docstring)."""
    ia, ib = np.asarray(ia, dtype=np.int64), np.asarray(ib, dtype=np.int64)
    y = np.asarray(y, dtype=float)
    z = np.asarray(z, dtype=float).reshape(len(y), -1)
    n, q = z.shape
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if exact is None:
        exact = n <= EXACT_MAX_ROWS
    m = int(max(ia.max(initial=-1), ib.max(initial=-1))) + 1
    swap = ia > ib
    lo, hi = np.where(swap, ib, ia), np.where(swap, ia, ib)
    zo = np.where(swap[:, None], -z, z)                     # covariates from the lower index's side
    yo = np.where(swap, 1.0 - y, y)
    outcome = np.where(yo == 1.0, 0, np.where(yo == 0.0, 1, 2))
    if exact:
        keys = np.column_stack([lo * m + hi, zo.view(np.int64).reshape(n, q) if n else np.zeros((0, q), np.int64)])
    else:
        code = np.zeros((n, q), dtype=np.int64)
        for col in range(q):
            v = zo[:, col]
            a, b = (float(v.min()), float(v.max())) if n else (0.0, 1.0)
            width = (b - a) / bins if b > a else 1.0
            code[:, col] = np.minimum(((v - a) / width).astype(np.int64), bins - 1)
        keys = (lo * m + hi) * bins ** q + code @ (bins ** np.arange(q))
    _, first, cell = np.unique(keys, axis=0 if keys.ndim == 2 else None, return_index=True, return_inverse=True)
    cell = cell.reshape(-1)
    C = len(first)
    slot = cell * 3 + outcome
    counts = np.bincount(slot, w, 3 * C).reshape(C, 3)
    tot = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.stack([np.bincount(cell, w * zo[:, col], C) for col in range(q)], 1) / np.where(tot > 0, tot, 1)[:, None]
    pairs = np.column_stack([lo[first], hi[first]])
    if exact:
        zc = zo[first]
        split = sparse.identity(C, format="csr")
        out_pairs, out_counts, out_z = pairs, counts, zc
        slot_off = np.zeros((3 * C, q))
        offset = np.zeros(q)
    else:
        dev = zo - mean[cell]
        var = np.stack([np.bincount(cell, w * dev[:, col] ** 2, C) for col in range(q)], 1) / np.where(tot > 0, tot, 1)[:, None]
        spread = var.sum(axis=1) > 0
        # Two-point rule per covariate: z̄ ± √(q·v) along each axis, each with 1/(2q) of the counts.
        pts_z, pts_src, pts_share = [mean[~spread]], [np.flatnonzero(~spread)], [np.ones((~spread).sum())]
        idx = np.flatnonzero(spread)
        for col in range(q):
            for sign in (1.0, -1.0):
                zz = mean[idx].copy()
                zz[:, col] += sign * np.sqrt(q * var[idx, col])
                pts_z.append(zz)
                pts_src.append(idx)
                pts_share.append(np.full(len(idx), 1.0 / (2 * q)))
        src = np.concatenate(pts_src)
        share = np.concatenate(pts_share)
        out_z = np.concatenate(pts_z)
        out_pairs = pairs[src]
        out_counts = counts[src] * share[:, None]
        split = sparse.csr_matrix((share, (src, np.arange(len(src)))), shape=(C, len(src)))
        # Exact linear term: Σ_rows y·z − Σ_cells (wins_i + ties/2)·z̄, per outcome slot.
        ywin = np.array([1.0, 0.0, 0.5])[outcome]
        slot_off = np.stack([np.bincount(slot, w * ywin * dev[:, col], 3 * C) for col in range(q)], 1)
        offset = slot_off.sum(axis=0)
    return CovariateCells(out_pairs, out_counts, out_z, offset, bool(exact), C, slot, split.tocsr(), slot_off)
