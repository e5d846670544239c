"""Settings, the study config schema, and what a system or judge name stands for."""

from lsqa.config.definitions import (
    DefinitionChanged,
    NameClash,
    check_and_record,
    check_imported_systems,
    check_imported_verdicts,
    check_run_names,
    conflicts,
)
from lsqa.config.settings import Settings, data_dir, load_settings, resolve_workspace
from lsqa.config.study import Context, JudgeSpec, RunConfig, SystemSpec, load_run_config, run_config_from_dict

__all__ = [
    "check_and_record", "check_imported_systems", "check_imported_verdicts", "check_run_names", "conflicts",
    "DefinitionChanged", "NameClash", "data_dir", "load_settings", "resolve_workspace", "Settings",
    "Context", "JudgeSpec", "load_run_config", "run_config_from_dict", "RunConfig", "SystemSpec",
]
