"""The one rule for names people give: systems, judges, raters, annotators, document ids and titles.

A name is shown in tables, terminals, CSV files and the dashboard, and compared by equality when
results are joined. So a name is refused when it holds what a person cannot see or what rewrites
the screen around it: control characters (newline, tab, the ESC that starts a terminal escape
code), bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE turns ``abc`` into ``cba`` on screen),
zero-width and other invisible characters (U+200B..U+200D, U+2060, U+FEFF), line and paragraph
separators, private-use and unassigned code points; or when it is over ``MAX_NAME_CHARS``.

Two names that differ only by characters that look alike (``gpt4o`` and ``gрt4o`` with a Cyrillic
``р``) are both accepted, but the second one gets a warning naming both: the look-alike test is
Unicode TR39's *skeleton* (confusable characters mapped to one prototype), with the mapping of the
``confusable_homoglyphs`` package (Unicode's ``confusables.txt``).

Every caller words its own refusal (a config place, a file and line, the Audit page) around
``name_problem``'s reason, so the rule itself is written once, here.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable

__all__ = ["MAX_NAME_CHARS", "lookalike_warnings", "lookalikes", "name_problem", "shown_name", "skeleton"]

MAX_NAME_CHARS = 200

# General categories no name may hold: controls, format characters (bidi controls, zero-width
# joiners, the BOM, soft hyphen), surrogates, private use, unassigned, line/paragraph separators.
_REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
# Default-ignorable code points of other categories: drawn as nothing by most fonts, so two names
# that differ by one look the same (combining grapheme joiner, Hangul fillers, Khmer inherent
# vowels, Mongolian free variation selectors, variation selectors).
_INVISIBLE = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810),
              *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)}


def _character(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def shown_name(value, limit: int = 40) -> str:
    """``value`` quoted for a message: Python's repr escapes every control, bidi and invisible
    character (``'\\u202e'``), so the message cannot rewrite the terminal it is printed on."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 4] + "...'"


def name_problem(value, *, max_chars: int = MAX_NAME_CHARS) -> str:
    """Why ``value`` cannot be a name ('' when it can): the problem, worded to follow the name."""
    if not isinstance(value, str):
        return f"is {type(value).__name__}, not text"
    if not value.strip():
        return "is empty"
    if len(value) > max_chars:
        return f"has {len(value):,} characters, above the {max_chars} allowed for a name"
    for i, ch in enumerate(value, start=1):
        if unicodedata.category(ch) in _REFUSED_CATEGORIES or ord(ch) in _INVISIBLE:
            kind = "a control character" if unicodedata.category(ch) == "Cc" else "an invisible or bidi character"
            return f"holds {_character(ch)} ({kind}) at character {i}"
    return ""


@functools.lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Non-ASCII character -> the ASCII character it is confusable with, from Unicode's confusables
    (the package's data). ASCII characters keep themselves: ``l``/``1`` and ``O``/``0`` are names
    people choose on purpose, while a Cyrillic ``р`` in a Latin name is what the warning is for."""
    import json
    from importlib import resources

    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    table: dict[str, str] = {}
    for ch, entries in data.items():
        if len(ch) != 1 or ch.isascii():
            continue
        for entry in entries:
            glyph = entry.get("c", "")
            if glyph.isascii() and glyph.isprintable() and glyph.strip():
                table[ch] = glyph
                break
    return table


def skeleton(name: str) -> str:
    """TR39's skeleton, restricted to mapping onto ASCII: NFKC (fullwidth ``ｇ`` is ``g``), then each
    confusable character replaced by its ASCII prototype, then NFKC again."""
    table = _prototypes()
    text = unicodedata.normalize("NFKC", name)
    return unicodedata.normalize("NFKC", "".join(table.get(ch, ch) for ch in text))


def lookalikes(names: Iterable[str], existing: Iterable[str] = ()) -> list[tuple[str, str]]:
    """``(name, other)`` pairs of different names that look alike: each of ``names`` against
    ``existing`` and against the names before it. Pure ASCII names are only compared with non-ASCII
    ones (two ASCII names never look alike here: see ``_prototypes``)."""
    seen: dict[str, str] = {}
    for other in existing:
        if isinstance(other, str):
            seen.setdefault(skeleton(other), other)
    pairs = []
    for name in dict.fromkeys(n for n in names if isinstance(n, str)):
        key = skeleton(name)
        other = seen.setdefault(key, name)
        if other != name:
            pairs.append((name, other))
    return pairs


def lookalike_warnings(names: Iterable[str], existing: Iterable[str] = (), *, what: str = "name") -> list[str]:
    """One warning line per look-alike pair, naming both names and the characters that differ."""
    out = []
    for name, other in lookalikes(names, existing):
        odd = [_character(ch) for ch in dict.fromkeys(name + other) if not ch.isascii()]
        out.append(f"warning: {what} {shown_name(name)} looks like {shown_name(other)} "
                   f"({', '.join(odd[:3]) or 'different characters'}); check that they are meant to be two "
                   f"{what}s, or rename one")
    return out
