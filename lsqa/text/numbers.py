"""Numbers as a person reads them: the one formatter of every figure lsqa prints on a page, in the
report or in the CLI's text (JSON and CSV keep full precision).

Rules (docs/dashboard.md, "Numbers on the page"): at most three significant digits, never exponent
form (``1.54e-11`` is not a figure a stakeholder reads); thousands separated by commas; an interval
whose bound lies beyond a sane range, or that rests on fewer audits than its estimate needs, is
said in words ("too few audits to say (n = 5)", "unbounded: ...") instead of digits, because
``0.000 – 52,263,024,284`` is not an interval anyone can act on. Whole counts (verdicts, audits,
questions) are printed whole with :func:`count`: they are counted, not estimated.
"""

from __future__ import annotations

import math

DIGITS = 3                # significant digits of an estimate on the page
RATIO_LIMIT = 1e3         # a strength ratio past this (or below its inverse) is not a figure but "unbounded"
STRENGTH_LIMIT = 1e4      # a Bradley-Terry strength e^β past this (or below its inverse) likewise
SMALLEST = 1e-3           # nonzero magnitudes below this print as "< 0.001"


def figure(x: float | int | None, digits: int = DIGITS, *, missing: str = "—") -> str:
    """``x`` with at most ``digits`` significant digits, in positional form with thousands commas:
    ``52263.02 → "52,300"``, ``0.012345 → "0.0123"``, ``1.0 → "1.00"`` (trailing zeros kept: the
    precision is the same on every row), ``1e-11 → "< 0.001"``.
    ``missing`` for None; "not finite" for ±inf and NaN (never the digits of a diverged fit)."""
    if x is None:
        return missing
    x = float(x)
    if not math.isfinite(x):
        return "not finite"
    if x == 0:
        return "0"
    if abs(x) < SMALLEST:
        return "< 0.001" if x > 0 else "> -0.001"
    exponent = math.floor(math.log10(abs(x)))
    places = digits - 1 - exponent            # negative: round to tens, hundreds, ...
    rounded = round(x, places)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > exponent:  # 9.996 → 10.0: one place fewer
        places -= 1
    places = max(0, places)
    return f"{rounded:,.{places}f}"


def signed(x: float | None, digits: int = DIGITS) -> str:
    """:func:`figure` with its sign always written (``+0.59``, ``−0.59``), for coefficients around 0."""
    if x is None or not math.isfinite(float(x)) or abs(x) < SMALLEST:
        return figure(x, digits)
    return ("+" if x > 0 else "") + figure(x, digits)


def percent(share: float | None, digits: int = DIGITS, *, missing: str = "—") -> str:
    """A share in [0, 1] as a percentage with at most ``digits`` significant digits: ``0.6882 → "68.8%"``,
    ``0.75 → "75.0%"``, ``1.0 → "100%"``, ``0.05263 → "5.26%"``."""
    if share is None:
        return missing
    return f"{figure(100 * float(share), digits)}%"


def count(n: int | None, *, missing: str = "—") -> str:
    """A whole count, exact, with thousands commas: ``1234 → "1,234"``."""
    return missing if n is None else f"{int(n):,}"


def too_few_audits(n: int) -> str:
    """The words an interval becomes when it rests on fewer audits than its estimate needs."""
    return f"too few audits to say (n = {n})"


def interval(low: float | None, high: float | None, *, limit: float | None = None, scale: float = 1.0,
             suffix: str = "", n_audits: int | None = None, audits_needed: int | None = None,
             unbounded: str = "the data cannot bound it", missing: str = "not estimable") -> str:
    """"low – high" with :func:`figure`, or the reason there is none, in this order:

    - ``n_audits`` below ``audits_needed``: :func:`too_few_audits` (the bounds are not trusted at all);
    - a bound missing: ``missing``;
    - a bound not finite, or (with ``limit``, for positive quantities such as strengths and their
      ratios) above ``limit`` or below ``1 / limit``: "unbounded: " + ``unbounded``.

    ``scale`` multiplies both bounds (100 for percentages) and ``suffix`` follows each ("×", "%").
    """
    if n_audits is not None and audits_needed is not None and n_audits < audits_needed:
        return too_few_audits(n_audits)
    if low is None or high is None:
        return missing
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"unbounded: {unbounded}"
    if limit is not None and (high > limit or (low > 0 and low < 1 / limit) or low <= 0 < high):
        return f"unbounded: {unbounded}"
    return f"{figure(scale * low)}{suffix} – {figure(scale * high)}{suffix}"


def rounded(x: float | None, digits: int = DIGITS) -> float | None:
    """``x`` rounded to ``digits`` significant digits as a number (for a table column a widget formats
    itself, such as a bar's label): what :func:`figure` prints, kept numeric; magnitudes below
    ``SMALLEST`` become 0, None and non-finite values None."""
    if x is None or not math.isfinite(float(x)):
        return None
    x = float(x)
    if abs(x) < SMALLEST:
        return 0.0
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))
