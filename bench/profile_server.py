"""Where a Streamlit server's script runs spend their time: `streamlit run` in this process, with a
sampling thread that looks at every script thread's stack every 5 ms (a statistical profiler: no
extra package). Each sample is weighted by the CPU time its thread used since the sample before
(``pthread_getcpuclockid``): a thread waiting for a lock, the GIL or the disk weighs nothing. Each
function on a sampled stack of a script run counts once per sample, so a function's share is the
share of script CPU spent in it or below it (cumulative). The first line says how much of the
process's CPU the script runs took (the rest: Streamlit's own thread, sending what the runs drew).

Run:  .venv/bin/python bench/profile_server.py OUT.txt app.py --server.port 8599 ...   (as `streamlit run`)

``OUT.txt`` is rewritten every 5 s with the 40 functions of the project (and DuckDB's execute) that
took most samples; bench/bench_team_load.py runs its server this way with ``--profile OUT.txt``, and
creates ``OUT.txt.reset`` when its measured part starts (the samples so far are dropped).
"""

from __future__ import annotations

import collections
import sys
import threading
import time
from pathlib import Path

ROOT = Path.cwd().resolve()  # the checkout served (bench_team_load.py starts it there)
SCRIPT_MARK = "exec_func_with_error_handling"  # streamlit's frame under every script run


def _thread_cpu(tid: int) -> float:
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(tid))
    except (OSError, OverflowError):  # the thread ended meanwhile
        return 0.0


def sampler(out: Path) -> None:
    counts: collections.Counter = collections.Counter()
    total, last_dump, me = 0.0, time.monotonic(), threading.get_ident()
    reset = out.with_name(out.name + ".reset")  # created by the bench when the measured part starts
    cpu_before: dict[int, float] = {}
    process0 = time.process_time()
    while True:
        time.sleep(0.005)
        if reset.exists():
            reset.unlink()
            counts.clear()
            total, process0 = 0.0, time.process_time()
        for tid, frame in sys._current_frames().items():
            if tid == me:
                continue
            cpu = _thread_cpu(tid)
            used, cpu_before[tid] = max(0.0, cpu - cpu_before.get(tid, cpu)), cpu
            if used == 0.0:
                continue
            seen, running_script, f = set(), False, frame
            while f is not None:
                code = f.f_code
                if code.co_name == SCRIPT_MARK:
                    running_script = True
                name = code.co_filename
                if name.startswith(str(ROOT)):
                    seen.add(f"{Path(name).relative_to(ROOT)}:{code.co_name}")
                elif "duckdb" in name or "/streamlit/" in name:
                    seen.add(f"{name.rsplit('site-packages/', 1)[-1]}:{code.co_name}")
                f = f.f_back
            if running_script:
                total += used
                for fn in seen:
                    counts[fn] += used
        if time.monotonic() - last_dump > 5 and total:
            last_dump = time.monotonic()
            process = time.process_time() - process0
            lines = [f"{total:.1f} s CPU in script runs of {process:.1f} s of the process's (sampled 5 ms apart)"]
            lines += [f"{n / total:6.1%}  {fn}" for fn, n in counts.most_common(60)]
            out.write_text("\n".join(lines) + "\n")


def main() -> None:
    out = Path(sys.argv[1])
    threading.Thread(target=sampler, args=(out,), daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", *sys.argv[2:]]
    sys.exit(cli.main())


if __name__ == "__main__":
    main()
