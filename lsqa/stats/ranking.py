"""Bradley-Terry rankings with bootstrap confidence intervals, and accuracy statistics.

Paper map (Bohnet et al., "Long-Span Question-Answering ... Side-by-Side Evaluation"):

* §3.2 eq. 1: ``P(i beats j) = γ_i / (γ_i + γ_j)`` with strengths ``γ = e^β``
  (:func:`win_probability`, :func:`win_probability_matrix`).
* §3.2 eq. 2: the log-likelihood ``ℓ(γ) = Σ_ij w_ij ln γ_i − w_ij ln(γ_i + γ_j)`` over the win
  matrix ``W`` (:func:`log_likelihood`). Verdicts "None" (both answers wrong) are excluded and
  counted (``n_excluded``).
* §3.2 "confidence intervals ... are estimated via bootstrapping": :func:`bootstrap_bradley_terry`.
* §4.1 Table 1: accuracy ± 1.96·sqrt(p(1−p)/n) (:func:`accuracy_ci`, also Wilson 1927), and a
  paired test between two systems on the same questions (:func:`mcnemar_test`, McNemar 1947) with
  an interval for their difference that holds on a handful of questions (:func:`paired_difference_ci`,
  Tango 1998; the long-span gains of §1/§4 per book).

How the fit works. Comparisons are first aggregated per unordered pair ``i < j`` into three counts
(wins of i, wins of j, ties), which is the win matrix ``W`` of eq. 2 (``w_ij = wins + ties/2`` for
the default tie model). The maximum-likelihood β is found by Newton's method on the concave
log-likelihood (a damped Newton step with backtracking), parametrised by β = ln γ and identified
by mean β = 0 (or β_anchor = 0). Newton rather than Hunter's (2004) MM iteration: MM converges
linearly and slowly when strengths are far apart, Newton quadratically in a handful of steps.
The same solver runs on a whole stack of bootstrap win matrices at once, so a bootstrap round
costs one small linear solve per Newton step, independent of the number of raw comparisons.
The solver is the one Bradley-Terry core's (:mod:`lsqa.stats.bradley_terry`), shared with style control
and the corrected fit; :func:`sandwich_bradley_terry` gives the analytic (sandwich) covariance beside the
bootstrap.

Ties. ``tie_model="half"`` (default) counts a tie as half a win for each side, as is usual for
eq. 2. ``tie_model="davidson"`` fits Davidson's (1970) model
``P(i ≻ j) = γ_i / (γ_i + γ_j + ν·sqrt(γ_i γ_j))``, ``P(tie) = ν·sqrt(γ_i γ_j) / (...)`` with a
tie parameter ν; its ``win_probability`` is still eq. 1 (the probability of i beating j given the
comparison is decisive), and ``tie_param`` reports ν.

Prior (systems that never lose or never win). The MLE exists exactly when the directed "i beat j"
graph is strongly connected (Ford 1957; Hunter 2004, Assumption 1). By default (``prior=None``)
the fit is the plain MLE whenever it exists, and otherwise falls back to a weak symmetric Gaussian
prior on β, i.e. the penalty ``(λ/2)·Σ β_i²`` with ``λ = FALLBACK_PRIOR`` (prior standard deviation
≈ 3.2 on the log-strength scale), which keeps every β finite. Pass ``prior=λ`` to always use that
penalty (``prior=0`` demands the plain MLE and raises if it does not exist). In a bootstrap, each
round is judged on its own: a round whose resampled graph is not strongly connected uses the
fallback prior. Davidson's ν: with no ties at all its MLE is ν = 0, and the fit is held at
ν = e^-50 (plain Bradley-Terry, reported as ν = 0); with only ties the fallback ridge
``FALLBACK_TIE_PRIOR`` on ln ν keeps it finite. Davidson's MLE can also lie at infinity when the
wins do connect every system (one pair only ties, another only wins of one side: the likelihood
rises as ν and the spread of β grow together); its Newton fit then meets a singular Hessian or does
not converge, and that fit (or bootstrap round) is done again with both fallback priors.

References: Bradley & Terry (1952); Zermelo (1929); Ford (1957); Davidson (1970); Hunter (2004)
"MM algorithms for generalized Bradley-Terry models", Ann. Statist. 32(1); Efron & Tibshirani (1993)
percentile bootstrap; Wilson (1927); McNemar (1947); Tango (1998) "Equivalence test and confidence
interval for the difference in proportions for the paired-sample design", Stat. Med. 17; Newcombe
(1998) Stat. Med. 17:2635; Agresti & Min (2005) Stat. Med. 24:729; Fagerland, Lydersen & Laake
(2014) "Recommended tests and confidence intervals for paired binomial proportions", Stat. Med. 33.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.stats import binomtest, chi2, norm, rankdata

# The solver, its constants and the identification live in the one Bradley-Terry core.
from lsqa.stats.bradley_terry import FALLBACK_PRIOR, FALLBACK_TIE_PRIOR, THETA_NO_TIES  # noqa: E402, F401
from lsqa.stats.bradley_terry import Problem as _Problem  # noqa: E402
from lsqa.stats.bradley_terry import identify as _identify  # noqa: E402
from lsqa.stats.bradley_terry import logits as _logits  # noqa: E402
from lsqa.stats.bradley_terry import newton as _newton  # noqa: E402
from lsqa.stats.bradley_terry import objective as _objective  # noqa: E402, F401
from lsqa.stats.bradley_terry import pair_nll as _pair_nll  # noqa: E402
from lsqa.stats.bradley_terry import sigmoid as _sigmoid  # noqa: E402
from lsqa.vocabulary import TIE_MODELS, WINNERS, normalize_winner

_BOOT_CHUNK_CELLS = 4_000_000  # bootstrap rounds per chunk ≈ this / m² (bounds memory)


# --------------------------------------------------------------------------------------------
# Data: aggregated comparisons
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComparisonCounts:
    """Pairwise outcomes aggregated per unordered pair of systems (i < j).

    ``counts[p] = (wins of i, wins of j, ties)`` for ``pairs[p] = (i, j)``. When question ids were
    given, ``question_cells`` (questions × 3P, sparse) holds the same counts per question, flattened
    in the order ``[p0 wins_i, p0 wins_j, p0 ties, p1 ...]``, for the by-question bootstrap.
    """

    systems: tuple[str, ...]
    pairs: np.ndarray            # (P, 2) int, i < j
    counts: np.ndarray           # (P, 3) float
    n_excluded: int = 0          # 'none' verdicts (both answers wrong), dropped per §3.2
    question_ids: tuple | None = None
    question_cells: sparse.csr_matrix | None = None

    @property
    def n_comparisons(self) -> int:
        return int(round(self.counts.sum()))

    @property
    def n_ties(self) -> int:
        return int(round(self.counts[:, 2].sum()))

    def win_matrix(self, tie_weight: float = 0.5) -> np.ndarray:
        """``W`` of eq. 2: ``w_ij`` = wins of i over j, each tie adding ``tie_weight`` to both."""
        return _win_matrix(len(self.systems), self.pairs, self.counts, tie_weight)


def _win_matrix(m: int, pairs: np.ndarray, counts: np.ndarray, tie_weight: float = 0.5) -> np.ndarray:
    return _win_matrices(m, pairs, counts[None], tie_weight)[0]


def _win_matrices(m: int, pairs: np.ndarray, cells: np.ndarray, tie_weight: float = 0.5) -> np.ndarray:
    """The win matrix (eq. 2's ``W``) of each variant of the counts: ``cells`` (B, P, 3) on ``pairs``."""
    W = np.zeros((len(cells), m, m))
    i, j = pairs[:, 0], pairs[:, 1]
    W[:, i, j] = cells[..., 0] + tie_weight * cells[..., 2]
    W[:, j, i] = cells[..., 1] + tie_weight * cells[..., 2]
    return W


def count_comparisons(
    system_a: Sequence[str],
    system_b: Sequence[str],
    winner: Sequence[str],
    question_id: Sequence | None = None,
    systems: Sequence[str] | None = None,
) -> ComparisonCounts:
    """Aggregate raw comparisons (one per row) into per-pair counts.

    ``winner`` is 'A' (system_a's answer better), 'B', 'tie' or 'none' (case-insensitive). Rows
    with 'none' are excluded and counted. ``systems`` fixes the order of systems (default: order of
    first appearance); every system named in a row is included, even if all its rows are 'none'.
    """
    a, b, w = _as_list(system_a), _as_list(system_b), _as_list(winner)
    if not (len(a) == len(b) == len(w)):
        raise ValueError("system_a, system_b and winner must have the same length")
    if question_id is not None and len(question_id) != len(a):
        raise ValueError("question_id must have one entry per comparison")
    # Few distinct winner values: normalise each once, then map (fast on millions of rows).
    code_of = {v: WINNERS.index(normalize_winner(v)) for v in set(w)}

    if systems is not None:
        names = list(dict.fromkeys(systems))
    else:
        names = list(dict.fromkeys(chain.from_iterable(zip(a, b, strict=False))))
    index = {s: k for k, s in enumerate(names)}
    unknown = sorted({str(s) for s in chain(a, b) if s not in index})
    if unknown:
        raise ValueError(f"systems {unknown} are not in the given systems list")
    m = len(names)

    ia = np.fromiter(map(index.__getitem__, a), dtype=np.int64, count=len(a))
    ib = np.fromiter(map(index.__getitem__, b), dtype=np.int64, count=len(b))
    code = np.fromiter(map(code_of.__getitem__, w), dtype=np.int64, count=len(w))
    same = np.flatnonzero(ia == ib)
    if same.size:
        raise ValueError(f"comparison {same[0] + 1} pits system {a[same[0]]!r} against itself")
    keep = code != 3
    n_excluded = int((~keep).sum())
    ia, ib, code = ia[keep], ib[keep], code[keep]

    # Orient each comparison as (lo, hi) with lo < hi; a win of A becomes a win of whichever
    # of lo/hi system_a is. Outcome column: 0 = lo wins, 1 = hi wins, 2 = tie.
    lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
    a_is_lo = ia == lo
    col = np.where(code == 2, 2, np.where((code == 0) == a_is_lo, 0, 1))
    pair_key = lo * m + hi
    uniq, pair_of_row = np.unique(pair_key, return_inverse=True)
    pairs = np.stack([uniq // m, uniq % m], axis=1) if len(uniq) else np.zeros((0, 2), dtype=np.int64)
    P = len(uniq)
    cell = pair_of_row * 3 + col
    counts = np.bincount(cell, minlength=3 * P).astype(float).reshape(P, 3)

    qids = qcells = None
    if question_id is not None:
        q_list = _as_list(question_id)
        q_all = [q_list[k] for k in np.flatnonzero(keep)]
        qids_list = list(dict.fromkeys(q_all))
        qindex = {q: k for k, q in enumerate(qids_list)}
        qrow = np.fromiter((qindex[q] for q in q_all), dtype=np.int64, count=len(q_all))
        qcells = sparse.csr_matrix(
            (np.ones(len(cell)), (qrow, cell)), shape=(len(qids_list), 3 * P)
        )
        qcells.sum_duplicates()
        qids = tuple(qids_list)
    return ComparisonCounts(tuple(str(x) for x in names), pairs, counts, n_excluded, qids, qcells)


def counts_from_cells(systems: Sequence[str], a: np.ndarray, b: np.ndarray, code: np.ndarray, n: np.ndarray,
                      question: np.ndarray | None = None, question_ids: Sequence | None = None) -> ComparisonCounts:
    """``count_comparisons`` of rows already counted: ``n[k]`` comparisons of system ``a[k]`` against
    ``b[k]`` (indices into ``systems``, in the order ``count_comparisons`` would find them) with outcome
    ``code[k]`` (index into ``WINNERS``), of question ``question[k]`` (index into ``question_ids``, the
    questions with a comparison that is not 'none', in order of first appearance). The same counts,
    pairs and per-question cells, to the bit, as from the rows one by one (a workspace's
    verdicts are counted in SQL)."""
    a, b, code = (np.asarray(x, dtype=np.int64) for x in (a, b, code))
    n = np.asarray(n, dtype=np.int64)
    m = len(systems)
    if np.any(a == b):
        raise ValueError("a comparison pits a system against itself")
    keep = code != 3
    n_excluded = int(n[~keep].sum())
    a, b, code, n = a[keep], b[keep], code[keep], n[keep]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    col = np.where(code == 2, 2, np.where((code == 0) == (a == lo), 0, 1))
    uniq, pair_of_row = np.unique(lo * m + hi, return_inverse=True)
    pairs = np.stack([uniq // m, uniq % m], axis=1) if len(uniq) else np.zeros((0, 2), dtype=np.int64)
    P = len(uniq)
    cell = pair_of_row * 3 + col
    counts = np.bincount(cell, weights=n.astype(float), minlength=3 * P).reshape(P, 3)
    qids = qcells = None
    if question is not None:
        q = np.asarray(question, dtype=np.int64)[keep]
        qcells = sparse.csr_matrix((n.astype(float), (q, cell)), shape=(len(question_ids), 3 * P))
        qcells.sum_duplicates()
        qids = tuple(question_ids)
    return ComparisonCounts(tuple(str(x) for x in systems), pairs, counts, n_excluded, qids, qcells)


def _as_list(values) -> list:
    # numpy / pandas columns: tolist() gives plain Python scalars, which hash much faster.
    tolist = getattr(values, "tolist", None)
    return tolist() if callable(tolist) else list(values)


def counts_from_win_matrix(W: np.ndarray, systems: Sequence[str] | None = None) -> ComparisonCounts:
    """Wrap a win matrix ``W`` (``w_ij`` = how often i beat j; may be fractional) as counts."""
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError("W must be a square matrix")
    if np.any(W < 0) or not np.all(np.isfinite(W)):
        raise ValueError("W must be finite and non-negative")
    m = W.shape[0]
    names = tuple(systems) if systems is not None else tuple(str(k) for k in range(m))
    if len(names) != m:
        raise ValueError("need one system name per row of W")
    i, j = np.triu_indices(m, k=1)
    used = (W[i, j] + W[j, i]) > 0
    pairs = np.stack([i[used], j[used]], axis=1)
    counts = np.stack([W[i, j][used], W[j, i][used], np.zeros(used.sum())], axis=1)
    return ComparisonCounts(names, pairs, counts)


# --------------------------------------------------------------------------------------------
# Eq. 1 and eq. 2
# --------------------------------------------------------------------------------------------


def win_probability(strength_i: float, strength_j: float) -> float:
    """Eq. 1: ``P(i beats j) = γ_i / (γ_i + γ_j)`` from the paper's strengths ``γ = e^β``."""
    if strength_i <= 0 or strength_j <= 0:
        raise ValueError("strengths must be positive")
    return float(strength_i / (strength_i + strength_j))


def win_probability_matrix(beta: np.ndarray) -> np.ndarray:
    """Eq. 1 for every pair: ``P[i, j] = e^β_i / (e^β_i + e^β_j)`` (diagonal 0.5), overflow-safe."""
    beta = np.asarray(beta, dtype=float)
    return _sigmoid(beta[:, None] - beta[None, :])


def log_likelihood(W: np.ndarray, strength: np.ndarray) -> float:
    """Eq. 2: ``ℓ(γ) = Σ_i Σ_j [w_ij ln γ_i − w_ij ln(γ_i + γ_j)]`` (diagonal of W ignored)."""
    W = np.array(W, dtype=float)
    np.fill_diagonal(W, 0.0)
    g = np.asarray(strength, dtype=float)
    return float(np.sum(W * (np.log(g)[:, None] - np.log(g[:, None] + g[None, :]))))


def is_strongly_connected(W: np.ndarray) -> bool | np.ndarray:
    """True when every system beat, directly or through a chain, every other one (Ford 1957).

    That is exactly when the Bradley-Terry MLE exists and is finite. ``W`` is one win matrix (m, m),
    giving a bool, or a stack of them (..., m, m), giving one bool per matrix: a bootstrap asks it of
    each round, so the stack is answered at once (``_reaches_every_system``) rather than a graph
    algorithm run per round.
    """
    W = np.asarray(W)
    m = W.shape[-1]
    beat = W.reshape(-1, m, m) > 0
    connected = np.ones(len(beat), dtype=bool)
    if m > 1:
        # Strongly connected: system 0 reaches every system along "beat" edges, and every system reaches it.
        connected = _reaches_every_system(beat) & _reaches_every_system(beat.transpose(0, 2, 1))
    return bool(connected[0]) if W.ndim == 2 else connected.reshape(W.shape[:-2])


def _reaches_every_system(edges: np.ndarray) -> np.ndarray:
    """Per graph of the stack ``edges`` (B, m, m), ``edges[r, i, j]``: an edge i → j, whether system 0
    reaches every system. Breadth first, all graphs in step: a level is one batched product of the
    newly reached systems with the edges, so the loop runs as many times as the longest shortest path
    (a handful on comparison graphs), never once per graph; graphs whose search is over leave the stack."""
    everyone = np.zeros(len(edges), dtype=bool)
    live = np.arange(len(edges))
    step = edges.astype(np.float32)  # sums of 0/1 products, at most m: exact in float32
    reached = np.zeros(edges.shape[:2], dtype=bool)
    reached[:, 0] = True
    frontier = reached.copy()
    while live.size:
        new = (np.einsum("bi,bij->bj", frontier.astype(np.float32), step) > 0) & ~reached
        reached |= new
        going = new.any(axis=1)
        everyone[live[~going]] = reached[~going].all(axis=1)
        if not going.all():
            live, step, reached, new = live[going], step[going], reached[going], new[going]
        frontier = new
    return everyone


def comparison_groups(data: ComparisonCounts) -> np.ndarray:
    """Group number of each system: systems linked by any chain of comparisons (ties included)
    share a group. Strengths of two groups never compared are on no common scale."""
    m = len(data.systems)
    used = data.counts.sum(axis=1) > 0
    i, j = data.pairs[used, 0], data.pairs[used, 1]
    graph = sparse.csr_matrix((np.ones(len(i)), (i, j)), shape=(m, m))
    _, labels = connected_components(graph, directed=False)
    return labels


def unbounded_systems(data: ComparisonCounts, tie_model: str = "half") -> dict[int, str]:
    """Systems whose strength the data do not bound (index → why), and systems with no decided
    comparison at all. A tie counts as half a win each way (``half``), as nothing under Davidson's
    model (``_connecting_tie_weight``).

    The MLE needs a strongly connected comparison graph (Ford 1957). When a group splits into
    several strongly connected parts, the gaps *between* parts are unbounded while strengths
    *within* a part are not; the largest part (most comparisons on a tie) is taken as the frame of
    reference, and the systems of every other part are reported: those that never lost to the rest
    of their group (no upper bound) or never beat it (no lower bound). So one system that lost
    every comparison leaves the others' strengths and intervals intact."""
    W = data.win_matrix(_connecting_tie_weight(tie_model))
    groups = comparison_groups(data)
    _, scc = connected_components(sparse.csr_matrix(W > 0), directed=True, connection="strong")
    games = data.win_matrix(0.5)  # every comparison counts once, whatever the tie model
    games = games + games.T
    played = games.sum(axis=1) > 0
    reference: dict[int, int] = {}  # group → its reference strongly connected part
    for g in set(groups.tolist()):
        parts = {int(c) for c in scc[(groups == g) & played]}
        if parts:
            reference[g] = max(parts, key=lambda c: ((scc == c).sum(), games[scc == c].sum(), -c))
    out: dict[int, str] = {}
    for k in range(len(data.systems)):
        if not played[k]:
            out[k] = "no decided comparison (only 'none' verdicts)"
            continue
        if scc[k] == reference[int(groups[k])]:
            continue
        inside = scc == scc[k]
        others = (groups == groups[k]) & ~inside
        if W[np.ix_(others, inside)].sum() == 0:
            out[k] = "never lost to the systems it was compared with: the data give no upper bound"
        elif W[np.ix_(inside, others)].sum() == 0:
            out[k] = "never beat the systems it was compared with: the data give no lower bound"
    return out


# --------------------------------------------------------------------------------------------
# Single fit
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BTResult:
    """A fitted Bradley-Terry model (paper §3.2).

    ``beta`` are log-strengths identified by mean 0 (or ``beta[anchor] = 0``), ``strength = e^β``
    (the γ of eq. 1, the numbers on the paper's bars), ``win_probability[i, j]`` is eq. 1,
    ``rank`` is 1 for the strongest system (equal β share a rank).
    """

    systems: tuple[str, ...]
    beta: np.ndarray
    strength: np.ndarray
    win_probability: np.ndarray
    rank: np.ndarray
    n_comparisons: int
    n_excluded: int
    tie_model: str = "half"
    anchor: str | None = None
    prior: float = 0.0            # λ actually used (0 = plain MLE)
    tie_param: float | None = None  # Davidson's ν
    log_likelihood: float = 0.0   # at the estimate (tie model's own likelihood, without prior)
    iterations: int = 0
    converged: bool = True

    def index(self, system: str) -> int:
        return self.systems.index(system)

    def table(self) -> list[dict]:
        """One dict per system, strongest first."""
        order = np.argsort(-self.beta, kind="stable")
        return [
            dict(system=self.systems[k], beta=float(self.beta[k]), strength=float(self.strength[k]),
                 rank=int(self.rank[k]))
            for k in order
        ]


def _check_tie_model(tie_model: str) -> None:
    if tie_model not in TIE_MODELS:
        raise ValueError(f"tie_model must be one of {TIE_MODELS}, not {tie_model!r}")


def _connecting_tie_weight(tie_model: str) -> float:
    """How much of a tie counts as a win in each direction when asking whether the MLE exists.

    Half: a tie is half a win each way, so ties connect (Hunter 2004, Assumption 1 on W). Davidson:
    a tie connects nothing. Where some group never wins against the rest (it only ties with them or
    loses), the likelihood keeps rising as ν and the strengths move apart together (ties certain
    within one pair, wins certain within another), so β needs the fallback prior."""
    return 0.0 if tie_model == "davidson" else 0.5


def _prior_for(W: np.ndarray, prior: float | None) -> float:
    connected = is_strongly_connected(W)
    if prior is None:
        return 0.0 if connected else FALLBACK_PRIOR
    if prior < 0:
        raise ValueError("prior must be >= 0")
    if prior == 0 and not connected:
        raise ValueError(
            "the maximum-likelihood estimate does not exist: some systems never lose (or never win) "
            "against the rest, or the comparison graph is disconnected; use prior=None or prior>0"
        )
    return float(prior)


def _tie_prior_for(n_ties: float, n_total: float, tie_model: str) -> float:
    if tie_model != "davidson":
        return 0.0
    return FALLBACK_TIE_PRIOR if n_ties >= n_total else 0.0


def _ranks(beta: np.ndarray) -> np.ndarray:
    return rankdata(-np.round(beta, 12), method="min").astype(int)


def fit_bradley_terry(
    data: ComparisonCounts,
    *,
    tie_model: str = "half",
    anchor: str | None = None,
    prior: float | None = None,
) -> BTResult:
    """Maximum-likelihood Bradley-Terry strengths from aggregated comparisons (§3.2, eq. 1-2).

    Newton's method on the concave log-likelihood (see module docstring for the prior and the
    tie models). Fitting depends on the data only through the per-pair counts, i.e. through W.
    """
    _check_tie_model(tie_model)
    m = len(data.systems)
    if m == 0:
        raise ValueError("no systems to rank")
    lam = _prior_for(data.win_matrix(_connecting_tie_weight(tie_model)), prior)
    n_ties, n_all = float(data.counts[:, 2].sum()), float(data.counts.sum())
    rho = _tie_prior_for(n_ties, n_all, tie_model)
    no_ties = tie_model == "davidson" and n_ties == 0
    prob = _Problem(m, data.pairs, data.counts[None], tie_model, np.array([lam]), np.array([rho]),
                    np.array([no_ties]))
    x0 = np.zeros((1, prob.k))
    if no_ties:
        x0[0, m] = THETA_NO_TIES
    x, iters, conv = _newton(prob, x0)
    if not conv[0] and tie_model == "davidson":
        # Davidson data can have no finite MLE although the wins connect every system (see
        # bradley_terry.newton_steps): the fallback priors on β and ln ν, as for data the connectivity check catches.
        if prior == 0:
            raise ValueError("the maximum-likelihood estimate of Davidson's model does not exist for these "
                             "comparisons (its likelihood is highest with ν and the strengths at infinity); "
                             "use prior=None or prior>0")
        lam, rho = max(lam, FALLBACK_PRIOR), max(rho, FALLBACK_TIE_PRIOR)
        prob = _Problem(m, data.pairs, data.counts[None], tie_model, np.array([lam]), np.array([rho]),
                        np.array([no_ties]))
        x, iters, conv = _newton(prob, x0)
    beta = _identify(x[0, :m], data.systems, anchor)
    theta = x[0, m] if tie_model == "davidson" else None
    nll = _pair_nll(_logits(prob, x), None if theta is None else x[:, m], prob.c, tie_model)
    return BTResult(
        systems=tuple(data.systems),
        beta=beta,
        strength=np.exp(beta),
        win_probability=win_probability_matrix(beta),
        rank=_ranks(beta),
        n_comparisons=data.n_comparisons,
        n_excluded=data.n_excluded,
        tie_model=tie_model,
        anchor=anchor,
        prior=lam,
        tie_param=None if theta is None else (0.0 if no_ties else float(np.exp(theta))),
        log_likelihood=-float(nll[0]),
        iterations=int(iters[0]),
        converged=bool(conv[0]),
    )


def sandwich_bradley_terry(data: ComparisonCounts, fit: BTResult, *, by_question: bool = False) -> np.ndarray:
    """Sandwich (robust) covariance of the fitted β (``tie_model="half"``), identified like ``fit.beta``:
    ``H⁻¹ J H⁻¹`` with ``J`` the outer products of the per-comparison scores (summed per question with
    ``by_question``), from the cell counts alone (``lsqa.stats.bradley_terry.sandwich``; Huber 1967). What
    arena-rank reports for plain Bradley-Terry; an analytic alternative to the bootstrap."""
    from lsqa.stats import bradley_terry as bt

    if fit.tie_model != "half":
        raise ValueError("the sandwich covariance is computed for ties as half a win (tie_model='half')")
    m, P = len(data.systems), len(data.pairs)
    beta = fit.beta - fit.beta.mean()
    i, j = np.repeat(data.pairs[:, 0], 3), np.repeat(data.pairs[:, 1], 3)
    y = np.tile([1.0, 0.0, 0.5], P)
    n = data.counts.reshape(-1)
    cov = bt.sandwich(m, beta, bt.Rows(i, j, y, n=n), fit.prior)
    if by_question:
        if data.question_cells is None:
            raise ValueError("by_question=True needs a question id for every comparison")
        r = bt.sigmoid(beta[i] - beta[j]) - y          # score of one comparison of each (pair, outcome) cell
        S = sparse.csr_matrix((np.r_[r, -r], (np.r_[np.arange(3 * P), np.arange(3 * P)], np.r_[i, j])),
                              shape=(3 * P, m))
        G = data.question_cells @ S
        s = bt.sigmoid(beta[i] - beta[j])
        H = bt.gram_rows(m, i, j, None, n * s * (1 - s)) + fit.prior * np.eye(m)
        Hi = bt.constrained_inverse(H, m)
        cov = Hi @ np.asarray((G.T @ G).todense()) @ Hi
    return bt.identify_cov(cov, m, data.systems, fit.anchor)


@dataclass(frozen=True)
class StackFit:
    """Fits of B variants of one :class:`ComparisonCounts` (same systems and pairs, other counts).

    ``beta`` (B, m) has mean 0; ``theta`` (B,) is ln ν (Davidson; None for ``half``); ``lam`` / ``rho``
    the ridges each variant used (0 = plain MLE) and ``theta_fixed`` where ν was held at 0 (no ties)."""

    beta: np.ndarray
    theta: np.ndarray | None
    lam: np.ndarray
    rho: np.ndarray
    theta_fixed: np.ndarray


def fit_variants(data: ComparisonCounts, cells: np.ndarray, *, tie_model: str = "half",
                 start: np.ndarray | None = None) -> StackFit:
    """Fit B variants of ``data`` at once: ``cells`` (B, P, 3) are their counts on ``data.pairs``.

    Each variant is fitted as :func:`fit_bradley_terry` (``prior=None``) fits it alone: the plain MLE
    where its own comparison graph is strongly connected, else the fallback prior; for Davidson ν the
    same rules and the same refit with both fallbacks where Newton meets a flat likelihood. All
    variants share one batched Newton solve (``start``: β to start from, (m,) or (B, m)). What-if
    refits (a ranking with some verdicts removed or relabelled, ``lsqa.stats.fragility``) use it."""
    _check_tie_model(tie_model)
    c = np.asarray(cells, dtype=float)
    if c.ndim != 3 or c.shape[1:] != data.counts.shape:
        raise ValueError("cells must be variants × pairs × 3, on the pairs of data")
    B, m = c.shape[0], len(data.systems)
    tw = _connecting_tie_weight(tie_model)
    # Connectivity depends only on which directions have wins: check each distinct pattern once.
    support = np.packbits(np.concatenate([c[..., 0] + tw * c[..., 2], c[..., 1] + tw * c[..., 2]], axis=1) > 0,
                          axis=1)
    keys = np.ascontiguousarray(support).view(np.dtype((np.void, support.shape[1]))).reshape(-1)
    _, first, which = np.unique(keys, return_index=True, return_inverse=True)
    connected = is_strongly_connected(_win_matrices(m, data.pairs, c[first], tw))
    lam = np.where(connected[which.reshape(-1)], 0.0, FALLBACK_PRIOR)
    ties, total = c[..., 2].sum(axis=1), c.sum(axis=(1, 2))
    davidson = tie_model == "davidson"
    rho = np.where(ties >= total, FALLBACK_TIE_PRIOR, 0.0) if davidson else np.zeros(B)
    fixed = (ties == 0) if davidson else np.zeros(B, dtype=bool)
    prob = _Problem(m, data.pairs, c, tie_model, lam, rho, fixed)
    x0 = np.zeros((B, prob.k))
    if start is not None:
        s = np.broadcast_to(np.asarray(start, dtype=float), (B, m))
        x0[:, :m] = s - s.mean(axis=1, keepdims=True)
    if davidson:
        x0[:, m] = np.where(fixed, THETA_NO_TIES, 0.0)
    x, _, conv = _newton(prob, x0)
    redo = np.flatnonzero(~conv) if davidson else np.zeros(0, dtype=int)
    if redo.size:  # no finite Davidson MLE (see bradley_terry.newton_steps): as fit_bradley_terry, both fallback priors
        lam[redo] = np.maximum(lam[redo], FALLBACK_PRIOR)
        rho[redo] = np.maximum(rho[redo], FALLBACK_TIE_PRIOR)
        again = _Problem(m, data.pairs, c[redo], tie_model, lam[redo], rho[redo], fixed[redo])
        x[redo], _, _ = _newton(again, x0[redo])
    beta = x[:, :m] - x[:, :m].mean(axis=1, keepdims=True)
    return StackFit(beta, x[:, m] if davidson else None, lam, rho, fixed)


def fit_win_matrix(
    W: np.ndarray,
    systems: Sequence[str] | None = None,
    *,
    anchor: str | None = None,
    prior: float | None = None,
) -> BTResult:
    """Fit eq. 2 directly on a win matrix ``W`` (``w_ij`` = times i beat j, ties already split)."""
    return fit_bradley_terry(counts_from_win_matrix(W, systems), anchor=anchor, prior=prior)


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile bootstrap intervals for β and the strength e^β (Efron & Tibshirani 1993).

    ``samples`` holds the β of every round (rounds × systems), identified like the point estimate.
    """

    systems: tuple[str, ...]
    level: float
    rounds: int
    seed: int | None
    by_question: bool
    beta_low: np.ndarray
    beta_high: np.ndarray
    samples: np.ndarray
    n_fallback_rounds: int = 0    # rounds that needed the fallback prior

    @property
    def strength_low(self) -> np.ndarray:
        return np.exp(self.beta_low)

    @property
    def strength_high(self) -> np.ndarray:
        return np.exp(self.beta_high)


def _cell_probabilities(data: ComparisonCounts) -> np.ndarray:
    flat = data.counts.reshape(-1)
    return flat / flat.sum()


def bootstrap_bradley_terry(
    data: ComparisonCounts,
    *,
    rounds: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
    by_question: bool = False,
    tie_model: str = "half",
    anchor: str | None = None,
    prior: float | None = None,
) -> BootstrapCI:
    """Percentile CIs for Bradley-Terry β by resampling comparisons (or whole questions).

    Rather than refitting on resampled raw rows, each round draws the per-pair outcome counts
    directly: resampling N comparisons with replacement is a multinomial draw over the distinct
    (pair, outcome) cells, so a round costs O(cells), not O(N). With ``by_question=True`` each round
    draws how often each question is picked (multinomial over questions) and sums those questions'
    cell counts, keeping all comparisons of a question together. All rounds are then fitted together
    by the batched Newton solver, warm-started at the full-data estimate.
    """
    _check_tie_model(tie_model)
    if rounds < 1:
        raise ValueError("rounds must be >= 1")
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    m = len(data.systems)
    if by_question and data.question_cells is None:
        raise ValueError("by_question=True needs a question id for every comparison")
    rng = np.random.default_rng(seed)
    P = len(data.pairs)
    point = fit_bradley_terry(data, tie_model=tie_model, prior=prior)  # warm start for every round
    x0 = point.beta
    th0 = np.log(point.tie_param) if point.tie_param else 0.0
    davidson = tie_model == "davidson"
    if P == 0:
        zero = np.zeros(m)
        return BootstrapCI(tuple(data.systems), level, rounds, seed, by_question, zero, zero,
                           np.zeros((rounds, m)))

    flat_full = data.counts.reshape(-1)
    n_total = flat_full.sum()
    p_cells = _cell_probabilities(data)
    # Integer counts: N draws. A W with fractional entries: as many draws, rescaled to its weight.
    n_draws = max(1, int(round(n_total)))
    if by_question:
        q_cells = data.question_cells.tocsc()
        n_q = q_cells.shape[0]

    chunk = max(1, min(rounds, _BOOT_CHUNK_CELLS // max(1, m * m)))
    samples = np.empty((rounds, m))
    n_fallback = 0
    done = 0
    while done < rounds:
        b = min(chunk, rounds - done)
        if by_question:
            picks = rng.multinomial(n_q, np.full(n_q, 1.0 / n_q), size=b).astype(float)
            cells = np.asarray((q_cells.T @ picks.T).T)
        else:
            cells = rng.multinomial(n_draws, p_cells, size=b) * (n_total / n_draws)
        c = cells.reshape(b, P, 3)
        lam, rho, fixed = _round_priors(data, c, prior, tie_model)
        n_fallback += int(np.count_nonzero(lam > (prior or 0.0)))
        prob = _Problem(m, data.pairs, c, tie_model, lam, rho, fixed)
        start_x = np.zeros((b, prob.k))
        start_x[:, :m] = x0 - x0.mean()
        if davidson:
            start_x[:, m] = np.where(fixed, THETA_NO_TIES, th0)
        x, _, conv = _newton(prob, start_x)
        redo = np.flatnonzero(~conv) if davidson else np.zeros(0, dtype=int)
        if redo.size:  # rounds with no finite Davidson MLE (see bradley_terry.newton_steps): the fallback priors
            n_fallback += int(np.count_nonzero(lam[redo] <= (prior or 0.0)))
            again = _Problem(m, data.pairs, c[redo], tie_model, np.maximum(lam[redo], FALLBACK_PRIOR),
                             np.maximum(rho[redo], FALLBACK_TIE_PRIOR), fixed[redo])
            x[redo], _, _ = _newton(again, start_x[redo])
        samples[done : done + b] = _identify(x[:, :m], data.systems, anchor)
        done += b

    alpha = 1.0 - level
    low, high = np.quantile(samples, [alpha / 2, 1 - alpha / 2], axis=0)
    return BootstrapCI(tuple(data.systems), level, rounds, seed, by_question, low, high, samples,
                       n_fallback)


def _round_priors(data: ComparisonCounts, c: np.ndarray, prior: float | None, tie_model: str):
    """Per round: ridge λ on β, ridge ρ on ln ν, and whether ln ν is held fixed (no ties).

    The fallbacks apply where that round's MLE would not exist."""
    b = c.shape[0]
    m = len(data.systems)
    if prior is not None and prior > 0:
        lam = np.full(b, float(prior))
    else:
        lam = np.zeros(b)
        tie_weight = _connecting_tie_weight(tie_model)
        full_ok = is_strongly_connected(data.win_matrix(tie_weight))
        # A round can only lose strong connectivity if a direction that had wins now has none.
        dir_full = np.stack([data.counts[:, 0] + tie_weight * data.counts[:, 2],
                             data.counts[:, 1] + tie_weight * data.counts[:, 2]], 1)
        dir_round = np.stack([c[..., 0] + tie_weight * c[..., 2], c[..., 1] + tie_weight * c[..., 2]], 2)
        suspect = np.flatnonzero(np.any((dir_round == 0) & (dir_full[None] > 0), axis=(1, 2)))
        if not full_ok:
            lam[:] = FALLBACK_PRIOR
        elif suspect.size:
            lam[suspect[~is_strongly_connected(_win_matrices(m, data.pairs, c[suspect], tie_weight))]] = \
                FALLBACK_PRIOR
    rho = np.zeros(b)
    fixed = np.zeros(b, dtype=bool)
    if tie_model == "davidson":
        ties = c[..., 2].sum(axis=1)
        total = c.sum(axis=(1, 2))
        rho = np.where(ties >= total, FALLBACK_TIE_PRIOR, 0.0)
        fixed = ties == 0
    return lam, rho, fixed


# --------------------------------------------------------------------------------------------
# Absolute verdicts: accuracy and paired test (§4.1)
# --------------------------------------------------------------------------------------------

PAPER_Z = 1.96  # §4.1 footnote 4: z = 1.96 for the 95% CI


@dataclass(frozen=True)
class AccuracyCI:
    """Accuracy ``p = k/n`` with a confidence interval; ``half_width`` is the ± of Table 1."""

    k: int
    n: int
    p: float
    low: float
    high: float
    half_width: float
    level: float
    method: str


def accuracy_ci(k: int, n: int, *, level: float = 0.95, method: str = "normal",
                z: float | None = None) -> AccuracyCI:
    """Accuracy with a confidence interval.

    ``method="normal"``: paper §4.1 footnote 4 (Wald), ``p ± z·sqrt(p(1−p)/n)``; the bounds are
    clipped to [0, 1], ``half_width`` is not. ``method="wilson"``: Wilson (1927) score interval,
    better near 0 and 1. ``z`` defaults to the normal quantile for ``level`` (1.95996 for 95%);
    pass ``z=PAPER_Z`` to use the paper's rounded 1.96.
    """
    if n <= 0 or not 0 <= k <= n:
        raise ValueError("need 0 <= k <= n and n > 0")
    if z is None:
        z = float(norm.ppf(0.5 + level / 2))
    p = k / n
    if method == "normal":
        hw = z * np.sqrt(p * (1 - p) / n)
        low, high = max(0.0, p - hw), min(1.0, p + hw)
    elif method == "wilson":
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        hw = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        low, high = max(0.0, centre - hw), min(1.0, centre + hw)
    else:
        raise ValueError("method must be 'normal' or 'wilson'")
    return AccuracyCI(int(k), int(n), float(p), float(low), float(high), float(hw), level, method)


@dataclass(frozen=True)
class McNemarResult:
    """Paired comparison of two systems' correctness on the same questions (McNemar 1947)."""

    n: int
    both_correct: int
    only_a: int          # A right, B wrong
    only_b: int          # A wrong, B right
    neither: int
    statistic: float     # only_a for "exact"; the chi-square statistic for "chi2"
    p_value: float
    method: str


def mcnemar_test(correct_a: Sequence[bool], correct_b: Sequence[bool], *, method: str = "exact") -> McNemarResult:
    """McNemar's test on the discordant pairs.

    ``exact``: two-sided binomial test of ``only_a ~ Bin(only_a + only_b, 1/2)``.
    ``chi2``: ``(|b − c| − 1)² / (b + c)`` with continuity correction, 1 degree of freedom.
    """
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("correct_a and correct_b must be 1-D and of equal length")
    both, only_a = int(np.sum(a & b)), int(np.sum(a & ~b))
    only_b, neither = int(np.sum(~a & b)), int(np.sum(~a & ~b))
    disc = only_a + only_b
    if method == "exact":
        stat = float(only_a)
        p = 1.0 if disc == 0 else float(binomtest(only_a, disc, 0.5).pvalue)
    elif method == "chi2":
        stat = 0.0 if disc == 0 else (abs(only_a - only_b) - 1) ** 2 / disc
        p = 1.0 if disc == 0 else float(chi2.sf(stat, 1))
    else:
        raise ValueError("method must be 'exact' or 'chi2'")
    return McNemarResult(len(a), both, only_a, only_b, neither, float(stat), p, method)


PAIRED_METHODS = ("tango", "newcombe", "agresti-min")


@dataclass(frozen=True)
class PairedDifference:
    """Share right of A minus share right of B on the same questions, with a confidence interval."""

    n: int
    only_a: int          # A right, B wrong
    only_b: int          # A wrong, B right
    estimate: float      # (only_a − only_b) / n
    low: float
    high: float
    level: float
    method: str


def paired_difference_ci(correct_a: Sequence[bool], correct_b: Sequence[bool], *, level: float = 0.95,
                         method: str = "tango") -> PairedDifference:
    """Interval for the difference of two correlated proportions (A's share right − B's, same questions).

    With ``b`` = A right and B wrong, ``c`` = the reverse, ``n`` questions and ``Δ = (b − c)/n``:

    * ``"tango"`` (default): Tango's (1998) score interval, the Δ₀ with ``|T(Δ₀)| ≤ z`` for
      ``T = (b − c − nΔ₀) / sqrt(n(2 q̃ + Δ₀(1 − Δ₀)))``, ``q̃`` the restricted MLE of the
      (A wrong, B right) probability under Δ₀ (closed form, Tango's eq. 3), each limit found by root
      search (as Fagerland, Lydersen & Laake 2014 compute it);
    * ``"newcombe"``: Newcombe's (1998) method 10, the Wilson intervals of the two marginal shares
      combined with the estimated correlation φ (corrected towards 0 by n/2 as Fagerland et al. do);
    * ``"agresti-min"``: Agresti & Min (2005), Wald on the table with ½ added to each cell.

    None of the three has zero width: with every pair concordant (b = c = 0) Tango's limits are
    ``∓z²/(n + z²)``. ``bench/bench_longspan_intervals.py`` compares their coverage at 5-20 questions;
    Tango's keeps the nominal 95% best there (docs/BENCHMARKS.md).
    """
    a = np.asarray(correct_a, dtype=bool)
    b_ = np.asarray(correct_b, dtype=bool)
    if a.shape != b_.shape or a.ndim != 1:
        raise ValueError("correct_a and correct_b must be 1-D and of equal length")
    if method not in PAIRED_METHODS:
        raise ValueError(f"method must be one of {PAIRED_METHODS}, not {method!r}")
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    n = len(a)
    if n == 0:
        raise ValueError("no questions: the difference needs at least one question with both answers judged")
    both, b, c = int(np.sum(a & b_)), int(np.sum(a & ~b_)), int(np.sum(~a & b_))
    z = float(norm.ppf(0.5 + level / 2))
    if method == "tango":
        low, high = _tango_limits(b, c, n, z)
    elif method == "newcombe":
        low, high = _newcombe_limits(both, b, c, n - both - b - c, z)
    else:
        t = n + 2.0
        p12, p21 = (b + 0.5) / t, (c + 0.5) / t
        centre = p12 - p21
        se = np.sqrt(max((p12 + p21 - centre ** 2) / t, 0.0))
        low, high = max(-1.0, centre - z * se), min(1.0, centre + z * se)
    return PairedDifference(n, b, c, (b - c) / n, float(low), float(high), level, method)


def _tango_statistic(delta: float, b: int, c: int, n: int) -> float:
    """Tango's score statistic at Δ₀ = ``delta`` (decreasing in Δ₀; 0 at Δ₀ = (b − c)/n)."""
    big_a = 2.0 * n
    big_b = -b - c + (2.0 * n - b + c) * delta
    big_c = -c * delta * (1 - delta)
    q = (np.sqrt(max(big_b * big_b - 4 * big_a * big_c, 0.0)) - big_b) / (2 * big_a)
    num = b - c - n * delta
    var = n * (2 * q + delta * (1 - delta))
    if var <= 0:
        return 0.0 if num == 0 else float(np.sign(num) * np.inf)
    return float(num / np.sqrt(var))


def _tango_limits(b: int, c: int, n: int, z: float) -> tuple[float, float]:
    from scipy.optimize import brentq

    est, edge = (b - c) / n, 1e-12
    low = -1.0 if est <= -1 else brentq(lambda d: _tango_statistic(d, b, c, n) - z, -1 + edge, est, xtol=1e-12)
    high = 1.0 if est >= 1 else brentq(lambda d: _tango_statistic(d, b, c, n) + z, est, 1 - edge, xtol=1e-12)
    return float(low), float(high)


def _newcombe_limits(a: int, b: int, c: int, d: int, z: float) -> tuple[float, float]:
    n = a + b + c + d
    first, second = accuracy_ci(a + b, n, method="wilson", z=z), accuracy_ci(a + c, n, method="wilson", z=z)
    p1, p2 = first.p, second.p
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    else:
        phi = (cross - n / 2 if cross > 0 else cross) / np.sqrt(margins)
    x, y = p1 - first.low, second.high - p2
    low = p1 - p2 - np.sqrt(max(x * x + y * y - 2 * phi * x * y, 0.0))
    x, y = first.high - p1, p2 - second.low
    high = p1 - p2 + np.sqrt(max(x * x + y * y - 2 * phi * x * y, 0.0))
    return float(max(-1.0, low)), float(min(1.0, high))
