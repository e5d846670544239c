"""Where the dashboard's links lead (lsqa.dashboard.links): one link to the Audit page, resolved the way a
browser resolves it, under any address and base path; the dashboard's address checked before it reaches a
person."""

from __future__ import annotations

import pytest

from lsqa.dashboard import links
from lsqa.errors import InputError


@pytest.mark.parametrize("page, opens", [
    ("http://127.0.0.1:8501/leaderboard", "http://127.0.0.1:8501/audit?item="),
    ("http://127.0.0.1:8501/", "http://127.0.0.1:8501/audit?item="),
    ("https://team.example/lsqa/adjudicate", "https://team.example/lsqa/audit?item="),
    ("https://team.example/lsqa/", "https://team.example/lsqa/audit?item="),
])
def test_an_audit_link_opens_the_audit_page_beside_the_page_that_shows_it(page, opens):
    assert links.absolute(links.audit_link("abc"), page) == opens + "abc"


def test_the_dashboards_home_keeps_its_base_path():
    assert links.home("https://team.example/lsqa") == links.home("https://team.example/lsqa/") == \
        "https://team.example/lsqa/"
    assert links.absolute(links.audit_link("abc"), links.home("https://team.example/lsqa")) == \
        "https://team.example/lsqa/audit?item=abc"


def test_an_id_is_one_parameter_whatever_it_holds():
    """An imported verdict's id is the file's: characters that would end the parameter or the address are quoted."""
    link = links.audit_link("a/b?c&d=e#f g%")
    assert link == "audit?item=a%2Fb%3Fc%26d%3De%23f%20g%25"
    from urllib.parse import parse_qs, urlsplit
    assert parse_qs(urlsplit(links.absolute(link, "http://h/x")).query) == {"item": ["a/b?c&d=e#f g%"]}


@pytest.mark.parametrize("base", ["javascript:alert(1)", "ftp://host", "http://", "host:8501", "http://host/a b",
                                  "http://host/\nSet-Cookie: x", "http://host/\u202eevil", "http://host\u00a0"])
def test_an_address_that_is_not_one_is_refused_naming_where_it_came_from(base, monkeypatch):
    with pytest.raises(InputError, match="--dashboard-url"):
        links.dashboard_address(base)
    monkeypatch.setenv(links.ADDRESS_ENV, base)
    with pytest.raises(InputError, match=links.ADDRESS_ENV):
        links.home()


def test_without_an_address_links_lead_to_make_runs(monkeypatch):
    monkeypatch.delenv(links.ADDRESS_ENV, raising=False)
    assert links.home() == "http://127.0.0.1:8501/"
    monkeypatch.setenv(links.ADDRESS_ENV, "http://10.0.0.7:8501/")
    assert links.home() == "http://10.0.0.7:8501/"
