"""Package fronts that load a public name's module on first use (PEP 562).

A package's ``__init__`` re-exports its public names so callers can write ``from lsqa.stats import
fit_bradley_terry``; importing every module eagerly would make ``lsqa status`` and ``lsqa --help``
pay for numpy, scipy, pyarrow and plotly they never use. A package lists its names per module in a
``_LAZY`` mapping and takes ``__getattr__`` / ``__dir__`` from :func:`lazy_front`.
"""

from __future__ import annotations

import importlib
from typing import Callable, Mapping, Sequence


def lazy_names(lazy: Mapping[str, Sequence[str]]) -> list[str]:
    """Every name a ``_LAZY`` mapping (module → names) exports, in its order."""
    return [name for names in lazy.values() for name in names]


def lazy_front(package: str, lazy: Mapping[str, Sequence[str]],
               namespace: dict) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: a name of ``lazy`` is imported from its module
    the first time it is asked for, then kept in ``namespace`` (the package's globals) so the next
    lookup does not come here."""
    where = {name: module for module, names in lazy.items() for name in names}

    def __getattr__(name: str):
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
