"""Reads of a workspace kept while its data is unchanged: the dashboard's pages, a new tab and the
next keypress ask the same questions again.

A result is kept under the workspace's data version (``lsqa.store.db.data_version``: it changes
with every commit, from any process) and the call's arguments, so a review, a flag or a pipeline
run that commits anything makes the next call read the workspace again. Results are kept pickled
and each caller gets its own copy (what it changes stays its own): a third of what a deep copy
costs on the Audit queue's 100 rows.

A version this process reached by a step it recorded (``lsqa.store.lineage``) can still use what
was kept under the version before it: after a mere checkpoint always, and after a declared change
(one review) when the read says that change cannot touch its result (``survives``). So a decision
on the Audit page does not read the queue again: the verdict decided is left out of it anyway.

``LSQA_READ_CACHE=0`` turns it off (to measure the reads themselves, ``bench/``).
"""

from __future__ import annotations

import functools
import inspect
import os
import pickle
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, TypeVar

from lsqa.store import lineage
from lsqa.store.db import data_version

F = TypeVar("F", bound=Callable)

_all_caches: list[OrderedDict] = []


def enabled() -> bool:
    return os.environ.get("LSQA_READ_CACHE", "1") != "0"


Survives = Callable[[lineage.Change, dict], bool]


def kept_while_unchanged(maxsize: int = 16, survives: Survives | None = None) -> Callable[[F], F]:
    """Decorate ``fn(workspace, *args, **kwargs)``, whose result depends only on the workspace's
    data and the (hashable) arguments. The ``maxsize`` latest results are kept.

    ``survives(change, arguments)``: True when a declared change (``lsqa.store.lineage.Change``)
    cannot alter the result for these arguments (all of ``fn``'s, by name, defaults filled in)."""

    def decorate(fn: F) -> F:
        results = _KeptResults(fn, maxsize, survives)

        @functools.wraps(fn)
        def read(workspace, *args, **kwargs):
            return results.read(workspace, *args, **kwargs)

        read.uncached = fn  # type: ignore[attr-defined]
        read.kept_with_changes = results.kept_with_changes  # type: ignore[attr-defined]
        read.kept_only = results.kept_only  # type: ignore[attr-defined]
        read.keep_derived = results.keep_derived  # type: ignore[attr-defined]
        return read  # type: ignore[return-value]

    return decorate


