"""Docs that cannot drift (issue 10, item 9): README's command table lists every ``lsqa`` command,
its architecture table every module, and files named in the code and README exist."""

from __future__ import annotations

import fnmatch
import re

from lsqa.cli import app

from .conftest import PROJECT_ROOT

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def test_every_command_is_in_the_command_table():
    table = _section("Command line")
    documented = set(re.findall(r"^\| `lsqa ([a-z][a-z-]*)", table, flags=re.M))
    registered = {c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands}
    assert registered, "no commands registered"
    assert registered - documented == set(), "commands missing from README's command table"
    assert documented - registered == set(), "README lists commands that do not exist"


def test_every_module_is_in_the_architecture_table():
    table = _section("Architecture")
    names = set(re.findall(r"`([^`\s]+)`", table))
    patterns = [n for n in names if n.startswith(("lsqa/", "app.py", "pages/"))]
    missing = []
    for path in sorted((PROJECT_ROOT / "lsqa").rglob("*.py")):
        rel = path.relative_to(PROJECT_ROOT).as_posix()
        if path.name == "__init__.py" or "/shipped/" in rel:
            continue
        package = rel.rsplit("/", 1)[0] + "/"
        if package != "lsqa/":
            # A subpackage's row names the package and each of its modules by name.
            row = next((line for line in table.splitlines() if f"`{package}`" in line), "")
            if not row or not re.search(rf"`{re.escape(path.stem)}(\.py)?`", row):
                missing.append(rel)
        elif not any(fnmatch.fnmatch(rel, p) for p in patterns):
            missing.append(rel)
    assert missing == [], "modules missing from README's architecture table"
    for name in patterns:  # and every module the table names exists
        assert list(PROJECT_ROOT.glob(name.rstrip("/"))), name


def test_files_named_in_code_and_readme_exist():
    named = re.compile(r"(?<![\w/.])((?:docs|bench|tests|configs|db/migrations|prompts)/[\w./-]+\.(?:md|py|toml|sql|txt|png)"
                       r"|[A-Z]+\.md)\b")
    texts = {"README.md": README}
    for path in (PROJECT_ROOT / "lsqa").rglob("*.py"):
        texts[path.relative_to(PROJECT_ROOT).as_posix()] = path.read_text(encoding="utf-8")
    missing = sorted({(where, ref) for where, text in texts.items() for ref in named.findall(text)
                      if not (PROJECT_ROOT / ref).exists()})
    assert missing == []
