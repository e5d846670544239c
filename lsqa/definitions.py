"""What a system or judge name stands for, and the refusal to let a run config redefine one.

Answers are stored per (question, system name) and verdicts per judge name, and a rerun skips
what a name already has (the resume behaviour of lsqa.pipeline). So if a run config changed a
system's model, context, parameters or prompt version under the same name, the rerun would keep
the old answers and add new ones for new questions only: one name, two systems, silently. Each
run records the definitions it uses; once a name has results (answers, verdicts), later runs must
match its definition.

Transport settings (``api_base``, timeouts, headers; ``lsqa.llm.TRANSPORT_PARAMS``) are not part
of a definition, as they are not part of the LLM cache key: moving a server is not a new system.
"""

from __future__ import annotations

import json

from lsqa.errors import LsqaError
from lsqa.llm import semantic_params
from lsqa.runconfig import JudgeSpec, RunConfig, SystemSpec


class DefinitionChanged(LsqaError):
    """A run config gives an existing system or judge name a different definition."""


def system_definition(spec: SystemSpec) -> dict:
    return {
        "model": spec.model, "context": spec.context.label, "params": semantic_params(spec.params),
        "max_context_tokens": spec.max_context_tokens, "prompt_version": spec.prompt_version,
    }


def judge_definition(spec: JudgeSpec) -> dict:
    return {
        "model": spec.model, "kind": spec.kind, "context": spec.context.label, "both_orders": spec.both_orders,
        "reference": spec.reference, "threshold": spec.threshold, "params": semantic_params(spec.params),
        "max_context_tokens": spec.max_context_tokens, "prompt_version": spec.prompt_version,
    }


def encode(definition: dict) -> str:
    return json.dumps(definition, sort_keys=True, default=str)


def differences(stored: dict, wanted: dict, prefix: str = "") -> list[str]:
    """Human-readable ``field: old → new`` lines (nested dicts such as params, field by field)."""
    lines = []
    for key in sorted(set(stored) | set(wanted)):
        old, new = stored.get(key), wanted.get(key)
        if isinstance(old, dict) and isinstance(new, dict):
            lines.extend(differences(old, new, f"{prefix}{key}."))
        elif old != new:
            lines.append(f"{prefix}{key}: {json.dumps(old, default=str)} → {json.dumps(new, default=str)}")
    return lines


def check_and_record(con, config: RunConfig) -> None:
    """Refuse ``config`` if it redefines a system or judge name this workspace has results for;
    otherwise record the definitions of names seen for the first time (in ``con``'s transaction).

    Raises :class:`DefinitionChanged` naming every changed name and field, before any work starts.
    """
    from lsqa.store import results as results_store

    problems: list[str] = []
    systems_with_results, judges_with_results = results_store.names_with_results(con)
    for what, specs, define, stored, with_results in (
        ("system", config.systems, system_definition, results_store.system_definitions(con), systems_with_results),
        ("judge", config.judges, judge_definition, results_store.judge_definitions(con), judges_with_results),
    ):
        for spec in specs:
            if spec.name not in with_results:
                continue  # nothing made under this name yet: its definition may still change
            wanted = json.loads(encode(define(spec)))
            old = stored.get(spec.name)
            if isinstance(old, str) and old:
                old = json.loads(old)
            elif isinstance(old, dict):
                # A name recorded without a definition (imported results, a workspace from before
                # definitions were kept): compare what the workspace still says about it (a
                # system's model and context, a judge's verdict kind).
                wanted = {k: wanted[k] for k in old}
            if old and old != wanted:
                changed = "; ".join(differences(old, wanted))
                problems.append(f"{what} {spec.name!r} already has results made with a different definition ({changed})")
    if problems:
        raise DefinitionChanged(
            "; ".join(problems) + ". Results are kept per name, so a changed system or judge needs a new "
            "name in the run config (e.g. add '-v2'); the old name keeps its results for comparison."
        )
    results_store.record_definitions(
        con,
        systems={s.name: encode(system_definition(s)) for s in config.systems},
        judges={j.name: encode(judge_definition(j)) for j in config.judges},
    )
