"""Corrected estimates (issue 13): coverage, width and bias, in simulated worlds and on real data.

Simulated worlds with known truth: 6-10 systems with true Bradley-Terry strengths, every pair
compared on the same questions; a judge that agrees with the human with some quality and
otherwise falls back on the answer shown first (position bias) or on its favourite system; 5-20%
of the items audited uniformly at random. Per setting: the coverage of the 95% intervals of the
corrected (PPI++) β, their width against the humans-only estimate on the same audits, and the bias
of the judge-only estimate. The same for accuracy (yes/no judge more lenient with its favourite).

Real data: PRD Vicuna80 (GPT-4 pairwise verdicts in both orders, human ratings as truth) and the
LLMBar sets (GPT-4 / ChatGPT verdicts, gold human labels): 10% random audits, repeated.

    nice .venv/bin/python bench/bench_corrected.py [--worlds 500] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsqa.stats.corrected import design, ppi_bradley_terry, ppi_mean  # noqa: E402

DATA = Path(os.environ.get("LSQA_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


# --------------------------------------------------------------------------------------------
# Simulated worlds
# --------------------------------------------------------------------------------------------


def _audit(rng, n_items: int, rate: float) -> np.ndarray:
    k = max(2, int(round(rate * n_items)))
    mask = np.zeros(n_items, dtype=bool)
    mask[rng.choice(n_items, k, replace=False)] = True
    return mask


def bt_world(rng, quality: float, rate: float):
    """One side-by-side world: returns the truth and the three estimates' β, se."""
    m = int(rng.integers(6, 11))
    beta = rng.normal(0, 0.7, m)
    beta -= beta.mean()
    questions = int(rng.integers(20, 41))
    ia, ib = np.triu_indices(m, 1)
    a = np.repeat(ia, questions)
    b = np.repeat(ib, questions)
    flip = rng.random(len(a)) < 0.5            # which one is shown first / called system_a
    a, b = np.where(flip, b, a), np.where(flip, a, b)
    n = len(a)
    p_a = 1 / (1 + np.exp(-(beta[a] - beta[b])))
    u = rng.random(n)
    y = np.where(u < p_a * 0.9, 1.0, np.where(u > 1 - (1 - p_a) * 0.9, 0.0, 0.5))   # 10% ties
    favourite = int(rng.integers(m))
    # The judge: with probability `quality` the human's outcome; otherwise its favourite when
    # present, else the answer shown first (system_a) two times in three.
    honest = rng.random(n) < quality
    fav_pick = np.where(a == favourite, 1.0, np.where(b == favourite, 0.0, np.nan))
    position = np.where(rng.random(n) < 2 / 3, 1.0, 0.0)
    f = np.where(honest, y, np.where(np.isnan(fav_pick), position, fav_pick))
    audited = _audit(rng, n, rate)
    names = [str(k) for k in range(m)]
    sa, sb = [names[k] for k in a], [names[k] for k in b]
    human = np.where(audited, y, np.nan)
    ppi = ppi_bradley_terry(names, sa, sb, f, design(human))
    human_only = ppi_bradley_terry(names, sa, sb, f, design(human), lam=0.0)
    judge = ppi_bradley_terry(names, sa, sb, f, design(np.full(n, np.nan)))
    agree = float(np.mean(np.abs(f - y) < 0.25))
    return beta, ppi, human_only, judge, agree


def mean_world(rng, quality: float, rate: float):
    """One yes/no world: per system accuracy; the judge says yes too readily for its favourite."""
    m = int(rng.integers(6, 11))
    acc = rng.uniform(0.3, 0.85, m)
    questions = int(rng.integers(150, 401))
    favourite = int(rng.integers(m))
    rows = []
    for s in range(m):
        y = (rng.random(questions) < acc[s]).astype(float)
        honest = rng.random(questions) < quality
        lenient = 0.8 if s == favourite else 0.55
        f = np.where(honest, y, (rng.random(questions) < lenient).astype(float))
        audited = _audit(rng, questions, rate)
        human = np.where(audited, y, np.nan)
        est = ppi_mean(f, design(human))
        human_only = ppi_mean(f, design(human), lam=0.0)
        rows.append((acc[s], est, human_only, float(np.mean(f == y))))
    return rows


