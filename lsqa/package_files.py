"""Folders the package ships: the Appendix A prompts, the schema migrations, the demo study configs.

They live at the top of the repository (``prompts/``, ``db/migrations/``, ``configs/``) and are
reached through ``lsqa/shipped/<name>``: symbolic links in a checkout, real copies inside a built
wheel (``pyproject.toml`` package data). Read with ``importlib.resources``, so an installed
``lsqa`` works from any folder, with no repository around it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

PROMPTS = "prompts"
MIGRATIONS = "migrations"
CONFIGS = "configs"


def shipped_folder(name: str) -> Path:
    """The folder ``name`` (``PROMPTS``, ``MIGRATIONS``, ``CONFIGS``) as a file-system path."""
    return Path(str(resources.files("lsqa").joinpath("shipped", name)))
