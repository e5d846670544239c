"""The package installs (issue 10, item 8): a wheel built from the repository carries the prompts,
the migrations, the demo configs and the bundled demo data, and ``lsqa demo`` runs from another
folder with only that wheel's copy of lsqa importable and no shared data folder."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import PROJECT_ROOT


@pytest.mark.slow
def test_a_built_wheel_runs_the_demo_from_another_folder(bundled_demo_from_wheel, tmp_path):
    built = bundled_demo_from_wheel  # the wheel, unpacked onto an empty path, ran `lsqa demo` (conftest)
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    for folder, pattern in (("prompts", "*.txt"), ("db/migrations", "*.sql"), ("configs", "*.toml")):
        shipped = {f"lsqa/shipped/{folder.split('/')[-1]}/{p.name}" for p in (PROJECT_ROOT / folder).glob(pattern)}
        assert shipped and shipped <= names, (folder, sorted(shipped - names))
    bundled = {p.relative_to(PROJECT_ROOT).as_posix() for p in (PROJECT_ROOT / "lsqa" / "demo_data").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert bundled and bundled <= names, sorted(bundled - names)

    site, elsewhere, env = built["site"], built["elsewhere"], built["env"]
    where = subprocess.run([sys.executable, "-c", "import lsqa, lsqa.prompting.templates as p, lsqa.store.db as d; "
                            "print(lsqa.__file__); print(p.PROJECT_PROMPTS); print(d.MIGRATIONS_DIR)"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    assert all(line.startswith(str(site)) for line in where.stdout.split()), where.stdout
    assert "bundled with lsqa" in built["stdout"], built["stdout"]  # no shared data: the wheel's own demo
    workspace = shutil.copy(built["workspace"], tmp_path / "demo.duckdb")  # the shared one stays unopened
    status = subprocess.run([sys.executable, "-c", "from lsqa.cli import main; main()", "status", "--json",
                             "--workspace", str(workspace)],
                            cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    assert '"judgments": 0' not in status.stdout and '"questions"' in status.stdout
