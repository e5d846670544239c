"""Where the dashboard's links lead: its address (for links that leave it: sign-in links, the stakeholder
report) and the Audit page opened on one verdict.

Inside the dashboard a link is relative to the page that shows it, so it holds under any address and base
path (``server.baseUrlPath``). A link in a file that leaves the dashboard (a report opened from disk or a
mail) has no page to be relative to: it is made absolute against the dashboard's address."""

from __future__ import annotations

import os
import unicodedata
from urllib.parse import quote, urljoin, urlsplit

from lsqa.errors import InputError

# `make run`'s address: where links lead when neither --dashboard-url nor LSQA_DASHBOARD_URL says otherwise.
DEFAULT_ADDRESS = "http://127.0.0.1:8501"
ADDRESS_ENV = "LSQA_DASHBOARD_URL"


def dashboard_address(base: str | None = None) -> str:
    """The dashboard's address, without a trailing slash: ``base`` (given as ``--dashboard-url``), else
    ``LSQA_DASHBOARD_URL``, else make run's. Checked, else InputError: an http(s) URL with a host and no
    control, invisible or space character (a ``javascript:`` link or a line break would reach the person who
    opens it)."""
    where = "--dashboard-url" if base is not None else ADDRESS_ENV
    if base is None:
        base = os.environ.get(ADDRESS_ENV) or DEFAULT_ADDRESS
    hint = f"give the dashboard's address, e.g. {DEFAULT_ADDRESS}"
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Zs") for ch in base):
        raise InputError(where, f"{base!r} holds a control, invisible or space character", hint=hint)
    parts = urlsplit(base)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise InputError(where, f"{base!r} is not an http(s) address", hint=hint)
    return base.rstrip("/")


def audit_link(judgment_id: str) -> str:
    """The Audit page opened on one verdict (``?item=``, which ``audit_view.opening_state`` reads), relative
    to the page that shows the link."""
    return f"audit?item={quote(judgment_id, safe='')}"


def absolute(link: str, page: str) -> str:
    """``link`` (relative, as a page of the dashboard shows it) as the address it opens from ``page``, as a
    browser resolves it: ``page`` is a page's own address (``st.context.url``) or :func:`home`."""
    return urljoin(page, link)


def home(base: str | None = None) -> str:
    """The dashboard's first page (:func:`dashboard_address` with its slash): what a link is relative to when
    it is read away from the dashboard, in a file or a mail."""
    return dashboard_address(base) + "/"
