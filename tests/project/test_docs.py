"""Docs that cannot drift (issue 10, item 9; issue 29, item 5): README's command table lists every
``lsqa`` command, README's package map and docs/architecture.md's module table name every module
(and nothing that does not exist), files and links named in the code and the docs exist, no
Markdown table is cut in two by a blank line, and README and docs/BENCHMARKS.md stay short enough to
read (README ≤ 300 lines, BENCHMARKS ≤ 400)."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from lsqa.cli.commands import BY_NAME, readme_table
from tests.conftest import PROJECT_ROOT

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
DOCS = PROJECT_ROOT / "docs"
# Every Markdown page a reader is sent to: README, the topic pages and the benchmark log.
PAGES = {p.relative_to(PROJECT_ROOT).as_posix(): p.read_text(encoding="utf-8")
         for p in [PROJECT_ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]}


def _section(title: str, text: str = README) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def _modules(folder: Path) -> set[str]:
    """The modules of one package folder by name: Python stems (not ``__init__``) and browser scripts."""
    return ({p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
            | {p.name for p in folder.glob("*.js")})


def _packages() -> list[Path]:
    """Every code package under lsqa/ (folders with an ``__init__.py``), the shipped data left out."""
    return sorted(p.parent for p in (PROJECT_ROOT / "lsqa").rglob("__init__.py")
                  if "shipped" not in p.parts and p.parent != PROJECT_ROOT / "lsqa")


def _module_files() -> list[str]:
    files = [*(PROJECT_ROOT / "lsqa").rglob("*.py"), *(PROJECT_ROOT / "lsqa").rglob("*.js")]
    return sorted(p.relative_to(PROJECT_ROOT).as_posix() for p in files
                  if p.name != "__init__.py" and "/shipped/" not in p.as_posix())


def _cells(row: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_readme_command_table_is_the_command_list():
    """README's command table is generated from lsqa/cli/commands.py (scripts/readme_commands.py
    --write): a row added, dropped or edited by hand, or a command missing, fails here."""
    rows = [line for line in _section("Command line").splitlines() if line.startswith("|")]
    assert "\n".join(rows) == readme_table(), "run: python scripts/readme_commands.py --write"
    documented = set(re.findall(r"^\| `lsqa ([a-z][a-z-]*)", "\n".join(rows), flags=re.M))
    assert documented == set(BY_NAME)


def test_readme_package_map_names_every_module_of_every_package():
    """README's Architecture table has one row per package; its modules column names exactly the
    package's modules, and the ground floor's row names each top-level module by path."""
    rows = [_cells(line) for line in _section("Architecture").splitlines() if line.startswith("| ")]
    by_package = {}
    for cells in rows:
        package = re.fullmatch(r"`(lsqa/[\w/]*)`", cells[1]) if len(cells) > 2 else None
        if package:
            by_package[package.group(1)] = set(re.findall(r"`([^`\s]+)`", cells[2]))
    assert "lsqa/" in by_package, "README's package map has no ground-floor row"
    top = {p.relative_to(PROJECT_ROOT).as_posix() for p in (PROJECT_ROOT / "lsqa").glob("*.py")
           if p.name != "__init__.py"}
    assert by_package.pop("lsqa/") == top, "the ground-floor row must name lsqa's top-level modules"
    packages = {p.relative_to(PROJECT_ROOT).as_posix() + "/": p for p in _packages()}
    assert set(by_package) == set(packages), "README's package map and lsqa/'s packages differ"
    for name, folder in packages.items():
        assert by_package[name] == _modules(folder), f"README's row for {name} and its modules differ"


def test_every_module_is_in_the_architecture_table():
    """docs/architecture.md's module table names every module by its path, and nothing that does
    not exist."""
    table = _section("Modules", (DOCS / "architecture.md").read_text(encoding="utf-8"))
    names = set(re.findall(r"`([^`\s]+)`", table))
    # Paths only: `lsqa/lexical-judge` is a model's name, `lsqa/store/db.py` and `pages/` are paths.
    patterns = [n for n in names if n.startswith(("lsqa/", "app.py", "pages/")) and re.search(r"(\.\w+|/)$", n)]
    missing = [rel for rel in _module_files() if not any(fnmatch.fnmatch(rel, p) for p in patterns)]
    assert missing == [], "modules missing from docs/architecture.md's module table"
    for name in patterns:  # and every module the table names exists
        assert list(PROJECT_ROOT.glob(name.rstrip("/"))), name


NAMED = re.compile(r"(?<![\w/.])((?:docs|bench|tests|configs|db/migrations|prompts|lsqa|pages)/[\w./-]+"
                   r"\.(?:md|py|toml|sql|txt|png|js)|[A-Z]+\.md)\b")


def test_files_named_in_code_and_docs_exist():
    """A path a docstring or a page names exists: from the project's root, or (a bare ``NAME.md``)
    beside the page that names it."""
    texts = dict(PAGES)
    for path in (PROJECT_ROOT / "lsqa").rglob("*.py"):
        texts[path.relative_to(PROJECT_ROOT).as_posix()] = path.read_text(encoding="utf-8")
    missing = sorted({(where, ref) for where, text in texts.items() for ref in NAMED.findall(text)
                      if not (PROJECT_ROOT / ref).exists()
                      and not (PROJECT_ROOT / where).parent.joinpath(ref).exists()})
    assert missing == []


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(text: str) -> set[str]:
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", _without_code(text), flags=re.M)}


def _without_code(text: str) -> str:
    """The page with its fenced code blocks blanked (their lines kept, so line numbers hold)."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else line)
    return "\n".join(out)


