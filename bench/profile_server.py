"""Where a Streamlit server's script runs spend their time: `streamlit run` in this process, with a
sampling thread that looks at every script thread's stack every 5 ms (a statistical profiler: no
extra package). Each function on a sampled stack of a script run counts once per sample, so a
function's share is the share of script time spent in it or below it (cumulative).

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


def sampler(out: Path) -> None:
    counts: collections.Counter = collections.Counter()
    total, last_dump, me = 0, time.monotonic(), threading.get_ident()
    reset = out.with_name(out.name + ".reset")  # created by the bench when the measured part starts
    while True:
        time.sleep(0.005)
        if reset.exists():
            reset.unlink()
            counts.clear()
            total = 0
        for tid, frame in sys._current_frames().items():
            if tid == me:
                continue
            seen, running_script, f = set(), False, frame
            while f is not None:
                code = f.f_code
                if code.co_name == SCRIPT_MARK:
                    running_script = True
                name = code.co_filename
                if name.startswith(str(ROOT)) or "duckdb" in name:
                    seen.add(f"{Path(name).relative_to(ROOT) if name.startswith(str(ROOT)) else name}:{code.co_name}")
                f = f.f_back
            if running_script:
                total += 1
                counts.update(seen)
        if time.monotonic() - last_dump > 5 and total:
            last_dump = time.monotonic()
            lines = [f"{total} samples of script runs (5 ms apart, any thread)"]
            lines += [f"{n / total:6.1%}  {fn}" for fn, n in counts.most_common(40)]
            out.write_text("\n".join(lines) + "\n")


def main() -> None:
    out = Path(sys.argv[1])
    threading.Thread(target=sampler, args=(out,), daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", *sys.argv[2:]]
    sys.exit(cli.main())


if __name__ == "__main__":
    main()
