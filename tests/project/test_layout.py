"""The shape of lsqa/ (issue 29): packages by concept on floors, three doors, small package fronts.

Floors, bottom to top. A package imports only from packages on lower floors: never upward, never
sideways on its own floor, also not inside a function (a lazy import is still a dependency).

    0  lsqa/vocabulary.py, errors.py, package_files.py: the words and errors everything shares
    1  text       words, sentences, book passages, prompts as parts, excerpts marked in text
    2  store      the workspace: the only SQL (duckdb), the reads kept while it is unchanged, and the
               importers (store/importers/: stage → check → insert, a record per input)
    3  llm        one call shape for every model; the only importer of litellm; embedded models
    4  prompting  the paper's prompts (Appendix A) and the parsers of their output formats
    5  config     settings, the study config, what a system or judge name stands for
    6  corpus     books, NarrativeQA, entity chains, retrieval, generated questions, contexts
    7  judging    judge kinds, their tasks and verdicts, guidelines, the similarity rater
    8  stats, audit  numbers from arrays (never the workspace); people's work on verdicts (same floor:
                  neither imports the other)
    9  figures    the workspace reads that feed the statistics, live (store in, stats out)
    10 study      pipeline, plan, systems, jobs, demo, imports of results made elsewhere
    11 dashboard  what the pages show, as data and figures
    12 cli        the command line

No import cycle between modules, at any depth: an import inside a function counts as one.

Pages: pages/*.py and app.py import no lsqa package but lsqa.dashboard (app.py also lsqa, for the
process defaults), one dashboard module per screen; a page stays under MAX_PAGE_LINES lines.

Doors: duckdb only in lsqa/store/, and lsqa/stats/ never imports lsqa.store (its math takes arrays), litellm only in lsqa/llm/provider.py, streamlit never in lsqa/;
app.py and pages/ (Streamlit, kept thin) import neither duckdb nor litellm. ruff's TID251
(pyproject.toml) catches the same imports while editing, but opens a door per folder only, so
this test holds the exact rule per file.
"""

from __future__ import annotations

import ast
import functools
import importlib
import subprocess
import sys
import types
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

LSQA = PROJECT_ROOT / "lsqa"
FLOORS = [["lsqa"], ["text"], ["store"], ["llm", "team"], ["prompting"], ["config"], ["corpus"], ["judging"],
          ["stats", "audit"], ["figures"], ["study"], ["dashboard"], ["cli"]]
FLOOR = {name: level for level, names in enumerate(FLOORS) for name in names}
DATA_FOLDERS = {"shipped", "demo_data"}   # files lsqa ships, not Python packages
MAX_TOP_LEVEL_MODULES = 8
RUFF = Path(sys.executable).parent / "ruff"


