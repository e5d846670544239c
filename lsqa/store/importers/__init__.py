"""One importer per input: a file staged, checked and inserted in SQL, an ``Input`` record per input.

``skeleton`` is the frame (stage → check → insert in one write); ``table`` reads any table file in DuckDB
and finds its first bad line with SQL, ``wording`` words every error of a table file once; ``lines`` and
``rows`` stage a regular CSV or JSONL file fast, exactly as ``table`` reads it; ``values`` checks, in SQL, the
values of a file they decline; ``verdicts``,
``answers`` and ``reviews`` are the inputs, each one record (its columns, staging SQL, checks with their
words, insert), as a judge kind is one record in ``lsqa.judging.kinds``; ``questions`` reads NarrativeQA's
files (several files, the set's documents, the insert part of the ingest's write: no record) and
``errata`` an errata file, both in SQL as the records do.
"""
