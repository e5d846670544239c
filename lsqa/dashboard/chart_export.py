"""Charts as PNG files, drawn by kaleido with the system's Chromium (Debian's ``/usr/bin/chromium``).

kaleido 1.x draws a Plotly figure in a headless Chrome it starts itself; it finds the browser
through ``BROWSER_PATH``, set here to the system chromium when the environment does not name one,
so nothing is downloaded. Starting the browser takes several seconds, so one kaleido server is
kept for the life of the process and started on the first PNG asked for (never at page load).
"""

from __future__ import annotations

import os
import shutil
import threading
import warnings

from lsqa.errors import LsqaError

_lock = threading.Lock()
_started = False
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


class PngExportError(LsqaError):
    """A PNG could not be drawn (no Chromium on this machine, or kaleido failed)."""


def browser_path() -> str | None:
    """The browser kaleido will use: ``BROWSER_PATH`` if set, else the first Chromium on PATH."""
    if os.environ.get("BROWSER_PATH"):
        return os.environ["BROWSER_PATH"]
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


def _ensure_server() -> None:
    global _started
    with _lock:
        if _started:
            return
        path = browser_path()
        if not path:
            raise PngExportError("PNG export needs Chromium: install Debian's chromium (`make browser`) or set "
                                 "BROWSER_PATH to a Chrome/Chromium executable")
        os.environ.setdefault("BROWSER_PATH", path)
        import kaleido

        kaleido.start_sync_server(silence_warnings=True)
        _started = True


def to_png(fig, *, width: int = 1100, height: int | None = None, scale: float = 2.0) -> bytes:
    """The figure as PNG bytes (``scale`` 2: sharp on slides)."""
    _ensure_server()
    height = height or int(fig.layout.height or 450)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # plotly notes that kaleido's options are unused with a server
            return fig.to_image(format="png", width=width, height=height, scale=scale)
    except Exception as exc:  # kaleido reports browser problems with many exception types
        raise PngExportError(f"PNG export failed ({type(exc).__name__}: {exc}); the HTML export has the same "
                             "chart") from exc
