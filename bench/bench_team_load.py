"""Benchmark: a team on one server. N annotators, each in a browser context of their own, each deciding
an item of the Audit page's shared priority queue every ~1.5 s, on one `streamlit run app.py`.

Run:  .venv/bin/python bench/bench_team_load.py --workspace W                    (N = 1, 4, 8, 12; 30 s each)
      .venv/bin/python bench/bench_team_load.py --workspace W --n 8 --seconds 60
      .venv/bin/python bench/bench_team_load.py --workspace W --root ../lsqa-before  (another checkout's server)
      .venv/bin/python bench/bench_team_load.py --workspace W --pin   (server and browsers on separate CPUs)

W is a demo workspace (``lsqa demo``); each N runs on a fresh copy of it, with N annotators added
(``ann01`` …, each signed in with their own link) and the queue narrowed to the yes/no judges (``--judge``).
Each annotator presses Y or N (seeded, ``--seed``) on the item on screen, waits until the next item is on
screen, and presses again at the later of 1.5 s after the last press and ``--read`` s after the next item
appeared (a person reads it first). Measured, per N:

- keypress → next item, p50 / p95: in the page's own clock, from the key's keydown to the first mutation
  after which the decision bar and the cards name another item (``tests/browser.SHOWN_JS``);
- decisions made (keys pressed on an item on screen) vs stored (the workspace's human_reviews rows of that
  annotator afterwards): lost = made - stored, misattributed = stored rows whose verdict, person or label
  is not the one of a key pressed on that item;
- correct keys refused: keys pressed on an item on screen that wrote nothing and that the page refused
  ("Not saved", the server's refusal shown, or no next item within 20 s);
- server CPU per decision: the CPU time (user + system, /proc) of the server process while the annotators
  work, divided by the decisions stored; the browsers' own CPU (every chromium process) beside it;
- the load average (1 min) at the start and the end, since the machine is shared.

Beside it, the floor: a minimal Streamlit app (one button with a shortcut, one line naming the item)
under the same N and the same pace, its keypress → next item and its server CPU per key.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
    os.environ.setdefault(_name, _value)

from bench.bench_browser import CHROMIUM  # noqa: E402 - a person's browser: full chromium, as the browser bench
from tests.support.browser import CHROMIUM_ARGS, SHOWN_JS  # noqa: E402
from tests.support.streamlit_server import free_port  # noqa: E402

JUDGES = ("lexical-gt", "lexical-autoais-fc", "minilm-similarity")  # the demo's yes/no judges: 360 verdicts
PACE_S = 1.5
NEXT_TIMEOUT_S = 20.0
TICKS = os.sysconf("SC_CLK_TCK")

# Installed in every page: which item is on screen at each key (SHOWN_JS), and when another one is.
PROBE = """
(() => {
  const shown = %s;
  const probe = window.__lsqaLoad = {keys: [], refusals: []};
  let waiting = null;
  const check = () => {
    if (!waiting) return;
    const now = shown();
    if (now && now !== waiting.from) { waiting.to = now; waiting.shown = performance.now(); waiting = null; }
  };
  window.addEventListener('keydown', e => {
    if (e.repeat || e.key.length !== 1) return;
    const k = {key: e.key, at: e.timeStamp, from: shown(), to: null, shown: null};
    probe.keys.push(k);
    if (k.from) waiting = k;
  }, true);
  const said = node => {
    const text = (node.nodeType === Node.TEXT_NODE ? node.data : node.textContent) || '';
    if (/Not saved|nothing was written|Nothing was written|nothing more was written/.test(text)) probe.refusals.push(
      {at: performance.now(), text: text.slice(0, 160)});
  };
  new MutationObserver(records => {
    check();
    for (const r of records) {
      if (r.type === 'characterData') { if (r.target.parentElement && r.target.parentElement.closest(
        '#lsqa-keys-note, [data-testid="stAlert"]')) said(r.target); continue; }
      for (const n of r.addedNodes) if (n.nodeType === 1 && (n.matches('[data-testid="stAlert"]')
        || n.querySelector('[data-testid="stAlert"]'))) said(n);
      if (r.target.id === 'lsqa-keys-note' && r.addedNodes.length) said(r.target);
    }
  }).observe(document, {subtree: true, childList: true, characterData: true});
})();
""" % SHOWN_JS

FLOOR_APP = '''import streamlit as st
n = st.session_state.setdefault("n", 0)
def step():
    st.session_state.n += 1
st.title("Floor")
with st.container(key="lsqa_keys"):
    st.markdown(f'<span data-lsqa-item="{n}">Item {n}</span>', unsafe_allow_html=True)
    st.button("Yes", shortcut="y", on_click=step)
    st.button("No", shortcut="n", on_click=step)
'''


def load_average() -> float:
    return os.getloadavg()[0]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def chromium_seconds() -> float:
    """CPU time of every chromium process of this user now running (the bench's own browsers)."""
    total = 0.0
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            exe = os.readlink(d / "exe")
            if "chromium" not in exe or d.stat().st_uid != os.getuid():
                continue
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if _descends_from(ppid, os.getpid()):
            total += cpu_seconds(int(d.name))
    return total


def _descends_from(pid: int, ancestor: int) -> bool:
    for _ in range(12):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            return False
    return False


class Server:
    """`streamlit run` of ``app`` in checkout ``root`` on a free 127.0.0.1 port (as tests/streamlit_server
    starts it: dashboard.py, app.py behind its sign-in front, or app.py in a checkout from before the front),
    keeping the process for its CPU time."""

    def __init__(self, workspace: Path, root: Path, app: str | None = None, profile: Path | None = None,
                 cpus: set[int] | None = None):
        if app is None:
            app = "dashboard.py" if (root / "dashboard.py").exists() else "app.py"
        self.port, self.profile = free_port(), profile
        env = {**os.environ, "LSQA_WORKSPACE": str(workspace), "PYTHONPATH": str(root)}
        streamlit = [str(Path(sys.executable).parent / "streamlit")] if profile is None else \
            [sys.executable, str(ROOT / "bench" / "profile_server.py"), str(profile.resolve())]
        self.proc = subprocess.Popen(
            [*streamlit, *(["run"] if profile is None else []), app, "--server.address", "127.0.0.1", "--server.port", str(self.port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=None if cpus is None else (lambda: os.sched_setaffinity(0, cpus)))
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 90
        while True:
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).read() == b"ok":
                    return
            except OSError:
                pass
            if time.time() > deadline or self.proc.poll() is not None:
                self.stop()
                raise SystemExit(f"streamlit in {root} did not answer (exit code {self.proc.poll()})")
            time.sleep(0.3)

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def _wait_shown(page, timeout_s: float = 90) -> str:
    await page.wait_for_function(f"({SHOWN_JS})() !== null", timeout=timeout_s * 1000)
    return await page.evaluate(SHOWN_JS)


async def annotator(page, seconds: float, rng: random.Random, read_s: float, start_at: float) -> dict:
    """Press Y / N on the item on screen, at the pace; what was pressed on what."""
    await page.mouse.click(1100, 700)
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    end = time.monotonic() + seconds
    last_press, stalled = 0.0, 0
    while time.monotonic() < end:
        await asyncio.sleep(max(0.0, last_press + PACE_S - time.monotonic()))
        before = await page.evaluate("window.__lsqaLoad.keys.length")
        last_press = time.monotonic()
        await page.keyboard.press(rng.choice("yn"))
        deadline = time.monotonic() + NEXT_TIMEOUT_S
        while time.monotonic() < deadline:  # until the next item is on screen (or a refusal left this one)
            await asyncio.sleep(0.05)
            k = await page.evaluate(f"window.__lsqaLoad.keys[{before}]")
            if k is None:
                break  # the key did not reach the page (no item on screen)
            if k["shown"] is not None:
                break
            if await page.evaluate(f"window.__lsqaLoad.refusals.some(r => r.at > {k['at']})"):
                break
        else:
            stalled += 1
        k = await page.evaluate(f"window.__lsqaLoad.keys[{before}]")
        if k is not None and k["shown"] is not None:
            await asyncio.sleep(max(0.0, read_s - (await page.evaluate("performance.now()") - k["shown"]) / 1000))
    await asyncio.sleep(2.0)  # the last key's run
    return {"keys": await page.evaluate("window.__lsqaLoad.keys"),
            "refusals": await page.evaluate("window.__lsqaLoad.refusals"), "stalled": stalled}


def _percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def _add_people(ws: Path, names: list[str], root: Path) -> list[str]:
    """Each annotator added with a sign-in link by the served checkout's own lsqa (another checkout's
    server cannot open a workspace that this one migrated further); their tokens."""
    code = ("import json, sys; from lsqa import team; "
            "print(json.dumps([team.add_person(sys.argv[1], n, 'annotator')['token'] for n in sys.argv[2:]]))")
    done = subprocess.run([sys.executable, "-c", code, str(ws), *names], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root)}, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


async def run_team(n: int, args, workspace: Path | None, floor: bool) -> dict:
    from playwright.async_api import async_playwright

    folder = Path(tempfile.mkdtemp(prefix="team_load_"))
    names = [f"ann{i + 1:02d}" for i in range(n)]
    if floor:
        app = folder / "floor.py"
        app.write_text(FLOOR_APP)
        server, paths = Server(folder / "none.duckdb", folder, app.name, cpus=args.server_cpus), ["" for _ in names]
    else:
        ws = folder / "team.duckdb"
        shutil.copy(workspace, ws)
        tokens = _add_people(ws, names, Path(args.root).resolve())
        server = Server(ws, Path(args.root).resolve(), profile=args.profile and Path(f"{args.profile}.n{n}"),
                        cpus=args.server_cpus)
        judges = "&".join(f"judge={j}" for j in args.judge or JUDGES)
        paths = [f"audit?{judges}&token={t}" for t in tokens]
    rng = random.Random(args.seed)
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            pages = []
            for path in paths:  # one after another, as people arrive: opening 12 at once is not the measure
                page = await (await browser.new_context(viewport={"width": 1280, "height": 900})).new_page()
                await page.add_init_script(PROBE)
                await page.goto(f"{server.url}/{path}")
                await _wait_shown(page)
                pages.append(page)
            await asyncio.sleep(3.0)  # the last page's run and read ahead
            if server.profile is not None:
                server.profile.with_name(server.profile.name + ".reset").touch()
            load0, cpu0, browsers0, t0 = load_average(), server.cpu(), chromium_seconds(), time.monotonic()
            start = time.monotonic() + 0.5
            results = await asyncio.gather(*(annotator(page, args.seconds, random.Random(rng.random()), args.read,
                                                       start + i * PACE_S / n) for i, page in enumerate(pages)))
            wall, cpu, browsers = time.monotonic() - t0, server.cpu() - cpu0, chromium_seconds() - browsers0
            load1 = load_average()
            await browser.close()
    finally:
        server.stop()
    out = {"n": n, "wall": wall, "server_cpu": cpu, "browser_cpu": browsers, "load": (load0, load1)}
    made = [(name, k) for name, r in zip(names, results, strict=False) for k in r["keys"] if k["from"] is not None]
    latencies = [(k["shown"] - k["at"]) / 1000 for _, k in made if k["shown"] is not None]
    out.update(made=len(made), p50=_percentile(latencies, 0.5), p95=_percentile(latencies, 0.95),
               stalled=sum(r["stalled"] for r in results))
    refused = sum(len(r["refusals"]) for r in results)
    out["refused"] = refused
    out["refusal_texts"] = sorted({x["text"][:90] for r in results for x in r["refusals"]})
    if floor:
        out["stored"] = out["lost"] = out["misattributed"] = None
        out["per_decision"] = cpu / max(1, len(latencies))
    else:
        from lsqa import store
        from lsqa.store import reviews as reviews_store

        with store.connect(ws) as con:
            rows = [r for r in reviews_store.reviews(con) if r["annotator"] in names and r["action"] != "undo"]
        pressed = {(name, k["from"], "yes" if k["key"] == "y" else "no") for name, k in made}
        out["stored"] = len(rows)
        out["misattributed"] = sum((r["annotator"], r["judgment_id"], r["label"]) not in pressed for r in rows)
        out["lost"] = len(made) - refused - len(rows)
        out["per_decision"] = cpu / max(1, len(rows))
    shutil.rmtree(folder, ignore_errors=True)
    return out


def show(label: str, r: dict) -> None:
    stored = "" if r["stored"] is None else (f" stored {r['stored']:>4} lost {r['lost']:>2} "
                                             f"misattributed {r['misattributed']:>2}")
    print(f"{label:<6} N={r['n']:>2}  keys {r['made']:>4}{stored} refused {r['refused']:>2} stalled {r['stalled']:>2}"
          f" | next item p50 {r['p50']:.2f} s p95 {r['p95']:.2f} s | server CPU {r['server_cpu']:6.1f} s"
          f" = {r['per_decision']:.3f} s per decision | browsers' CPU {r['browser_cpu']:6.1f} s"
          f" | {r['wall']:.0f} s, load {r['load'][0]:.1f} -> {r['load'][1]:.1f}", flush=True)
    for text in r["refusal_texts"]:
        print(f"        refused: {text}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workspace", type=Path, required=True, help="a demo workspace (lsqa demo); copied, never changed")
    ap.add_argument("--n", type=int, action="append", help="annotators (repeatable; default 1, 4, 8, 12)")
    ap.add_argument("--seconds", type=float, default=30.0, help="how long the annotators work, per N")
    ap.add_argument("--read", type=float, default=0.3, help="seconds an annotator looks at an item before a key")
    ap.add_argument("--judge", action="append", help="a yes/no judge whose verdicts are decided with Y / N (repeatable; "
                    "default the demo's three: " + ", ".join(JUDGES) + ")")
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose app.py is served (default: this one)")
    ap.add_argument("--no-floor", action="store_true", help="leave out the minimal Streamlit app")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", metavar="OUT", help="sample the server's script runs (bench/profile_server.py) "
                    "into OUT.n<N>: where its CPU goes")
    ap.add_argument("--pin", action="store_true", help="the server on the first CPU, this bench and its browsers on "
                    "the others: the browsers' own work then never runs on the server's core")
    args = ap.parse_args()
    args.server_cpus = None
    if args.pin:
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            raise SystemExit("--pin needs at least two CPUs")
        args.server_cpus = {cpus[0]}
        os.sched_setaffinity(0, set(cpus[1:]))  # the browsers Playwright starts inherit it
    if not args.workspace.is_file():
        raise SystemExit(f"--workspace {args.workspace}: no such file; build one with `lsqa demo`")
    print(f"server {args.root} · workspace {args.workspace} · {args.seconds:.0f} s per N · pace {PACE_S} s · "
          f"seed {args.seed} · load average {load_average():.1f} · {os.cpu_count()} CPUs"
          + (f" · server on CPU {sorted(args.server_cpus)}, browsers on {sorted(os.sched_getaffinity(0))}"
             if args.pin else ""), flush=True)
    for n in args.n or (1, 4, 8, 12):
        show("lsqa", asyncio.run(run_team(n, args, args.workspace, floor=False)))
        if not args.no_floor:
            show("floor", asyncio.run(run_team(n, args, None, floor=True)))


if __name__ == "__main__":
    main()
