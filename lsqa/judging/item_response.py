"""Each system's ability and each question's difficulty from judged answers: a one-parameter
item-response (Rasch) model fitted by regularised logistic regression.

An answer of system ``s`` to question ``q`` has a response ``y`` in [0, 1]: 1 when it agrees with
the question's references, 0 when it does not, a share in between (the reference's words found in
it). The model says::

    P(y = 1) = σ(θ_s − b_q)        θ_s: the system's ability, b_q: the question's difficulty

and is fitted by maximising the fractional-Bernoulli log-likelihood with Gaussian priors (ridge
penalties) on both: ``λθ·Σθ²`` and ``λb·Σ(b − μ)²``, ``μ`` (the typical difficulty) free, with
scipy's L-BFGS. A reference-error detector uses it to tell a reference that strong systems
contradict from one that only weak systems miss (``lsqa.audit.reference_errors``), as
arXiv 2605.30504 did to find wrong labels in a QA benchmark with many more models.

**Why regularised.** A question has at most as many responses as there are systems (seven in
LiteraryQA's release): a question every system got right or wrong has no finite maximum-likelihood
difficulty, and seven responses pin a difficulty down to about ±1 logit. The prior pulls each
difficulty towards the typical one by as much as one or two responses would, and the abilities
towards 0 by about one response out of hundreds (each system answers every question, so its
ability is well measured). What the fit does with seven close systems is measured in
docs/BENCHMARKS.md ("Reference errors").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

LAMBDA_ABILITY = 1.0      # ridge on θ: a Gaussian prior with variance 1/(2λ) = 0.5
LAMBDA_DIFFICULTY = 0.5   # ridge on b − μ: variance 1 (a question's difficulty is seen through ≤ N systems)
_EPS = 1e-9


@dataclass(frozen=True)
class RaschFit:
    """A fitted model. ``ability`` and ``difficulty`` are in logits; ``typical_difficulty`` is μ."""

    ability: dict[str, float]
    difficulty: dict[str, float]
    typical_difficulty: float
    n_responses: int
    converged: bool
    iterations: int
    notes: list[str] = field(default_factory=list)

    def expected(self, system: str, question: str) -> float:
        """P(the system's answer to this question agrees): σ(θ − b); a question not in the fit has μ."""
        b = self.difficulty.get(question, self.typical_difficulty)
        return float(_sigmoid(self.ability.get(system, 0.0) - b))

    def typical_share(self, system: str) -> float:
        """The share of questions of typical difficulty the system gets right: σ(θ − μ), the ability
        as a probability (what the Reference errors page shows)."""
        return float(_sigmoid(self.ability.get(system, 0.0) - self.typical_difficulty))


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


def fit_rasch(responses: Iterable[tuple[str, str, float]], *, lambda_ability: float = LAMBDA_ABILITY,
              lambda_difficulty: float = LAMBDA_DIFFICULTY) -> RaschFit:
    """Fit θ and b to ``(system, question, response)`` triples, response in [0, 1] (a repeated pair
    counts each time). No response gives an empty fit."""
    from scipy.optimize import minimize

    triples = [(s, q, min(1.0, max(0.0, float(y)))) for s, q, y in responses]
    systems = sorted({s for s, _, _ in triples})
    questions = sorted({q for _, q, _ in triples})
    if not triples:
        return RaschFit({}, {}, 0.0, 0, True, 0, ["no judged answers"])
    s_index = {s: i for i, s in enumerate(systems)}
    q_index = {q: i for i, q in enumerate(questions)}
    si = np.array([s_index[s] for s, _, _ in triples])
    qi = np.array([q_index[q] for _, q, _ in triples])
    y = np.array([r for _, _, r in triples])
    k, n = len(systems), len(questions)

    def objective(x):
        theta, b, mu = x[:k], x[k:k + n], x[-1]
        p = _sigmoid(theta[si] - b[qi])
        nll = -np.sum(y * np.log(p + _EPS) + (1 - y) * np.log(1 - p + _EPS))
        nll += lambda_ability * np.sum(theta ** 2) + lambda_difficulty * np.sum((b - mu) ** 2)
        residual = y - p  # d(log-likelihood)/d(θ − b)
        g_theta = -np.bincount(si, residual, k) + 2 * lambda_ability * theta
        g_b = np.bincount(qi, residual, n) + 2 * lambda_difficulty * (b - mu)
        g_mu = -2 * lambda_difficulty * np.sum(b - mu)
        return nll, np.concatenate([g_theta, g_b, [g_mu]])

    result = minimize(objective, np.zeros(k + n + 1), jac=True, method="L-BFGS-B",
                      options={"maxiter": 2000})
    x = result.x
    notes = [] if result.success else [f"the fit stopped before converging: {result.message}"]
    return RaschFit(ability={s: float(x[s_index[s]]) for s in systems},
                    difficulty={q: float(x[k + q_index[q]]) for q in questions},
                    typical_difficulty=float(x[-1]), n_responses=len(triples), converged=bool(result.success),
                    iterations=int(result.nit), notes=notes)
