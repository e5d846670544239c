"""The package installs (issue 10, item 8): a wheel built from the repository carries the prompts,
the migrations and the demo configs, and ``lsqa demo`` runs from another folder with only that
wheel's copy of lsqa importable."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from .conftest import PROJECT_ROOT, shared_data_dir


@pytest.mark.slow
def test_a_built_wheel_runs_the_demo_from_another_folder(tmp_path):
    source = tmp_path / "src"  # a copy, so the build's own folders stay out of the checkout
    for name in ("lsqa", "prompts", "db", "configs"):
        shutil.copytree(PROJECT_ROOT / name, source / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.duckdb*"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(PROJECT_ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "wheel"), str(source)], check=True, capture_output=True, timeout=600)
    (wheel,) = (tmp_path / "wheel").glob("lsqa-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, pattern in (("prompts", "*.txt"), ("db/migrations", "*.sql"), ("configs", "*.toml")):
        shipped = {f"lsqa/shipped/{folder.split('/')[-1]}/{p.name}" for p in (PROJECT_ROOT / folder).glob(pattern)}
        assert shipped and shipped <= names, (folder, sorted(shipped - names))

    site = tmp_path / "site"  # a pure-Python wheel installs by unpacking it onto the path
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "LSQA_DATA_DIR": str(shared_data_dir())}
    where = subprocess.run([sys.executable, "-c", "import lsqa, lsqa.prompts as p, lsqa.store.db as d; "
                            "print(lsqa.__file__); print(p.PROJECT_PROMPTS); print(d.MIGRATIONS_DIR)"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    assert all(line.startswith(str(site)) for line in where.stdout.split()), where.stdout
    demo = subprocess.run([sys.executable, "-c", "from lsqa.cli import main; main()", "demo", "--small",
                           "--path", str(elsewhere / "demo.duckdb")],
                          cwd=elsewhere, env=env, capture_output=True, text=True, timeout=900)
    assert demo.returncode == 0, demo.stderr[-2000:]
    status = subprocess.run([sys.executable, "-c", "from lsqa.cli import main; main()", "status", "--json",
                             "--workspace", str(elsewhere / "demo.duckdb")],
                            cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    assert '"judgments": 0' not in status.stdout and '"questions"' in status.stdout
