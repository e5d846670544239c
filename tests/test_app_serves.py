"""`make run` serves the dashboard: the same streamlit command, on a free 127.0.0.1 port, answers."""

import urllib.request

from lsqa.corpus import ingest

from .conftest import TEST_DATA
from .streamlit_server import serve


def test_streamlit_serves_app(workspace):
    ingest.ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    with serve(workspace) as url:
        page = urllib.request.urlopen(f"{url}/", timeout=5).read().decode()
    assert "<title>" in page.lower()
