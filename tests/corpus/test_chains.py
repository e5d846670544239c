"""`lsqa entities`: entity chains of a stored book, ranked, stored once, rendered as in paper §2."""

import json
import re

from typer.testing import CliRunner

from lsqa import store
from lsqa.cli import app
from lsqa.corpus.ingest import ingest_narrativeqa
from tests.conftest import TEST_DATA

runner = CliRunner()


def test_entities_command_ranks_stores_and_annotates(workspace):
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    r = runner.invoke(app, ["entities", "The Tale of Tom Kitten", "--workspace", str(workspace), "--top", "5"])
    assert r.exit_code == 0, r.output
    assert "Tom Kitten" in r.output.split("annotated excerpt")[0]
    excerpt = r.output.split("annotated excerpt ([rank mention]):")[1]
    marks = re.findall(r"\[(\d+) ([^\]]+)\]", excerpt)
    assert len(marks) >= 3 and {int(n) for n, _ in marks} <= set(range(1, 6))
    with store.connect(workspace) as con:
        n_entities = con.execute("SELECT count(*) FROM entities").fetchone()[0]
        text, = con.execute("SELECT full_text FROM documents WHERE title = 'The Tale of Tom Kitten'").fetchone()
    r = runner.invoke(app, ["entities", "The Tale of Tom Kitten", "--workspace", str(workspace), "--json"])
    chains = json.loads(r.output)
    with store.connect(workspace) as con:
        assert con.execute("SELECT count(*) FROM entities").fetchone()[0] == n_entities  # stored once
    assert [c["rank"] for c in chains] == sorted(c["rank"] for c in chains)
    assert all(c["n_mentions"] == len(c["mentions"]) for c in chains)
    counts = [c["n_mentions"] for c in chains]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    for c in chains:  # every mention span maps back to the stored text
        for a, b in c["mentions"]:
            assert text[a:b].strip() and text[a:b] == text[a:b].strip()


def test_unknown_document_is_a_clear_error(workspace):
    ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    r = runner.invoke(app, ["entities", "No Such Book", "--workspace", str(workspace)])
    assert r.exit_code == 2 and "unknown document 'No Such Book'" in r.output
