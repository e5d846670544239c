"""Browser-side pieces of the dashboard that are not Python: read as text, shown by the pages."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_HERE = Path(__file__).resolve().parent


@cache
def keys_script() -> str:
    """The ``<script>`` that gives the keyboard back to the page after a field (``keys.js``)."""
    return f"<script>{(_HERE / 'keys.js').read_text(encoding='utf-8')}</script>"
