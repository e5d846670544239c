"""Whether a process of this host is alive, and when it started: what decides that a run was
abandoned (``runs``) and that a claim on a call may be taken over (``llm_calls``)."""

from __future__ import annotations

import datetime as dt
import os


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    return True


def process_started(pid: int) -> dt.datetime | None:
    """When process ``pid`` started (UTC, naive), from /proc on Linux; None where unknown."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    started = boot + ticks / os.sysconf("SC_CLK_TCK")
    return dt.datetime.fromtimestamp(started, dt.timezone.utc).replace(tzinfo=None)
