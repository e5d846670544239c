"""One importer per input: a file staged, checked and inserted in SQL, an ``Input`` record per input.

``skeleton`` is the frame (stage → check → insert in one write); ``lines`` and ``rows`` read a CSV or
JSONL file into DuckDB exactly as the strict reader ``lsqa.corpus.tables`` reads it; ``verdicts``,
``answers``, ``reviews`` and ``questions`` are the inputs, each one record (its columns, staging SQL,
checks with their words, insert), as a judge kind is one record in ``lsqa.judging.kinds``.
"""
