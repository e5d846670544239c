"""Calls sent through a provider's batch API (litellm's files + batches), for ``mode = "batch"``.

Batch APIs (OpenAI, Azure OpenAI, Vertex AI, Bedrock, vLLM's OpenAI-compatible server) answer a
file of requests within a completion window (24 h) at about half the price. The requests of one
model and transport become one JSONL file (``custom_id`` = the call's cache key), uploaded with
``litellm.create_file`` and submitted with ``litellm.create_batch``; ``litellm.retrieve_batch``
is polled every ``LSQA_BATCH_POLL_S`` seconds (30 by default) until the batch is final, then
``litellm.file_content`` brings the output (and error) lines, which are stored in ``llm_calls``
like any other call — the same cache, so a rerun answers them at no cost.

Surviving restarts: a row of ``llm_batches`` is written *before* the upload and keeps the file
id and the provider's batch id as soon as they exist. A rerun finds the unfinished batch that
covers its calls and polls it instead of submitting again; a run killed between the upload and
the batch's creation finds the batch by its ``lsqa_batch`` metadata (``litellm.list_batches``)
or creates it from the uploaded file. So each call is paid for once.

Two runs at once: finding the open batches and adding a new row happen in one transaction, and
the run that adds a row claims its submission (:mod:`lsqa.llm.claims`, key ``batch:<row id>``)
in that transaction; it alone uploads, creates and collects the batch. An open row is the claim
on its calls, and a stored answer ends it: that transaction also reads which calls are stored
now, and a call stored since this run looked in the cache (another run's batch, collected
meanwhile) is taken from the cache, never put in a new batch. Another run of the same
calls finds the row, waits while that claim is live (taking it over if its process died) and,
once the batch is final and collected, takes the results from the cache. So one provider batch
is submitted for the calls however many runs ask for them.

Budgets: the calls of a new batch are admitted by the caller's ``admit`` (the study's
budget reserves each call's worst case at the batch rates) in the transaction that writes the
batch's row, which keeps the ledger and the most the batch can cost (``bound_usd``); calls that
do not fit are never put in a batch. While the batch is open the ledger counts it at that bound,
so a run killed after submitting it cannot hide its cost.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from lsqa.llm import claims
from lsqa.llm.keys import TRANSPORT_PARAMS, canonical_json, provider_of, semantic_params, storable_params
from lsqa.llm.pricing import checked_usage
from lsqa.llm.provider import batch_cost, classify, error_text, litellm, usage_numbers
from lsqa.llm.types import LLMResult

# litellm's create_batch providers that take OpenAI-format JSONL files (litellm translates for
# Vertex AI and Bedrock); ``openai/<name>`` with an ``api_base`` is any OpenAI-compatible server.
BATCH_PROVIDERS = ("openai", "azure", "vertex_ai", "bedrock", "hosted_vllm")
FINAL = frozenset({"completed", "failed", "expired", "cancelled"})
POLL_INTERVAL_S = float(os.environ.get("LSQA_BATCH_POLL_S", "30"))
ENDPOINT = "/v1/chat/completions"
_rows_lock = threading.Lock()  # threads of one process find-or-add batch rows one at a time

log = logging.getLogger("lsqa.llm")


def check_batch_model(model: str, params: dict) -> str:
    """'' when ``model`` can run in batch mode, else why not (for config validation)."""
    provider = provider_of(model)
    if provider not in BATCH_PROVIDERS:
        return (f"mode = \"batch\" needs a provider with a batch API ({', '.join(BATCH_PROVIDERS)}); "
                f"{model!r} is {provider or 'not a litellm provider/model string'}")
    if isinstance(params.get("api_base"), (list, tuple)):
        return "mode = \"batch\" sends a batch to one server: give one api_base, not a list"
    return ""


@dataclass
class BatchJob:
    """One call to put in a batch: the request and its cache key (``custom_id``)."""

    key: str
    model: str
    messages: list
    params: dict


def _transport(params: dict) -> dict:
    """The settings that say where and how a batch travels (sent; stored without secrets)."""
    return {k: v for k, v in params.items() if k in TRANSPORT_PARAMS and k not in ("num_retries", "max_retries")}


def _api_kwargs(model: str, params: dict) -> dict:
    kwargs = _transport(params)
    kwargs["custom_llm_provider"] = provider_of(model)
    return kwargs


def transport_key(params: dict) -> str:
    """How a batch's transport is recorded (and matched on a rerun): JSON without secrets."""
    return canonical_json(storable_params(_transport(params)))


