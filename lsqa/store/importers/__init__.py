"""One importer per input: a file staged, checked and inserted in SQL, an ``Input`` record per input.

``skeleton`` is the frame (stage → check → insert in one write); ``table`` reads any table file in DuckDB
and finds its first bad line with SQL, ``wording`` words every error of a table file once; ``lines`` and
``rows`` stage a regular CSV or JSONL file fast, exactly as ``table`` reads it; ``values`` checks, in SQL, the
values of a file they decline; ``verdicts``,
``answers``, ``reviews``, ``questions`` (NarrativeQA's question files: several files, the set's documents a
parameter) and ``errata`` are the inputs, each one record (its columns, staging SQL, checks with their words,
insert), as a judge kind is one record in ``lsqa.judging.kinds``; the last two are staged before the workspace
is locked and finished in the ingest's write. ``questions`` also reads NarrativeQA's documents and summaries.
"""