class _KeptResults:
    """The results kept for one decorated read (``kept_while_unchanged``), pickled under (path, data
    version, call), with the ways its callers find, keep and derive them."""

    def __init__(self, fn: Callable, maxsize: int, survives: Survives | None):
        self.fn, self.maxsize, self.survives = fn, maxsize, survives
        self.kept: OrderedDict = OrderedDict()
        self.lock = threading.Lock()
        self.signature = inspect.signature(fn)
        _all_caches.append(self.kept)

    def kept_result(self, path: str, version, call) -> tuple[bool, bytes | None]:
        """(found, pickled result) kept under exactly this version, marked as the latest used."""
        with self.lock:
            if (path, version, call) in self.kept:
                self.kept.move_to_end((path, version, call))
                return True, self.kept[(path, version, call)]
        return False, None

    def earlier(self, path: str, version, call, workspace, args, kwargs, judged_for: dict | None):
        """What was kept under a version this one follows from by steps the result survives,
        judged with the call's arguments, or with ``judged_for`` in their place (``kept_only``)."""
        arguments = None
        for before, change in lineage.history(path, version):
            if change is not None and not change.unkept_only():
                if self.survives is None:
                    return False, None
                if arguments is None:
                    arguments = self.arguments(workspace, args, kwargs, judged_for)
                if not self.survives(change, arguments):
                    return False, None
            found, result = self.kept_result(path, before, call)
            if found:
                return True, result
        return False, None

    def arguments(self, workspace, args, kwargs, judged_for: dict | None) -> dict:
        """The call's arguments by name, defaults filled in, ``judged_for`` over them: what ``survives`` judges."""
        bound = self.signature.bind(workspace, *args, **kwargs)
        bound.apply_defaults()
        return {**bound.arguments, **(judged_for or {})}

    def keep(self, path: str, version, call, frozen: bytes) -> None:
        """Keep a pickled result, dropping the least recently used beyond ``maxsize``."""
        with self.lock:
            self.kept[(path, version, call)] = frozen
            while len(self.kept) > self.maxsize:
                self.kept.popitem(last=False)

    def find(self, workspace, args, kwargs, judged_for: dict | None = None):
        """(path, version, call, found, pickled result); version None when nothing can be kept."""
        version = data_version(workspace) if enabled() else None
        if version is None:
            return None, None, None, False, None
        path = str(Path(workspace).resolve())
        call = hash_key((args, sorted(kwargs.items())))  # once, whatever versions are tried
        found, result = self.kept_result(path, version, call)
        if not found:
            found, result = self.earlier(path, version, call, workspace, args, kwargs, judged_for)
            if found and judged_for is None:  # judged for another call, it is not this call's now
                self.keep(path, version, call, result)
        return path, version, call, found, result

    def read(self, workspace, *args, **kwargs):
        """The decorated read: a copy of the kept result when there is one, else ``fn``'s, kept."""
        try:
            path, version, call, found, result = self.find(workspace, args, kwargs)
        except TypeError:  # an argument that cannot be a key: read as if there were no cache
            return self.fn(workspace, *args, **kwargs)
        if found:
            return pickle.loads(result)
        result = self.fn(workspace, *args, **kwargs)
        if version is not None:
            self.keep(path, version, call, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        return result

    def kept_only(self, workspace, *args, judged_for: dict | None = None, **kwargs):
        """``(result, version)`` kept for this call, or None: never reads the workspace. Give the
        version back to ``keep_derived`` with what is derived from the result.

        ``judged_for``: the arguments (by name) of the call the result is for, in place of this
        call's own, when the steps since it was kept are judged: a step that leaves this call's
        result stale can leave the derived one as it was (``lsqa.audit.priority_queue``: a review of the
        very verdict the derived queue leaves out)."""
        try:
            _, version, _, found, result = self.find(workspace, args, kwargs, judged_for)
        except TypeError:
            return None
        return (pickle.loads(result), version) if found else None

    def keep_derived(self, workspace, version, result, *args, **kwargs) -> None:
        """Keep ``result`` as this call's under ``version``: for a caller that derived it, without
        reading, from a result ``kept_only`` gave with that version (``lsqa.audit.priority_queue``). Under
        the version of what it came from, never the current one: another process may have
        committed since."""
        call = hash_key((args, sorted(kwargs.items())))
        self.keep(str(Path(workspace).resolve()), version, call, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))

    def kept_with_changes(self, workspace, *args, **kwargs):
        """``(result, version, changes)``: the newest result kept for this call under this version or
        one it follows from by declared steps, whatever they changed, or None; never reads the
        workspace. ``changes``: the declared changes since (a checkpoint adds none), for a caller
        that can bring the result up to date itself (``lsqa.audit.priority_queue``: another
        person's review changes one row of my queue) and keep it with ``keep_derived`` under
        ``version``, the current one (read before anything it reads to bring it up to date)."""
        try:
            version = data_version(workspace) if enabled() else None
            if version is None:
                return None
            path, call = str(Path(workspace).resolve()), hash_key((args, sorted(kwargs.items())))
        except TypeError:
            return None
        found, result = self.kept_result(path, version, call)
        changes: list[lineage.Change] = []
        if not found:
            for before, change in lineage.history(path, version):
                if change is not None and not change.unkept_only():
                    changes.append(change)
                found, result = self.kept_result(path, before, call)
                if found:
                    break
        return (pickle.loads(result), version, changes[::-1]) if found else None


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
    """Forget every kept result and every recorded step (tests)."""
    for kept in _all_caches:
        kept.clear()
    lineage.forget()
