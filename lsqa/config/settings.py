"""Settings: one TOML file plus the environment.

Where the workspace is: ``--workspace`` on the command line, else ``LSQA_WORKSPACE``, else
``workspace`` in the settings file, else ``db/lsqa.duckdb``. The settings file is ``LSQA_SETTINGS``
or ``lsqa.toml`` in the current folder. API keys are never read from here: litellm takes them from
its usual environment variables, and nothing in lsqa stores them.

Where the shared data is (the NarrativeQA slice, the books, LLMBar; read by the demo and the
Agreement page): ``LSQA_DATA_DIR``, else ``data_dir`` in the settings file (a relative path is
relative to the current folder), else ``../shared/data`` from the current folder, which is where
a checkout run from its own folder (``make run``, ``make test``, ``lsqa demo``) finds it. It never
depends on where the lsqa source sits, so an installed lsqa looks in the same place as a checkout.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from lsqa.config.schema import (
    MAX_NESTING,
    NestedTooDeep,
    SettingsFile,
    first_refusal,
    nested_deeper_than,
    toml_loads,
)
from lsqa.errors import LsqaError
from lsqa.llm.keys import secret_in_setting

DEFAULT_WORKSPACE = Path("db") / "lsqa.duckdb"


def default_data_dir() -> Path:
    """``../shared/data`` from the current folder, made absolute when the settings are loaded."""
    return Path.cwd().parent / "shared" / "data"


class SettingsError(LsqaError):
    pass


@dataclass(frozen=True)
class Settings:
    workspace: Path = DEFAULT_WORKSPACE
    data_dir: Path = field(default_factory=default_data_dir)   # module docstring: where it is looked for
    coref_model_path: str = ""          # a local FCoref / LingMessCoref folder; '' = built-in fallback
    coref_model_kind: str = "fcoref"    # fcoref | lingmess
    max_concurrency: int = 8            # per model, for LLM calls
    passage_tokens: int = 200           # target passage size when indexing a book
    identity_header: str = ""           # a trusted proxy's header naming the person; '' ignores headers
    link_days: int = 7                  # how long an unused personal sign-in link works (lsqa.team.people)
    source: str = ""                    # the settings file read, '' if none
    extra: dict = field(default_factory=dict)


def settings_path() -> Path | None:
    explicit = os.environ.get("LSQA_SETTINGS")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise SettingsError(f"LSQA_SETTINGS points to {path}, which is not a file")
        return path
    local = Path("lsqa.toml")
    return local if local.is_file() else None


def load_settings() -> Settings:
    path = settings_path()
    data: dict = {}
    if path is not None:
        try:
            data = toml_loads(path.read_text(encoding="utf-8"))
        except NestedTooDeep:
            raise SettingsError(f"settings file {path}: tables or lists nested more than {MAX_NESTING} levels "
                                "deep (write flat keys, or unset LSQA_SETTINGS)") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"settings file {path}: not valid TOML: {exc} (fix it or unset LSQA_SETTINGS)") from None
        except OSError as exc:
            raise SettingsError(f"settings file {path}: cannot be read ({exc.strerror})") from None
        if nested_deeper_than(data):
            raise SettingsError(f"settings file {path}: tables or lists nested more than {MAX_NESTING} levels "
                                "deep (write flat keys, or unset LSQA_SETTINGS)")
        problem = secret_in_setting("", data)
        if problem:
            raise SettingsError(f"settings file {path}: {problem}")
        try:
            SettingsFile.model_validate(data)
        except ValidationError as exc:
            raise SettingsError(f"settings file {path}: {first_refusal(exc, SettingsFile)}") from None
    known = {f for f in Settings.__dataclass_fields__ if f not in ("source", "extra")}
    values = {k: v for k, v in data.items() if k in known}
    env_data_dir = os.environ.get("LSQA_DATA_DIR")
    if env_data_dir:
        values["data_dir"] = env_data_dir
    for key in ("workspace", "data_dir"):
        if key in values:
            values[key] = Path(values[key])
    return Settings(**values, source=str(path or ""), extra={k: v for k, v in data.items() if k not in known})


def resolve_workspace(cli_value: str | Path | None = None, settings: Settings | None = None) -> Path:
    if cli_value:
        return Path(cli_value)
    env = os.environ.get("LSQA_WORKSPACE")
    if env:
        return Path(env)
    settings = settings or load_settings()
    return Path(settings.workspace)


def data_dir(settings: Settings | None = None) -> Path:
    """The shared data folder (module docstring): ``LSQA_DATA_DIR``, the settings file, ``../shared/data``."""
    return Path((settings or load_settings()).data_dir)