def _broken_links(pages: dict[str, str]) -> list[tuple[str, str]]:
    broken = []
    for where, text in pages.items():
        for target in re.findall(r"\]\(([^)\s]+)\)", _without_code(text)):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto: are not files here
                continue
            path, _, anchor = target.partition("#")
            file = (PROJECT_ROOT / where).parent / path if path else PROJECT_ROOT / where
            if not file.exists():
                broken.append((where, target))
            elif anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text(encoding="utf-8")):
                broken.append((where, target))
    return broken


def test_relative_links_point_to_existing_files_and_headings():
    assert _broken_links(PAGES) == []


def test_broken_links_are_found():
    planted = {"docs/x.md": "see [a](studies.md), [b](nowhere.md), [c](studies.md#no-such-heading), "
                            "[d](limits.md#what-is-refused), [e](https://example.org/x.md)"}
    assert _broken_links(planted) == [("docs/x.md", "nowhere.md"), ("docs/x.md", "studies.md#no-such-heading")]


def _split_tables(text: str) -> list[int]:
    """Line numbers (1-based) of table rows that do not belong to a table: a run of ``|`` lines
    whose second line is not a header separator. Markdown renders such rows as plain text, which is
    what a blank line inside a table does to the rows after it."""
    lines = _without_code(text).split("\n")
    bad, i = [], 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].startswith("|"):
            i += 1
        if i - start < 2 or not re.fullmatch(r"\|( *:?-+:? *\|)+", lines[start + 1].strip()):
            bad.append(start + 1)
    return bad


def test_no_table_is_cut_by_a_blank_line():
    assert {where: rows for where, text in PAGES.items() if (rows := _split_tables(text))} == {}


def test_a_cut_table_is_found():
    whole = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
    cut = "| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n"
    assert _split_tables(whole) == []
    assert _split_tables(cut) == [5]
    assert _split_tables("```\n| not | a table |\n```\n") == []


def test_readme_and_benchmarks_stay_short():
    assert len(README.splitlines()) <= 300, "README.md: keep it ≤ 300 lines, move the rest to docs/"
    benchmarks = (DOCS / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert len(benchmarks.splitlines()) <= 400, "docs/BENCHMARKS.md: today's figures only; passes go to the log"


def test_prose_lines_are_short():
    """Prose in README and the topic pages wraps at 120 characters (tables and code may not)."""
    long = [(where, n) for where, text in PAGES.items() if "benchmarks-log/" not in where
            for n, line in enumerate(_without_code(text).split("\n"), 1)
            if len(line) > 120 and not line.startswith(("|", "    "))]
    assert long == []


def test_every_docs_page_is_linked_from_readme():
    linked = set(re.findall(r"\]\((docs/[^)#\s]+)", README))
    pages = {p.relative_to(PROJECT_ROOT).as_posix() for p in DOCS.glob("*.md")}
    assert pages - linked == set(), "docs/ pages README does not link to"
