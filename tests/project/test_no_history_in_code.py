"""History lives in docs/, not in the code: no module, page or browser script of lsqa cites an
issue ("issue 35", "issues 12", "#34"), and no comment or docstring carries a measured timing or a date. A
reason stays in the comment without its number or figure; a decision's history goes to docs/decisions/ (one page
each), a measurement to docs/BENCHMARKS.md."""

from __future__ import annotations

import io
import re
import tokenize

from tests.conftest import PROJECT_ROOT

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


# A measured duration: a number (thousands as 1,000, decimals, "~" before, a range "10-30" or "2 to 4") and a time
# unit. A bare "s" must stand apart from its number ("0.78 s") or follow a decimal ("0.5s"), so that "500s" (HTTP
# codes) or "1990s" are not read as times; a thousands comma takes exactly three digits, so that "(f+1, s+1" is not
# "1, s"; a number after "^" or a letter is an exponent or a name ("θ^2 s", "x1 s"), not a figure.
_NUMBER = r"~?\d+(?:,\d{3})*(?:\.\d+)?"
DURATION = re.compile(
    rf"(?<![\w.^])(?:{_NUMBER}\s*(?:-|–|to)\s*)?{_NUMBER}"
    r"(?:\s+(?:ms|µs|s|secs?|seconds?|mins?|minutes?|hours?)|(?:ms|µs|secs?|seconds?|mins?|minutes?|hours?)"
    r"|(?<=\.\d)s|(?<=\.\d\d)s)(?![\w(^])"
)
# An ISO date, unless it is part of a file name (docs/benchmarks-log/2026-12-03-import-scale.md is a pointer).
ISO_DATE = re.compile(r"(?<![\w/-])20\d\d-[01]\d-[0-3]\d(?![\w-])")

_SKIPPED = (tokenize.NL, tokenize.COMMENT)


def _comments_and_docstrings(source: str):
    """Yield (line number, text) for each comment and each string that stands as a statement of its own (a module's,
    class's or function's docstring, or an attribute's); a string inside code (a label, a message, an f-string shown
    to a person) is not yielded."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    starts_statement = True
    for i, token in enumerate(tokens):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
            continue
        if token.type == tokenize.NL:
            continue
        if token.type == tokenize.STRING and starts_statement:
            after = next((t for t in tokens[i + 1:] if t.type not in _SKIPPED and t.type != tokenize.STRING), None)
            if after is None or after.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                yield token.start[0], token.string
        starts_statement = token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING) or (
            token.type == tokenize.STRING and starts_statement)


def timings_in_comments(source: str) -> list[tuple[int, str]]:
    """The lines of comments and docstrings in ``source`` that carry a measured duration or an ISO date."""
    found = []
    for first_line, text in _comments_and_docstrings(source):
        for offset, line in enumerate(text.splitlines()):
            if DURATION.search(line) or ISO_DATE.search(line):
                found.append((first_line + offset, line.strip()))
    return found


def test_the_timing_checker_finds_what_it_must():
    durations = ["0.78 s", "~7 ms", "12.5 s -> 6.8 s", "10-30 ms", "(2.6 s cold)", "1,200 ms", "3 seconds",
                 "14-16 s once", "took 2 minutes", "+0.3-0.5 s", "0.5s", "40ms"]
    not_durations = ["litellm reports some missing keys as 500s", "∫_{p0}^1 θ^s (1 − θ)^f; betainc(f+1, s+1, 1 − p0)",
                     "takes seconds", "minutes on a busy machine", "the 1990s", "every 5 steps", "~8 %", "4x faster",
                     "x1 s", "1.5 sigma", "2 min(x)"]
    assert [t for t in durations if not DURATION.search(t)] == []
    assert [t for t in not_durations if DURATION.search(t)] == []
    assert ISO_DATE.search("measured on 2026-12-03") and ISO_DATE.search("(2026-12-03)")
    assert not ISO_DATE.search("docs/benchmarks-log/2026-12-03-import-scale.md") and not ISO_DATE.search("v2026-12-031")

    planted = (
        '"""A module; its import takes ~3 s."""\n'
        "import time\n"
        "\n"
        "\n"
        "def shown(x):\n"
        '    """Word a duration for a person."""\n'
        "    # cached: reading it each time cost 10-30 ms (measured 2026-12-03)\n"
        '    label = f"{x:.1f} s"\n'
        '    return label + " (0.78 s before)" + """\n'
        '    12 ms"""\n'
        "\n"
        "\n"
        "class Pace:\n"
        "    every = 1.5\n"
        '    """Seconds between two decisions, 1.5 s by default."""\n'
    )
    assert [n for n, _ in timings_in_comments(planted)] == [1, 7, 15]
    assert timings_in_comments('def f():\n    """Fast."""\n    return f"{t:.2f} s"  # shown as seconds\n') == []


def _python_files():
    yield PROJECT_ROOT / "app.py"
    yield PROJECT_ROOT / "dashboard.py"
    for folder in ("lsqa", "pages"):
        for path in sorted((PROJECT_ROOT / folder).rglob("*.py")):
            if "shipped" not in path.parts:
                yield path


def test_no_measured_timings_or_dates_in_comments():
    """A comment or docstring keeps the reason (why a cache, a batch, a literal) without the figure; the figure and
    its command live in docs/BENCHMARKS.md or docs/benchmarks-log/, a decision's history in docs/decisions/."""
    dated = [f"{path.relative_to(PROJECT_ROOT)}:{n}: {line[:100]}"
             for path in _python_files() for n, line in timings_in_comments(path.read_text(encoding="utf-8"))]
    assert dated == [], "measured timings and dates belong in docs/ (docs/BENCHMARKS.md, docs/decisions/), not the code"
