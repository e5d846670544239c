"""Side by side with the peers: style control and rank intervals against arena-rank (LMArena's package), the
corrected accuracy per estimate against ppi-python. One command; each run in its own process.

    nice .venv/bin/python bench/bench_arena.py [--peer-python /work/venv-arena/bin/python] [--sizes 4200,100000,1000000]

arena-rank cannot share lsqa's pins (it needs jax), so it lives in its own venv
(``python3 -m venv /work/venv-arena && /work/venv-arena/bin/pip install arena-rank``); its python comes from
``--peer-python`` or ``$LSQA_ARENA_PYTHON`` (default /work/venv-arena/bin/python). Without it the peer is
skipped with a message and lsqa's own figures are still printed (CI has no such venv).

Data (seed 0): m systems with β ~ N(0, 1), answer lengths per system 40·1.5^U(0,4) words × log-normal(0.5)
noise, a judge with length preference c = 2, 10% ties (0.9 of the decisive probability each side).

* style control: n verdicts among 100 systems (the paper's scale, 4,200: 7 systems); lsqa ``style_table`` on
  columns (fit, sandwich intervals, coefficient CI, rank intervals and tiers) against arena-rank's
  ``ContextualPairDataset.from_pandas`` + ``ContextualBradleyTerry.compute_ratings_and_cis`` (sandwich, its
  defaults: reweighted pairs, standardised feature, ridge 1 on the coefficient).
* rank intervals, 100 systems, 1,000,000 rows: lsqa ``count_comparisons`` + ``rank_counts`` (sandwich, and
  today's 1,000-round bootstrap) with max-t rank intervals and tiers, against arena-rank's
  ``PairDataset.from_pandas`` + ``BradleyTerry.compute_ratings_and_cis`` (sandwich).
* corrected accuracy: one PPI++ mean with its interval, 1,000 items and 100 audits, ``ppi_mean`` (power-tuned)
  against ppi-python's ``ppi_mean_ci`` (λ tuned too), per estimate (lsqa's venv holds ppi-python).

Each worker reports the CPU seconds of its work (imports and data loading excluded, JIT compilation
included), wall seconds and the peak RSS of its whole process. Ratios are peer CPU / lsqa CPU (> 1: lsqa
faster).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PEER = "/work/venv-arena/bin/python"


def make_data(path: Path, n: int, m: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    beta = rng.normal(0, 1, m)
    typical = 40 * 1.5 ** rng.uniform(0, 4, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    la = np.maximum(1, np.round(typical[a] * rng.lognormal(0, 0.5, n)))
    lb = np.maximum(1, np.round(typical[b] * rng.lognormal(0, 0.5, n)))
    d = (la - lb) / (la + lb)
    p = 1 / (1 + np.exp(-(beta[a] - beta[b] + 2.0 * d)))
    u = rng.random(n)
    code = np.where(u < p * 0.9, 0, np.where(u > 1 - (1 - p) * 0.9, 1, 2))   # A, B, tie
    np.savez(path, a=a, b=b, la=la, lb=lb, code=code, m=m)


# --------------------------------------------------------------------------------------------- workers


def _finish(t_cpu: float, t_wall: float, extra: dict) -> None:
    out = {"cpu": time.process_time() - t_cpu, "wall": time.perf_counter() - t_wall,
           "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **extra}
    print("RESULT " + json.dumps(out))


def worker_lsqa(task: str, path: str) -> None:
    sys.path.insert(0, str(ROOT))
    from lsqa.stats.ranking import count_comparisons
    from lsqa.stats.reports import rank_counts
    from lsqa.stats.style_control import style_table

    z = np.load(path)
    m = int(z["m"])
    names = np.array([f"s{k:03d}" for k in range(m)])
    winner = np.array(["A", "B", "tie"])[z["code"]]
    sa, sb = names[z["a"]], names[z["b"]]
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    if task == "style":
        res = style_table({"system_a": sa, "system_b": sb, "winner": winner, "len_a": z["la"], "len_b": z["lb"]})
        _finish(t_cpu, t_wall, {"coef": res["coefficient"]["estimate"], "exact": res["exact"],
                                "tiers": len({s["tier"] for s in res["systems"]})})
    else:
        data = count_comparisons(sa.tolist(), sb.tolist(), winner.tolist())
        mode = task.split("-", 1)[1]
        res = rank_counts(data, fragility=False, intervals=mode)
        _finish(t_cpu, t_wall, {"tiers": len({s["tier"] for s in res["systems"]})})


def worker_arena(task: str, path: str) -> None:
    import pandas as pd
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
    from arena_rank.utils.data_utils import ContextualPairDataset, PairDataset

    z = np.load(path)
    m = int(z["m"])
    names = np.array([f"s{k:03d}" for k in range(m)])
    df = pd.DataFrame({"model_a": names[z["a"]], "model_b": names[z["b"]],
                       "winner": np.array(["model_a", "model_b", "tie"])[z["code"]],
                       "d": (z["la"] - z["lb"]) / (z["la"] + z["lb"])})
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    if task == "style":
        ds = ContextualPairDataset.from_pandas(df, feature_cols=["d"])
        model = ContextualBradleyTerry(ds.n_competitors, 1)
        res = model.compute_ratings_and_cis(ds)
        _finish(t_cpu, t_wall, {"coef": float(np.asarray(res["coeffs"])[0])})
    else:
        ds = PairDataset.from_pandas(df)
        res = BradleyTerry(ds.n_competitors).compute_ratings_and_cis(ds)
        float(np.asarray(res["rating_lower"]).sum())
        _finish(t_cpu, t_wall, {})


def worker_mean(side: str, reps: int) -> None:
    rng = np.random.default_rng(0)
    n = 1000
    y = (rng.random(n) < 0.6).astype(float)
    f = np.where(rng.random(n) < 0.8, y, 1 - y)
    idx = rng.choice(n, 100, replace=False)
    if side == "lsqa":
        sys.path.insert(0, str(ROOT))
        from lsqa.stats.corrected import design, ppi_mean

        human = np.full(n, np.nan)
        human[idx] = y[idx]

        def run():
            return ppi_mean(f, design(human)).ci_low
    else:
        from ppi_py import ppi_mean_ci

        def run():
            return ppi_mean_ci(y[idx], f[idx], f, alpha=0.05)
    for _ in range(20):
        run()
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    for _ in range(reps):
        run()
    out = {"cpu": (time.process_time() - t_cpu) / reps, "wall": (time.perf_counter() - t_wall) / reps,
           "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    print("RESULT " + json.dumps(out))


# --------------------------------------------------------------------------------------------- driver


def run(python: str, *args: str) -> dict | None:
    proc = subprocess.run([python, __file__, "--worker", *args], capture_output=True, text=True,
                          env={**os.environ, "JAX_PLATFORMS": "cpu"})
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    print(f"    worker {' '.join(args)} failed: {proc.stderr.strip().splitlines()[-1:] or proc.returncode}")
    return None


def show(label: str, ours: dict | None, peer: dict | None, peer_name: str, unit: str = "s") -> None:
    def fmt(r):
        if r is None:
            return "—"
        scale = 1000 if unit == "ms" else 1
        return f"CPU {r['cpu'] * scale:8.3f} {unit}  wall {r['wall'] * scale:8.3f} {unit}  RSS {r['rss_mib']:6.0f} MiB"
    print(f"  {label}")
    print(f"    lsqa        {fmt(ours)}")
    if peer is not None:
        print(f"    {peer_name:<11} {fmt(peer)}")
        if ours is not None:
            print(f"    ratio       {peer['cpu'] / ours['cpu']:.2f}× (peer CPU / lsqa CPU; > 1: lsqa faster)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer-python", default=os.environ.get("LSQA_ARENA_PYTHON", DEFAULT_PEER))
    ap.add_argument("--sizes", default="4200,100000,1000000", help="style-control verdicts (4200: 7 systems)")
    ap.add_argument("--repeats", type=int, default=1, help="interleaved runs per figure (medians shown)")
    ap.add_argument("--worker", nargs="*")
    args = ap.parse_args()
    if args.worker:
        side, task, arg = args.worker
        if task == "mean":
            worker_mean(side, int(arg))
        elif side == "lsqa":
            worker_lsqa(task, arg)
        else:
            worker_arena(task, arg)
        return 0
    peer = args.peer_python if Path(args.peer_python).exists() else None
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}; seed 0; "
          f"one BLAS thread; median of {args.repeats} interleaved run(s)")
    if peer is None:
        print(f"arena-rank: skipped, no python at {args.peer_python} (create the venv: python3 -m venv "
              "/work/venv-arena && /work/venv-arena/bin/pip install arena-rank; or pass --peer-python)")

    def median(rs):
        rs = [r for r in rs if r is not None]
        if not rs:
            return None
        return {k: float(np.median([r[k] for r in rs])) for k in ("cpu", "wall", "rss_mib")} | {
            k: v for k, v in rs[0].items() if k not in ("cpu", "wall", "rss_mib")}

    def pair(task: str, path: str):
        ours, theirs = [], []
        for _ in range(args.repeats):
            ours.append(run(sys.executable, "lsqa", task, path))
            if peer:
                theirs.append(run(peer, "arena", task, path))
        return median(ours), median(theirs) if peer else None

    with tempfile.TemporaryDirectory() as tmp:
        print("\nstyle control (fit + sandwich intervals + rank intervals and tiers):")
        for n in (int(s) for s in args.sizes.split(",")):
            m = 7 if n <= 10_000 else 100
            path = str(Path(tmp) / f"style_{n}.npz")
            make_data(Path(path), n, m)
            ours, theirs = pair("style", path)
            show(f"{n:,} verdicts, {m} systems" + (f" (lsqa c = {ours['coef']:.4f}, cells exact: {ours['exact']}"
                                                    + (f"; arena-rank c = {theirs['coef']:.4f} standardised and penalised"
                                                       if theirs else "") + ")" if ours else ""),
                 ours, theirs, "arena-rank")
        print("\nrank intervals, 100 systems, 1,000,000 rows (plain Bradley-Terry, ties half a win):")
        path = str(Path(tmp) / "rank.npz")
        make_data(Path(path), 1_000_000, 100)
        ours, theirs = pair("rank-sandwich", path)
        show("sandwich covariance, max-t rank intervals and tiers", ours, theirs, "arena-rank")
        boot = median([run(sys.executable, "lsqa", "rank-bootstrap", path) for _ in range(args.repeats)])
        show("lsqa's 1,000-round bootstrap (today's default for the plain ranking)", boot, theirs, "arena-rank")
        print("\ncorrected accuracy, one estimate (1,000 items, 100 audits):")
        ours = median([run(sys.executable, "lsqa", "mean", "300") for _ in range(args.repeats)])
        theirs = median([run(sys.executable, "ppi", "mean", "300") for _ in range(args.repeats)])
        show("PPI++ mean with its interval, per estimate", ours, theirs, "ppi-python", unit="ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