@functools.cache
def _tree(path: Path) -> ast.Module:
    """The parsed module at ``path``, once per run: every rule here walks the same files (read only)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _python_files(root: Path = LSQA) -> list[Path]:
    return sorted(p for p in root.rglob("*.py")
                  if "__pycache__" not in p.parts and not DATA_FOLDERS.intersection(p.relative_to(root).parts))


def _module_name(path: Path, root: Path = LSQA) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, root: Path = LSQA) -> list[tuple[int, str]]:
    """(line, dotted name) of every import in the file, at any depth; relative ones made absolute,
    ``from a.b import c`` as ``a.b.c`` (c may be a module or a name: the package is what counts)."""
    tree = _tree(path)
    package = _module_name(path, root) if path.name == "__init__.py" else _module_name(path, root).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def _package_of(dotted: str, root: Path = LSQA) -> str | None:
    """The floor name of an lsqa module or name (``lsqa`` for the ground floor), None outside lsqa."""
    parts = dotted.split(".")
    if parts[0] != "lsqa":
        return None
    if len(parts) == 1 or not (root / parts[1]).is_dir():
        return "lsqa"
    return parts[1]


def floor_violations(root: Path = LSQA) -> list[str]:
    """Every import of a package on the same or a higher floor in ``root`` (an lsqa/ folder), as
    ``path:line: ...`` with the path from the folder above it."""
    found = []
    for path in _python_files(root):
        where = path.relative_to(root.parent)
        me = _package_of(_module_name(path, root) + ".x", root)
        for line, target in _imports(path, root):
            other = _package_of(target, root)
            if other is None or other == me:
                continue
            unplaced = [p for p in (me, other) if p not in FLOOR]
            if unplaced:
                found.append(f"{where}:{line}: package {unplaced[0]} has no floor (add it to FLOORS)")
            elif FLOOR[other] >= FLOOR[me]:
                found.append(f"{where}:{line}: {me} (floor {FLOOR[me]}) imports {target} ({other}, floor {FLOOR[other]})")
    return found


def test_no_package_imports_upward_or_sideways():
    assert floor_violations() == []


def test_a_planted_upward_or_sideways_import_is_found(tmp_path):
    # The check itself, on a small lsqa/: an import inside a function from floor 1 up to floor 8,
    # and one sideways between stats and audit (floor 8); a downward one passes.
    root = tmp_path / "lsqa"
    for package in ("text", "stats", "audit"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text('"""A package."""\n')
    (root / "text" / "probe.py").write_text("def f():\n    from lsqa.stats import sampling\n    return sampling\n")
    (root / "stats" / "probe.py").write_text("from lsqa.audit.core import queue\nfrom lsqa.text import units\n")
    assert floor_violations(root) == [
        "lsqa/stats/probe.py:1: stats (floor 8) imports lsqa.audit.core.queue (audit, floor 8)",
        "lsqa/text/probe.py:2: text (floor 1) imports lsqa.stats.sampling (stats, floor 8)",
    ]


def import_cycles(root: Path = LSQA) -> list[list[str]]:
    """Every cycle of imports between the modules in ``root`` (an lsqa/ folder), imports inside
    functions included, each as its modules in order (the least first); ``from p import m`` counts as
    an import of module ``p.m`` when there is one, else of ``p``. A package's ``__init__`` is left
    out as a target: its lazy front names every module below it without importing them."""
    modules = {_module_name(p, root): p for p in _python_files(root)}
    packages = {name for name, p in modules.items() if p.name == "__init__.py"}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for _, dotted in _imports(path, root):
            target = dotted if dotted in modules else dotted.rpartition(".")[0]
            if target in modules and target != name and target not in packages:
                targets.add(target)
        graph[name] = targets
    # Tarjan's strongly connected components; each component of more than one module holds a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_cycles_at_any_depth():
    assert import_cycles() == []


def test_a_planted_cycle_through_a_function_import_is_found(tmp_path):
    # a.x imports a.y at the top; a.y imports a.x inside a function: a cycle all the same.
    root = tmp_path / "lsqa"
    (root / "a").mkdir(parents=True)
    (root / "a" / "__init__.py").write_text('"""A package."""\n')
    (root / "a" / "x.py").write_text("from lsqa.a import y\n")
    (root / "a" / "y.py").write_text("def f():\n    from lsqa.a.x import g\n    return g\n")
    (root / "a" / "z.py").write_text("from lsqa.a import x\n")
    assert import_cycles(root) == [["lsqa.a.x", "lsqa.a.y"]]


# ----------------------------------------------------------------------------------------- pages

PAGES = PROJECT_ROOT / "pages"
MAX_PAGE_LINES = 600   # pages/audit.py, the longest, is 561: a page lays out what one dashboard module gives


def page_imports_below_the_dashboard(files: list[Path], root: Path = PROJECT_ROOT) -> list[str]:
    """Every import of an lsqa package other than ``lsqa.dashboard`` in ``files`` (pages, app.py), as
    ``name:line: target``; app.py may import ``lsqa`` itself (it sets the process defaults). ``root``:
    the folder the files are in or below."""
    found = []
    for path in files:
        for line, target in _imports(path, root / "lsqa"):
            parts = target.split(".")
            if parts[0] != "lsqa" or parts[1:2] == ["dashboard"] or (path.name == "app.py" and target == "lsqa"):
                continue
            found.append(f"{path.name}:{line}: {target}")
    return found


def test_pages_import_only_the_dashboard(tmp_path):
    """A page (and app.py) takes what it shows from ``lsqa.dashboard`` only: its screen module, and the
    errors, escaping, vocabulary and audit actions re-exported there; imports inside functions count."""
    assert page_imports_below_the_dashboard([PROJECT_ROOT / "app.py", *sorted(PAGES.glob("*.py"))]) == []
    planted = tmp_path / "planted.py"
    planted.write_text("import streamlit as st\nfrom lsqa.dashboard import common\n\n\n"
                       "def f():\n    from lsqa.stats import certification\n    return certification\n")
    assert page_imports_below_the_dashboard([planted], tmp_path) == ["planted.py:6: lsqa.stats.certification"]


def test_pages_stay_short():
    """A page is widgets, one dashboard call and its output: it stays under MAX_PAGE_LINES lines."""
    lengths = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in sorted(PAGES.glob("*.py"))}
    assert len(lengths) >= 8 and {name: n for name, n in lengths.items() if n >= MAX_PAGE_LINES} == {}


# ----------------------------------------------------------------------------------------- doors

def _importers(module: str, paths: list[Path]) -> list[str]:
    return sorted(f"{p.relative_to(PROJECT_ROOT)}:{line}" for p in paths for line, target in _imports(p)
                  if target == module or target.startswith(module + "."))


def test_doors():
    lsqa_files = _python_files(LSQA)
    pages = [PROJECT_ROOT / "app.py", PROJECT_ROOT / "dashboard.py", *sorted((PROJECT_ROOT / "pages").glob("*.py"))]
    outside_store = [p for p in lsqa_files if "store" not in p.relative_to(LSQA).parts[:1]]
    assert _importers("duckdb", outside_store + pages) == []
    not_provider = [p for p in lsqa_files if p != LSQA / "llm" / "provider.py"]
    assert _importers("litellm", not_provider + pages) == []
    assert _importers("streamlit", lsqa_files) == []
    stats = [p for p in lsqa_files if p.relative_to(LSQA).parts[0] == "stats"]
    assert _importers("lsqa.store", stats) == [] and _importers("duckdb", stats) == []
    assert _importers("duckdb", [LSQA / "store" / "db.py"]) and _importers("litellm", [LSQA / "llm" / "provider.py"])


def _sql_calls(path: Path) -> list[str]:
    """Where ``path`` calls ``.execute(...)``, ``.executemany(...)`` or ``.sql(...)``: SQL run on a connection."""
    return [f"{path.name}:{node.lineno}" for node in ast.walk(_tree(path))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("execute", "executemany", "sql")]


def test_sql_only_in_the_store(tmp_path):
    """The store is the one package with SQL (README, Architecture): no other module of lsqa or page runs it."""
    pages = [PROJECT_ROOT / "app.py", PROJECT_ROOT / "dashboard.py", *sorted((PROJECT_ROOT / "pages").glob("*.py"))]
    outside = [p for p in _python_files(LSQA) if "store" not in p.relative_to(LSQA).parts[:1]] + pages
    assert [where for p in outside for where in _sql_calls(p)] == []
    planted = tmp_path / "planted.py"
    planted.write_text("def f(con):\n    return con.execute('SELECT 1').fetchall()\n")
    assert _sql_calls(planted) == ["planted.py:2"]


@pytest.mark.parametrize("path, source, banned", [
    ("lsqa/corpus/x.py", "import duckdb\n\nprint(duckdb)\n", True),
    ("lsqa/corpus/x.py", "from duckdb import connect\n\nprint(connect)\n", True),
    ("lsqa/stats/x.py", "def f():\n    import litellm\n    return litellm\n", True),
    ("lsqa/dashboard/x.py", "import streamlit as st\n\nprint(st)\n", True),
    ("lsqa/store/x.py", "import duckdb\n\nprint(duckdb)\n", False),
    ("lsqa/llm/x.py", "from litellm import completion\n\nprint(completion)\n", False),
    ("pages/x.py", "import streamlit as st\n\nprint(st)\n", False),
])
def test_ruff_keeps_the_doors(path, source, banned):
    """``make lint`` with the project's config on a file at ``path``: TID251 fails it outside the door."""
    result = subprocess.run([str(RUFF), "check", "--no-cache", "--stdin-filename", path, "-"], input=source,
                            capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=60)
    assert ("TID251" in result.stdout) is banned, result.stdout + result.stderr
    assert result.returncode == (1 if banned else 0), result.stdout + result.stderr