_WAITING = ("timeout", "request_timeout", "stream_timeout")


def _route(transport: str) -> str:
    """A recorded transport without how long the client waits: a rerun with another ``timeout``
    still reaches the batch it submitted (and must collect it, not pay for its calls again)."""
    try:
        settings = json.loads(transport)
    except ValueError:
        return transport
    if not isinstance(settings, dict):
        return transport
    return canonical_json({k: v for k, v in settings.items() if k not in _WAITING})


def input_file(jobs: Sequence[BatchJob]) -> bytes:
    """The JSONL batch input file: one chat-completion request per line, ``custom_id`` = cache key."""
    lines = []
    for job in jobs:
        body = {"model": job.model.split("/", 1)[1], "messages": job.messages, **semantic_params(job.params)}
        lines.append(json.dumps({"custom_id": job.key, "method": "POST", "url": ENDPOINT, "body": body},
                                ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")


def submission_claim(row_id: str) -> str:
    """The claim key of a batch row's submission and collection (in ``call_claims``)."""
    return f"batch:{row_id}"


def run_batches(
    workspace: Path,
    jobs: Sequence[BatchJob],
    store_results: Callable[[list[tuple[str, LLMResult]]], None],
    *,
    run_id: int | None = None,
    poll_s: float | None = None,
    adopt_results: Callable[[list[str], str], None],
    admit: Callable[[list[str], float], tuple[list[str], float]] | None = None,
    ledger: str | None = None,
    held_elsewhere: Callable[[dict[str, dict]], None] | None = None,
) -> None:
    """Answer ``jobs`` through batch APIs; ``store_results([(key, result), ...])`` is called as
    each batch finishes (the caller writes them to ``llm_calls`` and counts them), and
    ``adopt_results(keys, batch_id)`` for a batch another run collected (the caller takes its
    results from the cache). Blocks until every batch is final; safe to kill at any point, and
    to run twice at once (see the module docstring). ``admit(keys, ledger_usd)`` returns the keys a new
    batch may hold and the most they can cost (a budget; ``ledger_usd``: the study's ledger as the
    workspace holds it); the others are the caller's to report. ``held_elsewhere({key: batch})``: calls
    an open batch of another route holds (another server: this run cannot poll it), never sent here;
    calls another run is sending one by one are waited for and taken from the cache."""
    groups: dict[tuple[str, str], list[BatchJob]] = {}
    for job in jobs:
        groups.setdefault((job.model, transport_key(job.params)), []).append(job)
    for (model, transport), group in groups.items():
        _run_group(workspace, model, transport, group, store_results, adopt_results, run_id,
                   POLL_INTERVAL_S if poll_s is None else poll_s, admit, ledger, held_elsewhere)


@dataclass
class _Found:
    """What ``_rows_for`` found for a group of calls, in one transaction."""

    rows: list[dict]             # open batch rows of this route covering some of the calls (a new one last)
    stored: list[str]            # calls stored since the caller looked in the cache
    online: list[str]            # calls claimed by a run sending them one by one now: wait for their answers
    elsewhere: dict[str, dict]   # calls an open batch of another route holds (``llm_batches.holding``)


def _rows_for(workspace: Path, model: str, transport: str, group: Sequence[BatchJob], run_id,
              admit=None, ledger: str | None = None) -> _Found:
    """The open batch rows covering ``group``, a new row (claimed by this process) for the calls
    none covers and that are not stored nor being made elsewhere, and the calls of ``group`` stored
    already, claimed online, or in a batch of another route: found and added in one transaction (the
    workspace's write lock held), so two runs never both send a call. The stored ones matter: the
    caller looked in the cache before it came here, and another run's batch may have been collected
    (its row no longer open) since."""
    from lsqa.store import llm_batches, llm_calls, runs, write

    wanted = {job.key for job in group}
    with _rows_lock, claims.write_lock, write(workspace) as con:
        route = _route(transport)
        rows = [row for row in llm_batches.open_batches(con, model) if _route(row["transport"]) == route
                and set(row["cache_keys"]) & wanted]
        covered = {key for row in rows for key in row["cache_keys"]}
        stored = list(llm_calls.cached_ok(con, [job.key for job in group if job.key not in covered]))
        done = covered | set(stored)
        left = [job.key for job in group if job.key not in done]
        # Sent one by one by a live run, or in a batch this route cannot poll (another server): the
        # cache key is the same, so batching them again would pay for them twice.
        online = llm_calls.claimed_live(con, left, socket.gethostname(), claims.now())
        elsewhere = llm_batches.holding(con, [key for key in left if key not in online])
        new = [key for key in left if key not in online and key not in elsewhere]
        bound = None
        if new and admit is not None:
            # The ledger as the workspace holds it now (other runs of the study included), read in
            # the transaction that adds the batch.
            new, bound = admit(new, runs.study_spent(con, ledger) if ledger else 0.0)
        if new:
            row_id = uuid.uuid4().hex
            llm_batches.add_batch(con, row_id, model, transport, new, run_id, ledger=ledger, bound_usd=bound)
            claims.claim_in(con, [submission_claim(row_id)])
            rows.append({"id": row_id, "cache_keys": new, "status": "uploading", "input_file_id": None,
                         "batch_id": None})
            log.info("batch %s: %d calls of %s", row_id, len(new), model)
    return _Found(rows, stored, [key for key in left if key in online], elsewhere)


def _take_turn(workspace: Path, row: dict) -> bool:
    """Whether this process may submit or collect ``row`` now: it holds (or takes over) the row's
    claim. ``row`` is refreshed from the workspace in the same transaction (another run may have
    submitted or collected it meanwhile)."""
    from lsqa.store import llm_batches, write

    with claims.write_lock, write(workspace) as con:
        fresh = llm_batches.get_batch(con, row["id"])
        if fresh is not None:
            row.update({k: fresh[k] for k in ("status", "input_file_id", "batch_id", "provider_status")})
        if row["status"] not in llm_batches.OPEN:
            return False
        return bool(claims.claim_in(con, [submission_claim(row["id"])]))


def _run_group(workspace, model, transport, group, store_results, adopt_results, run_id, poll_s, admit=None,
               ledger=None, held_elsewhere=None) -> None:
    wanted = {job.key: job for job in group}
    todo = list(group)
    while todo:
        found = _rows_for(workspace, model, transport, todo, run_id, admit, ledger)
        if found.stored:  # answered by another run's batch since this run looked in the cache
            adopt_results(found.stored, "another run's batch")
        if found.elsewhere and held_elsewhere is not None:
            held_elsewhere(found.elsewhere)
        _finish(workspace, model, group[0].params, found.rows, wanted, store_results, adopt_results, poll_s)
        todo = _wait_for_online(workspace, [wanted[key] for key in found.online], adopt_results)


def _finish(workspace, model, params, rows, wanted, store_results, adopt_results, poll_s) -> None:
    """Submit, poll and collect ``rows`` (each in this process's turn), until every one is final.
    ``params``: the group's transport, whose secrets are sent, never stored."""
    from lsqa.store import llm_batches

    pending = {row["id"]: row for row in rows}
    while pending:
        for row_id, row in list(pending.items()):
            if not _take_turn(workspace, row):
                if row["status"] in llm_batches.OPEN:
                    continue  # another live run submits, polls or collects it now: ask again later
                adopt_results([k for k in row["cache_keys"] if k in wanted], row["batch_id"] or row_id)
                del pending[row_id]  # collected by another run: its results are in the cache
                continue
            try:
                with claims.renewing(workspace):
                    done = _advance(workspace, model, params, row, wanted, store_results, adopt_results)
            except Exception as exc:  # noqa: BLE001 - a provider failure ends this batch with an error per call
                kind, status, _ = classify(exc)
                message = error_text(model, kind, status, exc, 1)
                done = kind not in ("rate_limit", "timeout", "connection", "server", "bad_response")
                if done:
                    _fail(workspace, row, wanted, store_results, kind, message)
                else:  # a blip while polling: the batch itself is fine, ask again later
                    log.warning("batch %s: %s (will poll again)", row_id, message)
            if done:
                del pending[row_id]  # its claim went with the row's final status
            else:
                claims.release(workspace, [submission_claim(row_id)])  # another run may take the next turn
        if pending:
            time.sleep(poll_s)


def _wait_for_online(workspace, jobs: list[BatchJob], adopt_results) -> list[BatchJob]:
    """Wait while the calls ``jobs`` are being sent one by one by a run (claimed live), taking their
    answers from the cache as they are stored; return those left when a claim went away without an
    answer (that run failed or died): the caller batches them then."""
    while jobs:
        hits, gone = claims.poll_claimed(workspace, [job.key for job in jobs], others_only=False)
        if hits:
            adopt_results([job.key for job in jobs if job.key in hits], "an online run")
        jobs = [job for job in jobs if job.key not in hits]
        if gone:
            return jobs
    return []


def _advance(workspace, model, params, row, wanted, store_results, adopt_results) -> bool:
    """Take ``row`` one step further (upload, create, poll, collect); True once it is finished."""
    from lsqa.store import connect, llm_batches, llm_calls, write

    ll = litellm()
    api = _api_kwargs(model, params)
    if not row["batch_id"]:
        found = _find_created(ll, api, row) if row["input_file_id"] else None
        if found is None:
            if not row["input_file_id"]:
                jobs = [wanted[k] for k in row["cache_keys"] if k in wanted]
                if len(jobs) < len(row["cache_keys"]):  # killed before the upload, asked for fewer calls now
                    row["cache_keys"] = [job.key for job in jobs]
                uploaded = ll.create_file(file=(f"lsqa-{row['id']}.jsonl", input_file(jobs)), purpose="batch", **api)
                row["input_file_id"] = uploaded.id
                with write(workspace) as con:
                    llm_batches.update_batch(con, row["id"], input_file_id=uploaded.id)
            found = ll.create_batch(completion_window="24h", endpoint=ENDPOINT, input_file_id=row["input_file_id"],
                                    metadata={"lsqa_batch": row["id"]}, **api)
        row["batch_id"] = found.id
        with write(workspace) as con:
            llm_batches.update_batch(con, row["id"], batch_id=found.id, status="submitted",
                                     provider_status=str(found.status))
            row["status"] = "submitted"
        log.info("batch %s submitted as %s", row["id"], found.id)
    batch = ll.retrieve_batch(batch_id=row["batch_id"], **api)
    status = str(batch.status)
    if status not in FINAL:
        if status != row.get("provider_status"):
            row["provider_status"] = status
            with write(workspace) as con:
                llm_batches.update_batch(con, row["id"], provider_status=status)
        return False
    results: dict[str, LLMResult] = {}
    for file_id in (batch.output_file_id, getattr(batch, "error_file_id", None)):
        if file_id:
            content = ll.file_content(file_id=file_id, **api).content
            results.update(_parse_output(model, content, row))
    for key in row["cache_keys"]:
        if key not in results:
            why = f"batch {row['batch_id']} ended {status} without an answer for this call"
            results[key] = LLMResult(text=None, status="error", error_kind="provider", error_message=f"{model}: {why}",
                                     cache_key=key, model=model, attempts=1)
    mine = [key for key in results if key in wanted]
    with connect(workspace) as con:  # stored by another run that collected this batch for its own calls
        stored = set(llm_calls.cached_ok(con, mine))
    if stored:
        adopt_results([key for key in mine if key in stored], row["batch_id"])
    store_results([(key, results[key]) for key in mine if key not in stored])
    if set(row["cache_keys"]) - wanted.keys():  # other runs' calls too: left open for them to collect theirs
        claims.release(workspace, [submission_claim(row["id"])])
        return True
    with claims.write_lock, write(workspace) as con:
        llm_batches.update_batch(con, row["id"], status="done" if status == "completed" else "failed",
                                 provider_status=status, output_file_id=batch.output_file_id,
                                 error_file_id=getattr(batch, "error_file_id", None))
        claims.release_in(con, [submission_claim(row["id"])])
    return True


def _find_created(ll, api: dict, row: dict):
    """The provider's batch made from this row's file before a restart, if any."""
    try:
        listing = ll.list_batches(limit=100, **api)
    except Exception:  # noqa: BLE001 - a provider that cannot list: create the batch from the file
        return None
    for batch in getattr(listing, "data", None) or []:
        metadata = getattr(batch, "metadata", None) or {}
        if metadata.get("lsqa_batch") == row["id"] or getattr(batch, "input_file_id", None) == row["input_file_id"]:
            return batch
    return None


def _parse_output(model: str, content: bytes, row: dict) -> dict[str, LLMResult]:
    """Results by cache key from a batch output or error file (OpenAI's JSONL format)."""
    out: dict[str, LLMResult] = {}
    elapsed = 0.0
    for line in content.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        key = item.get("custom_id", "")
        response = item.get("response") or {}
        body = response.get("body") or {}
        code = response.get("status_code")
        if code == 200 and body.get("choices"):
            text = (body["choices"][0].get("message") or {}).get("content") or ""
            usage = body.get("usage")
            # Checked before it is priced (lsqa.llm.pricing.checked_usage); the caller counts a call
            # with a usage_note at its worst case.
            prompt, completion, cached, note = checked_usage(
                model, *usage_numbers(usage if isinstance(usage, dict) else {}))
            out[key] = LLMResult(text=text, status="ok", prompt_tokens=prompt, completion_tokens=completion,
                                 cached_prompt_tokens=cached,
                                 cost_usd=None if note else batch_cost(model, prompt, completion, cached),
                                 latency_s=elapsed, cache_key=key, model=model, attempts=1, usage_note=note)
        else:
            error = item.get("error") or body.get("error") or {}
            detail = error.get("message", "") if isinstance(error, dict) else str(error)
            kind = _kind_of_status(code)
            out[key] = LLMResult(text=None, status="error", error_kind=kind, cache_key=key, model=model, attempts=1,
                                 error_message=f"{model}: batch {row['batch_id']} line failed"
                                               + (f" (HTTP {code})" if code else "") + f": {detail}"[:1000])
    return out


def _kind_of_status(code) -> str:
    if code == 429:
        return "rate_limit"
    if code in (401, 403):
        return "auth"
    if code == 404:
        return "not_found"
    if isinstance(code, int) and 400 <= code < 500:
        return "bad_request"
    if isinstance(code, int) and code >= 500:
        return "server"
    return "provider"


def _fail(workspace, row, wanted, store_results, kind: str, message: str) -> None:
    from lsqa.store import llm_batches, write

    store_results([(key, LLMResult(text=None, status="error", error_kind=kind, error_message=message, cache_key=key,
                                   model=wanted[key].model, attempts=1))
                   for key in row["cache_keys"] if key in wanted])
    with claims.write_lock, write(workspace) as con:
        llm_batches.update_batch(con, row["id"], status="failed", error=message[:2000])
        claims.release_in(con, [submission_claim(row["id"])])
