"""History lives in docs/, not in the code: no module, page or browser script of lsqa cites an
issue ("issue 35", "issues 12", "#34"). A reason stays in the comment without its number; a
decision's history goes to docs/decisions/ (one page each)."""

from __future__ import annotations

import re

from .conftest import PROJECT_ROOT

ISSUE_REF = re.compile(r"\bissues?\s*#?\s*\d+|\b(?:PR|pull request)\s*#?\s*\d+|\(#\d+\)|\bsee #\d+", re.IGNORECASE)


def _code_files():
    yield PROJECT_ROOT / "app.py"
    for folder in ("lsqa", "pages"):
        for path in sorted((PROJECT_ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".js") and "shipped" not in path.parts:
                yield path


def test_the_pattern_finds_what_it_must():
    found = [bool(ISSUE_REF.search(t)) for t in ("(issue 35)", "Issue 12: slow", "issues 13 and 30", "see #34",
                                                 "(#41)", "issue #7")]
    missed = [bool(ISSUE_REF.search(t)) for t in ("&#46;", "color:#555", "an issue of the book", "tissue 3")]
    assert all(found) and not any(missed)


def test_no_issue_numbers_in_code():
    cited = [f"{path.relative_to(PROJECT_ROOT)}:{n}: {line.strip()[:100]}"
             for path in _code_files()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if ISSUE_REF.search(line)]
    assert cited == [], "history belongs in docs/ (docs/decisions/ for a decision), not in the code"