# ---------------------------------------------------------------------------------- package fronts

def _packages() -> list[Path]:
    """Every folder under lsqa/ that holds Python files (the data folders excepted)."""
    return sorted({p.parent for p in _python_files(LSQA) if p.parent != LSQA})


def test_at_most_eight_top_level_modules():
    top = sorted(p.name for p in LSQA.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_every_package_says_its_job_in_one_line():
    problems = []
    for folder in _packages():
        init = folder / "__init__.py"
        if not init.exists():
            problems.append(f"{folder.relative_to(PROJECT_ROOT)}: no __init__.py")
            continue
        doc = ast.get_docstring(_tree(init), clean=False) or ""
        first, _, rest = doc.partition("\n")
        if not first.strip().endswith(".") or (rest and not rest.startswith("\n")):
            problems.append(f"{init.relative_to(PROJECT_ROOT)}: docstring does not open with one line ending in '.' "
                            f"and a blank line after it: {first!r}")
    assert problems == []


def test_package_exports_resolve():
    """Every name in a package's ``__all__`` is there (eager or through PEP 562 ``__getattr__``), is
    the object its module defines, is listed once and is not a module's name."""
    problems = []
    for folder in _packages():
        name = _module_name(folder / "__init__.py")
        package = importlib.import_module(name)
        exported = getattr(package, "__all__", [])
        if len(exported) != len(set(exported)):
            problems.append(f"{name}: names listed twice in __all__")
        submodules = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if p.is_dir()}
        for attr in exported:
            if attr in submodules:
                problems.append(f"{name}.{attr}: also a module's name")
                continue
            try:
                value = getattr(package, attr)
            except AttributeError as exc:
                problems.append(f"{name}.{attr}: {exc}")
                continue
            if isinstance(value, types.ModuleType):
                problems.append(f"{name}.{attr}: is a module")
        for module, names in getattr(package, "_LAZY", {}).items():
            missing = [n for n in names if n not in exported]
            if missing:
                problems.append(f"{name}: lazy names not in __all__: {missing}")
            loaded = importlib.import_module(module)
            problems += [f"{name}.{n} is not {module}.{n}" for n in names
                         if getattr(package, n, None) is not getattr(loaded, n, False)]
    assert problems == []


