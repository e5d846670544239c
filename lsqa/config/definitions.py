"""What a system or judge name stands for, and the refusal to let a run config redefine one.

Answers are stored per (question, system name) and verdicts per judge name, and a rerun skips
what a name already has (the resume behaviour of lsqa.study.pipeline). So if a run config changed a
system's model, context, parameters or prompt version under the same name, the rerun would keep
the old answers and add new ones for new questions only: one name, two systems, silently. Each
run records the definitions it uses; once a name has results (answers, verdicts), later runs must
match its definition.

Transport settings (``api_base``, timeouts, headers; ``lsqa.llm.TRANSPORT_PARAMS``) are not part
of a definition, as they are not part of the LLM cache key: moving a server is not a new system.
"""

from __future__ import annotations

import json

from lsqa.config.study import JudgeSpec, RunConfig, SystemSpec
from lsqa.errors import LsqaError
from lsqa.llm import semantic_params
from lsqa.vocabulary import IMPORTED


class DefinitionChanged(LsqaError):
    """A run config gives an existing system or judge name a different definition."""


def _prompt_layout(spec: SystemSpec | JudgeSpec) -> dict:
    # prompt_caching picks the context-first prompt versions (other text order, other completions).
    # Named only when on, so definitions recorded before the setting existed still match.
    return {"prompt_caching": True} if spec.prompt_caching else {}


def system_definition(spec: SystemSpec) -> dict:
    return {
        "model": spec.model, "context": spec.context.label, "params": semantic_params(spec.params),
        "max_context_tokens": spec.max_context_tokens, "prompt_version": spec.prompt_version,
        **_prompt_layout(spec),
    }


def judge_definition(spec: JudgeSpec) -> dict:
    return {
        "model": spec.model, "kind": spec.kind, "context": spec.context.label, "both_orders": spec.both_orders,
        "reference": spec.reference, "threshold": spec.threshold, "params": semantic_params(spec.params),
        "max_context_tokens": spec.max_context_tokens, "prompt_version": spec.prompt_version,
        **_prompt_layout(spec),
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


def conflicts(con, config: RunConfig) -> list[str]:
    """One line per system or judge name of ``config`` that this workspace has results for under a
    different definition (empty: the config may run). Reads only: the Run page asks before Start."""
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
    return problems


def check_and_record(con, config: RunConfig) -> None:
    """Refuse ``config`` if it redefines a system or judge name this workspace has results for;
    otherwise record the definitions of names seen for the first time (in ``con``'s transaction).

    Raises :class:`DefinitionChanged` naming every changed name and field, before any work starts.
    """
    from lsqa.store import results as results_store

    problems = conflicts(con, config)
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


class NameClash(DefinitionChanged):
    """A name is used both for results made elsewhere (imported) and for results a run makes, or a
    judge is declared with another kind than its verdicts: a definition clash named as such."""


def check_run_names(con, config: RunConfig) -> None:
    """Refuse a run config that declares as model-made a system whose answers were imported (or as
    imported one whose answers a run made), or a judge of one kind that has verdicts of another."""
    from lsqa.store import names as names_store

    problems: list[str] = []
    stored = names_store.system_models(con, [s.name for s in config.systems])
    with_answers = names_store.systems_with_answers(con, list(stored))
    for spec in config.systems:
        if spec.name not in with_answers:
            continue
        model, context = stored[spec.name]
        if spec.imported and model != IMPORTED:
            problems.append(f"system {spec.name!r} is declared imported, but its answers were made by a run "
                            f"(model {model}, context {context}); imported answers need a name of their own")
        elif not spec.imported and model == IMPORTED:
            problems.append(f"system {spec.name!r} has answers imported with `lsqa import-answers`, so a run "
                            f"cannot answer under that name: declare it with model = \"imported\" to judge "
                            f"those answers, or give the {spec.model} system another name")
    kinds = names_store.verdict_kinds(con, [j.name for j in config.judges])
    for judge in config.judges:
        other = kinds.get(judge.name, set()) - {judge.kind}
        if other:
            problems.append(f"judge {judge.name!r} is declared {judge.kind}, but has {', '.join(sorted(other))} "
                            f"verdicts under that name; give this judge another name")
    if problems:
        raise NameClash("; ".join(problems) + ". Nothing was run.")


def check_imported_systems(con, path, names: list[str]) -> None:
    """Refuse answers imported under a system name a run config gave a model: they would stand in
    for the answers that model makes (a rerun skips questions that already have an answer)."""
    from lsqa.errors import InputError
    from lsqa.store import names as names_store

    for name, (model, context) in sorted(names_store.system_models(con, names).items()):
        if model != IMPORTED:
            raise InputError(path, f"system {name!r} belongs to a run (model {model}, context {context}): "
                                   "imported answers under its name would stand in for its own",
                             hint="import them under another system name; nothing was imported")


def check_imported_verdicts(con, path, verdicts: list[tuple[int, str, str]]) -> None:
    """Refuse verdicts imported under a judge a run config declared with another kind.
    ``verdicts``: (line, rater, kind) of each verdict in the file."""
    from lsqa.errors import InputError
    from lsqa.store import names as names_store

    declared = names_store.judge_kinds(con, sorted({rater for _, rater, _ in verdicts}))
    for line, rater, kind in verdicts:
        if rater in declared and declared[rater] != kind:
            raise InputError(path, f"rater {rater!r} is a {declared[rater]} judge of a run config; "
                                   f"a {kind} verdict cannot be imported under its name",
                             line=line, hint="import it under another rater name; nothing was imported")
