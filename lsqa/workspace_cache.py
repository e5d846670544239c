"""Reads of a workspace kept while its data is unchanged: the dashboard's pages, a new tab and the
next keypress ask the same questions again.

A result is kept under the workspace's data version (``lsqa.store.db.data_version``: it changes
with every commit, from any process) and the call's arguments, so a review, a flag or a pipeline
run that commits anything makes the next call read the workspace again. Callers get a copy: what
they change stays theirs.

``LSQA_READ_CACHE=0`` turns it off (to measure the reads themselves, ``bench/``).
"""

from __future__ import annotations

import copy
import functools
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, TypeVar

from lsqa.store.db import data_version

F = TypeVar("F", bound=Callable)

_all_caches: list[OrderedDict] = []


def enabled() -> bool:
    return os.environ.get("LSQA_READ_CACHE", "1") != "0"


def kept_while_unchanged(maxsize: int = 16) -> Callable[[F], F]:
    """Decorate ``fn(workspace, *args, **kwargs)``, whose result depends only on the workspace's
    data and the (hashable) arguments. The ``maxsize`` latest results are kept."""

    def decorate(fn: F) -> F:
        kept: OrderedDict = OrderedDict()
        lock = threading.Lock()
        _all_caches.append(kept)

        @functools.wraps(fn)
        def read(workspace, *args, **kwargs):
            version = data_version(workspace) if enabled() else None
            if version is None:
                return fn(workspace, *args, **kwargs)
            try:
                key = hash_key((str(Path(workspace).resolve()), version, args, sorted(kwargs.items())))
            except TypeError:  # an argument that cannot be a key: read as if there were no cache
                return fn(workspace, *args, **kwargs)
            with lock:
                if key in kept:
                    kept.move_to_end(key)
                    return copy.deepcopy(kept[key])
            result = fn(workspace, *args, **kwargs)
            with lock:
                kept[key] = copy.deepcopy(result)
                while len(kept) > maxsize:
                    kept.popitem(last=False)
            return result

        read.uncached = fn  # type: ignore[attr-defined]
        return read  # type: ignore[return-value]

    return decorate


def hash_key(value):
    """``value`` as a hashable key: lists become tuples, dicts and sets sorted tuples."""
    if isinstance(value, (list, tuple)):
        return tuple(hash_key(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, hash_key(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(hash_key(v) for v in value))
    hash(value)
    return value


def clear() -> None:
    """Forget every kept result (tests)."""
    for kept in _all_caches:
        kept.clear()