# Package fronts that import their modules at once, heavy ones included: the two model
# subpackages (their own fronts) and audit (the Audit page needs all of it on every key).
EAGER_FRONTS = {"lsqa.llm.embedded", "lsqa.corpus.entities", "lsqa.audit"}


def test_package_fronts_load_nothing_heavy():
    # The lazy fronts (store, corpus, stats, study, dashboard) keep `lsqa status` and `lsqa --help`
    # quick: importing every other package and the CLI loads none of these.
    heavy = ["litellm", "torch", "sentence_transformers", "transformers", "numpy", "scipy", "pandas", "plotly",
             "pyarrow", "rank_bm25", "streamlit"]
    packages = [m for m in (_module_name(folder / "__init__.py") for folder in _packages()) if m not in EAGER_FRONTS]
    assert "lsqa.cli" in packages and "lsqa.stats" in packages
    code = (f"import importlib, sys\nfor m in {packages!r}: importlib.import_module(m)\n"
            f"print(' '.join(h for h in {heavy!r} if h in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == []


def test_ranking_view_names_are_spelled_once():
    # The ranking views' names live in lsqa/vocabulary.py; a literal copy elsewhere would drift.
    from lsqa import vocabulary

    words = {*vocabulary.RANKING_VIEWS, vocabulary.JUDGE_LABELS}
    files = [p for p in _python_files() if p != LSQA / "vocabulary.py"]
    files += [PROJECT_ROOT / "app.py", *sorted((PROJECT_ROOT / "pages").glob("*.py"))]
    found = sorted(f"{p.relative_to(PROJECT_ROOT)}:{node.lineno}: {node.value!r}" for p in files
                   for node in ast.walk(_tree(p))
                   if isinstance(node, ast.Constant) and node.value in words)
    assert found == []


def test_help_loads_no_command_body():
    # `lsqa --help` answers from the command list alone: the store (duckdb), the study config (pydantic),
    # the models and the statistics load in the command bodies that use them (bench/bench_startup.py).
    body = ["duckdb", "pydantic", "numpy", "scipy", "pandas", "litellm", "lsqa.store", "lsqa.config"]
    code = ("import sys\nsys.argv = ['lsqa', '--help']\nfrom lsqa.cli import main\ntry:\n    main()\n"
            f"except SystemExit:\n    pass\nprint(' '.join(m for m in {body!r} if m in sys.modules), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=120)
    assert "Usage" in result.stdout and result.stderr.split() == [], result.stderr[-2000:]


def test_one_importer_per_input():
    # The importers are one package with a record per input (lsqa/store/importers/), the way a judge kind is
    # one record; the row-by-row importers live in tests/support/import_oracle.py only (the tests' oracle), and the
    # row reader in tests/support/row_tables.py: lsqa reads a table file in DuckDB (``table``) and words its errors
    # in one module (``wording``).
    from lsqa.store.importers import answers, errata, questions, reviews, skeleton, verdicts

    records = {module.RECORD.name: module.RECORD for module in (verdicts, answers, reviews, questions, errata)}
    assert sorted(records) == ["answers", "corrected references", "judgments", "questions", "reviews"]
    assert all(isinstance(r, skeleton.Input) and r.columns and r.columns.get("line") == "BIGINT"
               for r in records.values())
    folder = LSQA / "store" / "importers"
    assert sorted(p.stem for p in folder.glob("*.py")) == [
        "__init__", "answers", "errata", "lines", "questions", "reviews", "rows", "skeleton", "table", "values",
        "verdicts", "wording"]
    # Every module of the package that reads an import file (calls a file reader: the lines, the rows, the table
    # reader, the values' checks) declares its input as a record, ``RECORD = Input(...)``, run by the skeleton;
    # only the readers themselves and the frame do not.
    readers = {"load_lines", "stage_rows", "stage_objects", "read_table"}  # lines, rows, table: each reads a file
    frame = {"__init__", "lines", "rows", "skeleton", "table", "values", "wording"}

    def calls_a_reader(tree: ast.Module) -> bool:
        return any(isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Name) and node.func.id in readers)
            or (isinstance(node.func, ast.Attribute) and (node.func.attr in readers or (
                isinstance(node.func.value, ast.Name) and node.func.value.id == "values"
                and node.func.attr in ("stage", "checked")))))  # values: the table reader, its values checked
            for node in ast.walk(tree))

    def declares_a_record(tree: ast.Module) -> bool:
        return any(isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["RECORD"]
                   and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "Input"
                   for node in tree.body)

    inputs = sorted(p.stem for p in folder.glob("*.py") if p.stem not in frame and calls_a_reader(_tree(p)))
    assert inputs == ["answers", "errata", "questions", "reviews", "verdicts"], inputs
    assert [name for name in inputs if not declares_a_record(_tree(folder / f"{name}.py"))] == []
    # A file the staged SQL declines is read by the table reader and its values checked in SQL (``values``),
    # not by a row reader of the input's own: the inputs that do so (an errata file is the table reader's always).
    assert sorted(name for name, r in records.items() if r.restage is not None) == [
        "answers", "judgments", "questions", "reviews"]
    # Several files read as one: NarrativeQA's question files.
    assert [name for name, r in records.items() if r.several] == ["questions"]
    # No production module reads an import file's rows in Python (the table reader's rows as dicts: see
    # test_narrativeqa_and_errata_files_are_read_in_sql).
    row_readers = sorted({str(p.relative_to(LSQA)) for p in _python_files() for node in ast.walk(_tree(p))
                          if isinstance(node, ast.FunctionDef) and node.name in ("_judgment_rows", "_review_rows")})
    assert row_readers == [], row_readers
    assert not (LSQA / "corpus" / "tables.py").exists()
    # Python's csv module reads one record in lsqa, never a file: a CSV's header line (rows) and the record the
    # SQL found bad, for its words (table).
    csv_readers = sorted({str(p.relative_to(LSQA)) for p in _python_files()
                          for node in ast.walk(_tree(p))
                          if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                          and node.value.id == "csv" and node.attr in ("reader", "DictReader")})
    assert csv_readers == ["store/importers/rows.py", "store/importers/table.py"]
    rows_importers = [f"{p.relative_to(PROJECT_ROOT)}:{node.lineno}" for p in _python_files()
                      for node in ast.walk(_tree(p))
                      if isinstance(node, ast.FunctionDef) and node.name.startswith("import_")
                      and node.name.endswith("_rows")]
    assert rows_importers == []
    assert {"import_answers_rows", "import_judgments_rows", "import_reviews_rows"} <= {
        node.name for node in ast.walk(_tree(PROJECT_ROOT / "tests" / "support" / "import_oracle.py"))
        if isinstance(node, ast.FunctionDef)}