def simulate(worlds: int, seed: int) -> list[dict]:
    out = []
    rng = np.random.default_rng(seed)
    for quality in (0.4, 0.6, 0.8):
        for rate in (0.05, 0.10, 0.20):
            cov = width = width_h = bias_j = bias_c = agree = 0.0
            cov_j = 0.0
            count = 0
            t0 = time.perf_counter()
            for _ in range(worlds):
                beta, ppi, hum, judge, ag = bt_world(rng, quality, rate)
                lo, hi = ppi.ci
                cov += np.sum((lo <= beta) & (beta <= hi))
                jlo, jhi = judge.ci
                cov_j += np.sum((jlo <= beta) & (beta <= jhi))
                width += np.sum(hi - lo)
                hlo, hhi = hum.ci
                width_h += np.sum(hhi - hlo)
                bias_j += np.sum(np.abs(judge.beta - beta))
                bias_c += np.sum(np.abs(ppi.beta - beta))
                agree += ag * len(beta)
                count += len(beta)
            out.append(dict(estimand="bradley-terry", quality=quality, audit_rate=rate, worlds=worlds,
                            intervals=count, agreement=agree / count, coverage=cov / count,
                            judge_only_coverage=cov_j / count, width_ratio_vs_human=width / width_h,
                            mean_abs_error_judge=bias_j / count, mean_abs_error_corrected=bias_c / count,
                            seconds=time.perf_counter() - t0))
            cov = width = width_h = bias_j = bias_c = agree = 0.0
            count = 0
            t0 = time.perf_counter()
            for _ in range(worlds):
                for truth, est, hum, ag in mean_world(rng, quality, rate):
                    cov += est.ci_low <= truth <= est.ci_high
                    width += est.ci_high - est.ci_low
                    width_h += hum.ci_high - hum.ci_low
                    bias_j += abs(est.judge_only - truth)
                    bias_c += abs(est.estimate - truth)
                    agree += ag
                    count += 1
            out.append(dict(estimand="accuracy", quality=quality, audit_rate=rate, worlds=worlds, intervals=count,
                            agreement=agree / count, coverage=cov / count, width_ratio_vs_human=width / width_h,
                            mean_abs_error_judge=bias_j / count, mean_abs_error_corrected=bias_c / count,
                            seconds=time.perf_counter() - t0))
    return out


# --------------------------------------------------------------------------------------------
# Real data
# --------------------------------------------------------------------------------------------

PRD = DATA / "judgments" / "prd" / "data" / "vicuna80"
PRD_SCORE = {1: 1.0, 2: 0.0, 3: 0.5}    # 1 = first answer better, 2 = second, 3 = tie


def _prd_file(path: Path, reviewer: str):
    m = re.fullmatch(rf"answer_(.+)-vs-answer_(.+)-{reviewer}-reviewer[-_]threeclass\.jsonl", path.name)
    return (m.group(1), m.group(2)) if m else None


def prd_items():
    """Items (question, unordered pair) with GPT-4's outcome (mean of both orders) and the humans'
    (mean of all their ratings), both as 'first system of the sorted pair is better'."""
    judge, human = defaultdict(list), defaultdict(list)
    for reviewer, store in (("gpt4", judge), ("human", human)):
        for path in sorted((PRD / f"ratings-{reviewer}").glob("*.jsonl")):
            pair = _prd_file(path, reviewer)
            if pair is None:
                continue
            lo, hi = sorted(pair)
            for line in path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                rec = json.loads(line)
                if rec.get("score") not in PRD_SCORE:
                    continue
                v = PRD_SCORE[rec["score"]]
                store[(str(rec["question_id"]), lo, hi)].append(v if pair[0] == lo else 1 - v)
    keys = sorted(set(judge) & set(human))
    return keys, np.array([np.mean(judge[k]) for k in keys]), np.array([np.mean(human[k]) for k in keys])


