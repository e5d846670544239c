"""The demo workspace: one deterministic builder shared by `lsqa demo`, `make run` and the tests.

From the shared data folder it ingests the NarrativeQA test questions (with both references and
the Wikipedia summaries), the 8 NarrativeQA books that have full text, and *Les Misérables*; then,
unless told not to, it runs the demo study (``lsqa.study.pipeline.demo_config``) with the embedded
offline models.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

from lsqa.config.settings import data_dir as default_data_dir
from lsqa.corpus import ingest
from lsqa.errors import InputError

LES_MISERABLES = Path("books") / "pg135_les_miserables.txt"


BUNDLED = Path(__file__).resolve().parents[1] / "demo_data" / "narrativeqa_potter"


def has_shared_data(data: Path) -> bool:
    return (data / "narrativeqa" / "documents.csv").is_file()


def build_demo(path: str | Path, *, data_dir: str | Path | None = None, run_study: bool = True,
               scale: str = "full") -> Iterator[str]:
    """Build (or complete) the demo workspace at ``path``, yielding progress lines.

    ``scale="small"`` (tests, quick looks): no *Les Misérables*, and the study of
    ``configs/demo_small.toml`` (two short books). Idempotent: an existing demo workspace is
    completed, never duplicated. Every book with text gets its entity chains (the Corpus page).

    Without the shared data folder (a fresh machine), the demo is built from the copy bundled in
    the package (``lsqa/demo_data``: two public-domain Beatrix Potter tales with their NarrativeQA
    questions, Apache-2.0) and the small study; an explicit ``data_dir`` must exist.
    """
    from lsqa.corpus import chains
    from lsqa.study import llmbar

    if scale not in ("full", "small"):
        raise ValueError(f"scale must be full or small, not {scale!r}")
    data = Path(data_dir) if data_dir else default_data_dir()
    if not has_shared_data(data):
        if data_dir:
            raise InputError(data, "not a shared data folder (no narrativeqa/documents.csv)",
                             hint="set LSQA_DATA_DIR or name the shared data folder")
        yield (f"no shared data at {data}: building the small demo bundled with lsqa "
               "(two Beatrix Potter tales and their NarrativeQA questions)")
        yield from ingest.ingest_narrativeqa(path, BUNDLED).lines()
        yield from chains.ensure_all_entities(path)
        if run_study:
            from lsqa.study import pipeline

            yield from pipeline.run_demo_study(path, scale="small")
        yield from score_reference_triage(path)
        return
    yield from ingest.ingest_narrativeqa(path, data / "narrativeqa").lines()
    if scale == "full":
        yield from ingest.ingest_book(path, data / LES_MISERABLES).lines()
    yield from chains.ensure_all_entities(path)
    if scale == "full" and (data / llmbar.LLMBAR_DIR).is_dir():  # judge-vs-human figures at first look
        yield from llmbar.import_llmbar(path, data)
    if run_study:
        from lsqa.study import pipeline

        yield from pipeline.run_demo_study(path, scale=scale)
    yield from score_reference_triage(path)


def score_reference_triage(path: str | Path) -> Iterator[str]:
    """Score the reference-error triage once, so that its sentence embeddings are stored in the
    workspace: the Reference errors page's first visit then reads them instead of loading the
    encoder and embedding every reference (docs/benchmarks-log/2026-12-01-0031-browser-after-the-speed-work.md)."""
    from lsqa.audit import reference_errors

    t0 = time.perf_counter()
    n = len(reference_errors.suspects(Path(path)))
    yield f"reference-error triage: {n:,} references scored, their embeddings stored ({time.perf_counter() - t0:.1f} s)"