def test_narrativeqa_and_errata_files_are_read_in_sql():
    # ``lsqa ingest-narrativeqa`` reads documents.csv, the question and summary files and an errata file in
    # SQL (``lsqa.store.importers.questions`` and ``errata``: the table reader, values checked in SQL); the row
    # readers are the tests' oracle (tests/support/narrativeqa_oracle.py). The table reader's rows as Python
    # dicts (``read_table``) are for the statistics commands' tables (``load_comparisons``, ``load_ratings``,
    # in the same module), taken by no other production module.
    import inspect

    from lsqa.corpus import ingest

    row_functions = {"records", "read_table"}
    takers = sorted({str(p.relative_to(LSQA)) for p in _python_files()
                     for node in ast.walk(_tree(p))
                     if (isinstance(node, ast.ImportFrom) and node.module == "lsqa.store.importers.table"
                         and row_functions & {a.name for a in node.names})
                     or (isinstance(node, ast.Attribute) and node.attr in row_functions
                         and isinstance(node.value, ast.Name) and node.value.id == "table")})
    assert takers == [], takers
    # No loop over a table's rows in the package that ingests NarrativeQA and errata.
    loops = [f"{p.relative_to(LSQA)}:{node.lineno}" for p in _python_files(LSQA / "corpus")
             for node in ast.walk(_tree(p))
             if isinstance(node, (ast.For, ast.comprehension))
             and any((isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and ("records" in n.func.id
                                                                                   or n.func.id == "read_table"))
                     or (isinstance(n, ast.Attribute) and n.attr in ("rows", "lines"))
                     for n in ast.walk(node.iter))]
    assert loops == []
    # One way in: no switch to a row path.
    assert list(inspect.signature(ingest.ingest_narrativeqa).parameters) == ["workspace", "directory", "set_name",
                                                                           "target_tokens"]
    assert not {"_question_rows", "_nqa_documents", "_nqa_summaries", "_errata_text"} & {
        node.name for p in _python_files() for node in ast.walk(_tree(p))
        if isinstance(node, ast.FunctionDef)}
    oracle = PROJECT_ROOT / "tests" / "support" / "narrativeqa_oracle.py"
    assert {"question_rows", "documents", "summaries", "read_errata_rows", "ingest_narrativeqa_rows"} <= {
        node.name for node in ast.walk(_tree(oracle)) if isinstance(node, ast.FunctionDef)}


TEST_KINDS = {"browser", "bad_input", "project", "support"}  # folders by kind of test, not by package


def test_tests_mirror_the_packages():
    """A test lives in the folder of the lsqa package it tests (tests/stats/ for lsqa/stats/ …) or of its
    kind: browser/ (Playwright on chromium), bad_input/ (bad input by category), project/ (the repository
    itself) and support/ (servers, browser helpers and oracles the tests share, no tests)."""
    tests = PROJECT_ROOT / "tests"
    packages = {p.name for p in (PROJECT_ROOT / "lsqa").iterdir() if (p / "__init__.py").is_file()}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name not in ("data", "__pycache__")}
    assert sorted(p.name for p in tests.glob("test_*.py")) == [], "tests/: a test goes in its package's folder"
    assert folders - packages - TEST_KINDS == set(), "a folder of tests/ names an lsqa package or a kind"
    assert all((tests / folder / "__init__.py").is_file() for folder in folders)
    assert sorted(p.name for p in (tests / "support").glob("test_*.py")) == [], "support/ holds no tests"
    assert sorted(p.name for p in tests.glob("*.py")) == ["__init__.py", "conftest.py"]