def prd_bench(repeats: int, seed: int) -> dict:
    keys, f, y = prd_items()
    systems = sorted({k[1] for k in keys} | {k[2] for k in keys})
    sa, sb = [k[1] for k in keys], [k[2] for k in keys]
    n = len(keys)
    truth = ppi_bradley_terry(systems, sa, sb, f, design(y))          # every item audited: humans only
    judge = ppi_bradley_terry(systems, sa, sb, f, design(np.full(n, np.nan)))
    rng = np.random.default_rng(seed)
    cover = dist_c = dist_h = 0.0
    wid = wid_h = 0.0
    for _ in range(repeats):
        audited = _audit(rng, n, 0.10)
        human = np.where(audited, y, np.nan)
        est = ppi_bradley_terry(systems, sa, sb, f, design(human))
        hum = ppi_bradley_terry(systems, sa, sb, f, design(human), lam=0.0)
        lo, hi = est.ci
        cover += np.mean((lo <= truth.beta) & (truth.beta <= hi))
        dist_c += np.mean(np.abs(est.beta - truth.beta))
        dist_h += np.mean(np.abs(hum.beta - truth.beta))
        wid += np.mean(hi - lo)
        hlo, hhi = hum.ci
        wid_h += np.mean(hhi - hlo)
    agree = float(np.mean(np.abs(f - y) <= 0.25))
    return dict(items=n, systems=systems, repeats=repeats, judge_human_agreement=agree,
                human_beta=dict(zip(systems, np.round(truth.beta, 3).tolist(), strict=False)),
                judge_beta=dict(zip(systems, np.round(judge.beta, 3).tolist(), strict=False)),
                mean_abs_distance_judge_only=float(np.mean(np.abs(judge.beta - truth.beta))),
                mean_abs_distance_corrected=dist_c / repeats, mean_abs_distance_human_only=dist_h / repeats,
                coverage=cover / repeats, width_ratio_vs_human=wid / wid_h)


def llmbar_bench(repeats: int, seed: int) -> list[dict]:
    out = []
    rng = np.random.default_rng(seed)
    for dataset in ("MT-Bench", "FairEval"):
        for judge_name in ("GPT-4", "ChatGPT"):
            path = DATA / "judgments" / "llmbar" / dataset / judge_name / "Vanilla_NoRules" / "result.json"
            items = json.loads(path.read_text(encoding="utf-8"))
            y = np.array([1.0 if it["label"] == 1 else 0.0 for it in items])
            verdicts = [[r["winner"] for r in (it["results"][-1]["swap = False"], it["results"][-1]["swap = True"])]
                        for it in items]
            f = np.array([np.mean([1.0 if v == "1" else 0.0 if v == "2" else 0.5 for v in vs]) for vs in verdicts])
            n = len(y)
            truth = float(y.mean())
            cover = dist_c = dist_h = wid = wid_h = 0.0
            for _ in range(repeats):
                audited = _audit(rng, n, 0.10)
                est = ppi_mean(f, design(np.where(audited, y, np.nan)))
                cover += est.ci_low <= truth <= est.ci_high
                dist_c += abs(est.estimate - truth)
                dist_h += abs(est.human_only - truth)
                wid += est.ci_high - est.ci_low
                wid_h += est.human_only_ci[1] - est.human_only_ci[0]
            out.append(dict(dataset=dataset, judge=judge_name, items=n, human_share_output1=truth,
                            judge_only=float(f.mean()), judge_human_agreement=float(np.mean(np.abs(f - y) < 0.5)),
                            distance_judge_only=abs(float(f.mean()) - truth),
                            mean_distance_corrected=dist_c / repeats, mean_distance_human_only=dist_h / repeats,
                            coverage=cover / repeats, width_ratio_vs_human=wid / wid_h))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=500, help="simulated worlds per setting")
    parser.add_argument("--repeats", type=int, default=500, help="random audit draws on the real data")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    t0 = time.perf_counter()
    sim = simulate(args.worlds, args.seed)
    print("simulated worlds (95% intervals; width ratio = corrected / humans-only on the same audits)")
    print(f"{'estimand':<14}{'judge q':>8}{'audits':>8}{'agree':>7}{'coverage':>10}{'width/human':>12}"
          f"{'|err| judge':>12}{'|err| corr':>11}")
    for r in sim:
        print(f"{r['estimand']:<14}{r['quality']:>8.1f}{r['audit_rate']:>8.0%}{r['agreement']:>7.0%}"
              f"{r['coverage']:>10.4f}{r['width_ratio_vs_human']:>12.3f}{r['mean_abs_error_judge']:>12.3f}"
              f"{r['mean_abs_error_corrected']:>11.3f}")
    covs = [r["coverage"] for r in sim]
    print(f"coverage over all settings: min {min(covs):.3f}, max {max(covs):.3f}")
    prd = prd_bench(args.repeats, args.seed)
    print("\nPRD Vicuna80, GPT-4 judge, humans as truth, 10% random audits:")
    print(json.dumps(prd, indent=1))
    print("\nLLMBar, share of items where output 1 is better, 10% random audits:")
    for r in llmbar_bench(args.repeats, args.seed):
        print(json.dumps(r))
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
