"""The ``lsqa`` command line is one list (``lsqa/cli/commands.py``): every command of lsqa/cli is
in it, each entry loads into the command it names with the summary its docstring starts with, and
``lsqa --help`` lists them all without importing any command's module."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys

import typer
from typer.testing import CliRunner

from lsqa.cli import app, load
from lsqa.cli.commands import BY_NAME, COMMANDS
from tests.conftest import PROJECT_ROOT


def test_each_entry_loads_the_command_it_names():
    assert len(BY_NAME) == len(COMMANDS), "a command name is listed twice"
    for entry in COMMANDS:
        command = load(entry)
        assert command.name == entry.name
        target = getattr(sys.modules[entry.module], entry.function)
        doc = target.info.help if isinstance(target, typer.Typer) else inspect.getdoc(target)
        assert entry.summary == " ".join(doc.split("\n\n")[0].split()), entry.name


def _typer_params(func: ast.FunctionDef) -> bool:
    """Whether a function's parameters are typer options or arguments (a command's signature)."""
    defaults = func.args.defaults + [d for d in func.args.kw_defaults if d is not None]
    return any(isinstance(d, ast.Call) and ast.unparse(d.func) in ("typer.Option", "typer.Argument")
               or isinstance(d, ast.Name) and d.id == "WorkspaceOption" for d in defaults)


def test_every_command_of_lsqa_cli_is_in_the_list():
    """A module-level function with typer options, or a typer.Typer, is listed (a group's own
    subcommands, ``@users.command``, belong to the listed group)."""
    listed = {(e.module, e.function) for e in COMMANDS}
    unlisted = []
    for path in sorted((PROJECT_ROOT / "lsqa" / "cli").glob("*.py")):
        module = f"lsqa.cli.{path.stem}" if path.stem != "__init__" else "lsqa.cli"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and _typer_params(node):
                in_group = any(ast.unparse(d).startswith(tuple(f"{e.function}.command" for e in COMMANDS))
                               for d in node.decorator_list)
                if not in_group and (module, node.name) not in listed:
                    unlisted.append(f"{module}.{node.name}")
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and ast.unparse(node.value.func) == "typer.Typer" and module != "lsqa.cli":
                name = node.targets[0].id
                if (module, name) not in listed:
                    unlisted.append(f"{module}.{name}")
    assert unlisted == [], "commands missing from lsqa/cli/commands.py"


def test_help_lists_every_command_without_loading_them():
    code = ("import sys; sys.argv = ['lsqa', '--help']\nfrom lsqa.cli import app\ntry:\n    app()\n"
            "except SystemExit:\n    pass\nprint(sorted(m for m in sys.modules if m.startswith('lsqa.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=PROJECT_ROOT, env={**__import__("os").environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    help_text, modules = out.stdout.rsplit("\n", 2)[0], out.stdout.rsplit("\n", 2)[1]
    assert eval(modules) == ["lsqa.cli", "lsqa.cli.commands"]  # no command module, no store, no config
    positions = [help_text.find(f" {c.name} ") for c in COMMANDS]
    assert -1 not in positions and positions == sorted(positions), "lsqa --help lists the list, in its order"


def test_a_listed_command_runs_and_an_unknown_one_is_refused():
    runner = CliRunner()
    r = runner.invoke(app, ["ledger", "--help"])
    assert r.exit_code == 0 and "settle" in r.output
    r = runner.invoke(app, ["status", "--help"])
    assert r.exit_code == 0 and "--json" in r.output
    assert "--install-completion" not in r.output  # a command's help is its own options only
    r = runner.invoke(app, ["no-such-command"])
    assert r.exit_code == 2 and "No such command" in r.output
