"""Claims on calls in flight, so that two runs of one study never pay for the same call twice.

Before a call is sent, this process claims its cache key in the workspace (``call_claims``:
owner, host, process id, expiry). A run that finds a key claimed by another live process does not
send it: it waits until the other's result is stored (and takes it from the cache) or the claim
goes away — released after a failure, held by a process of this host that no longer exists, or,
for a claim of another host (whose processes cannot be checked from here), expired (claims are
renewed every ``CLAIM_RENEW_S`` while calls run and last ``CLAIM_LEASE_S``) — and then claims and
sends it itself. A call stored meanwhile is never claimed: it is taken from the cache.

Batch-mode calls (:mod:`lsqa.llm.batch`) claim the *submission* of a provider batch the same way,
under the key ``batch:<lsqa batch id>``: the run holding it uploads the file, creates the batch
and later collects its results; another run of the same study waits and adopts that batch.

Online and batch runs of the same calls (the cache key leaves out ``mode`` and ``api_base``): a call
an unfinished batch holds is not sent online (``claim_unbatched``; the online run says which batch
has it, and finds it in the cache once that batch is collected), and a call claimed online is not
put in a new batch (the batch run waits for its answer, ``lsqa.llm.batch``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Sequence

CLAIM_LEASE_S = float(os.environ.get("LSQA_CLAIM_LEASE_S", "60"))
CLAIM_RENEW_S = CLAIM_LEASE_S / 3
CLAIM_POLL_S = 0.25  # how often a waiting run looks for the other run's results

_owner: tuple[int, str] | None = None
# One writer of claims at a time in this process: DuckDB fails one of two transactions that
# update the same row at once (a renewal thread and a run's own writes). Reentrant: a holder may
# call these functions.
write_lock = threading.RLock()


def owner() -> str:
    """This process's owner id (new after a fork)."""
    global _owner
    if _owner is None or _owner[0] != os.getpid():
        _owner = (os.getpid(), f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}")
    return _owner[1]


def now() -> dt.datetime:
    """UTC, naive: how claim times are stored."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _expiry() -> dt.datetime:
    return now() + dt.timedelta(seconds=CLAIM_LEASE_S)


def claim(workspace: Path, keys: Sequence[str]) -> set[str]:
    """Claim ``keys``; return the ones this process holds (the others are another run's)."""
    from lsqa.store import write

    with write_lock, write(workspace) as con:
        return claim_in(con, keys)


def claim_unbatched(workspace: Path, keys: Sequence[str]) -> tuple[set[str], dict[str, dict]]:
    """:func:`claim` for calls sent one by one: the keys this process holds, and, not claimed, those an
    unfinished provider batch holds (``lsqa.store.llm_batches.holding``: key -> that batch), which are
    never sent again. One transaction: a batch run adds its batch rows under the same lock."""
    from lsqa.store import llm_batches, write

    with write_lock, write(workspace) as con:
        batched = llm_batches.holding(con, keys)
        return claim_in(con, [k for k in keys if k not in batched]), batched


def poll_claimed(workspace: Path, keys: Sequence[str], *, others_only: bool = True) -> tuple[dict[str, dict], list[str]]:
    """One look, ``CLAIM_POLL_S`` from now, at calls another run is making: the stored ones' cached rows
    by key, and the keys neither stored nor claimed any more (their maker failed or died). An online run
    waits for other processes' claims only (``others_only``); a batch run for any, its own process's
    online calls too."""
    from lsqa.store import connect, llm_calls

    time.sleep(CLAIM_POLL_S)
    with connect(workspace) as con:
        hits = llm_calls.cached_ok(con, keys)
        rest = [k for k in keys if k not in hits]
        live = (llm_calls.held_by_others(con, rest, owner(), socket.gethostname(), now()) if others_only
                else llm_calls.claimed_live(con, rest, socket.gethostname(), now()))
    return hits, [k for k in rest if k not in live]


def claim_in(con, keys: Sequence[str]) -> set[str]:
    """:func:`claim` inside the caller's transaction."""
    from lsqa.store import llm_calls

    return llm_calls.claim_calls(con, keys, owner(), socket.gethostname(), os.getpid(), now(), _expiry())


@contextlib.contextmanager
def renewing(workspace: Path):
    """Renew this process's claims every ``CLAIM_RENEW_S`` while the block runs (a long upload
    must not look abandoned to another run)."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(CLAIM_RENEW_S):
            try:
                renew(workspace)
            except Exception:  # noqa: BLE001 - a busy workspace: the next beat tries again
                pass

    thread = threading.Thread(target=beat, name="lsqa-claim-renewal", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def renew_in(con) -> None:
    from lsqa.store import llm_calls

    llm_calls.renew_claims(con, owner(), _expiry())


def renew(workspace: Path) -> None:
    from lsqa.store import write

    with write_lock, write(workspace) as con:
        renew_in(con)


def release_in(con, keys: Sequence[str]) -> None:
    from lsqa.store import llm_calls

    llm_calls.release_claims(con, keys, owner())


def release(workspace: Path, keys: Sequence[str]) -> None:
    from lsqa.store import write

    if keys:
        with write_lock, write(workspace) as con:
            release_in(con, keys)
