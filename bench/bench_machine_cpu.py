"""The CPU a command costs, counted two ways: by the processes it reaps (what ``/usr/bin/time`` reports) and by
the whole machine (``/proc/stat``'s busy time over the same wall time).

The two differ when the command starts processes it never waits for: Playwright's Chromium is one, so a
browser test's or ``make test``'s CPU by ``time`` misses part of what the suite costs. On a machine with
nothing else running, the machine's count is the command's.

    python bench/bench_machine_cpu.py -- make test
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def busy_ticks() -> tuple[int, int]:
    """(busy, all) clock ticks of every CPU since boot: user, nice, system, irq and softirq are busy; idle and
    iowait are not; steal is left out of both (another guest's)."""
    with open("/proc/stat", encoding="ascii") as stat:
        user, nice, system, idle, iowait, irq, softirq = (int(v) for v in stat.readline().split()[1:8])
    busy = user + nice + system + irq + softirq
    return busy, busy + idle + iowait


def measure(command: list[str]) -> dict:
    before, started = busy_ticks(), time.perf_counter()
    returncode = subprocess.call(command)
    wall = time.perf_counter() - started
    after = busy_ticks()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy = (after[0] - before[0]) / TICKS_PER_S
    return {"returncode": returncode, "wall_s": wall, "reaped_cpu_s": children.ru_utime + children.ru_stime,
            "machine_busy_s": busy, "cores_busy": busy / wall if wall else 0.0,
            "idle_share": 1 - (after[0] - before[0]) / max(1, after[1] - before[1])}


def main(argv: list[str]) -> int:
    if "--" in argv:
        argv = argv[argv.index("--") + 1:]
    if not argv:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    result = measure(argv)
    print(f"wall {result['wall_s']:.1f} s | CPU of reaped processes {result['reaped_cpu_s']:.1f} s | "
          f"machine busy {result['machine_busy_s']:.1f} s ({result['cores_busy']:.2f} of {os.cpu_count()} cores, "
          f"idle {result['idle_share']:.1%}) | exit {result['returncode']}")
    return result["returncode"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
