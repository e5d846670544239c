"""Generated workspaces of any size for the scale benches and tests (issue 35): rows written with SQL
inside DuckDB, a million verdicts in seconds, ids as ``lsqa.store.verdict_ids.judgment_id`` makes them.

``plain``: the issue's measurement — 10 systems, one side-by-side judge on all 45 pairs of every
question, one order each (a random one), labels drawn from a Bradley-Terry model with ties and
'none', 0.5% parse errors. ``rich``: every family and what the audit queue's signals read — two
side-by-side judges (the first on both orders of a third of the questions, so it can flip), a
ground-truth side-by-side judge, AutoAIS, ground truth on both references and similarity, so that
disagreement, self-inconsistency and failures all occur.

Randomness is a hash of the row's key and the seed: the same call makes the same workspace.
"""

from __future__ import annotations

from pathlib import Path

from lsqa import store
from lsqa.store.verdict_ids import ID_SQL, number_sql

N_SYSTEMS = 10
PAIRS_PER_QUESTION = N_SYSTEMS * (N_SYSTEMS - 1) // 2
N_DOCUMENTS = 40

# One uniform number in [0, 1) per row and purpose, from the row's key: DuckDB's hash is fixed.
_U = "((hash({key}, $seed, '{what}') % 1000003) / 1000003.0)"

_PAIRS = f"""
    SELECT a.i AS ia, b.i AS ib, 'sys-' || a.i AS system_a, 'sys-' || b.i AS system_b
    FROM range({N_SYSTEMS}) a(i), range({N_SYSTEMS}) b(i) WHERE a.i < b.i"""


def _u(key: str, what: str) -> str:
    return _U.format(key=key, what=what)


def _pairwise(judge: str, kind: str, orders: str, reference: str, strength: float) -> str:
    """Side-by-side verdicts of ``judge`` on every pair of every question: ``orders`` a SQL list of
    the orders shown per question, ``strength`` the spread of the systems' Bradley-Terry β."""
    key = f"q.id, p.system_a, p.system_b, o.shown_order, '{judge}', r.reference"
    p_a = f"(1.0 / (1.0 + exp(-{strength} * (p.ib - p.ia) / {N_SYSTEMS})))"  # lower index: stronger
    u = _u(key, "label")
    label = f"""CASE WHEN {u} < 0.05 THEN 'none' WHEN {u} < 0.15 THEN 'tie'
                     WHEN ({u} - 0.15) / 0.85 < {p_a} THEN 'A' ELSE 'B' END"""
    return f"""
        SELECT '{judge}' AS judge, '{kind}' AS kind, 'pairwise' AS family, q.id AS question_id,
               p.system_a, p.system_b, o.shown_order, r.reference,
               {label} AS label0, {_u(key, 'status')} < 0.005 AS failed
        FROM bench_questions q CROSS JOIN ({_PAIRS}) p
        CROSS JOIN LATERAL (SELECT unnest({orders}) AS shown_order) o
        CROSS JOIN (SELECT unnest({reference}) AS reference) r"""


def _binary(judge: str, kind: str, references: str, accept: str) -> str:
    key = f"q.id, s.system, '{judge}', r.reference"
    return f"""
        SELECT '{judge}' AS judge, '{kind}' AS kind, 'binary' AS family, q.id AS question_id,
               s.system AS system_a, '' AS system_b, 'ab' AS shown_order, r.reference,
               CASE WHEN {_u(key, 'label')} < {accept} THEN 'yes' ELSE 'no' END AS label0,
               {_u(key, 'status')} < 0.005 AS failed
        FROM bench_questions q
        CROSS JOIN (SELECT i, 'sys-' || i AS system FROM range({N_SYSTEMS}) t(i)) s
        CROSS JOIN (SELECT unnest({references}) AS reference) r"""


_PLAIN = _pairwise("bench-sxs", "pairwise", f"[CASE WHEN {_u('q.id', 'order')} < 0.5 THEN 'ab' ELSE 'ba' END]",
                  "['']", 3.0)


def verdict_file(con, path: Path, first_question: int, n_questions: int, seed: int = 0) -> int:
    """Write the ``plain`` workspace's verdicts on questions ``first_question`` .. + ``n_questions`` as
    a CSV file for ``lsqa import-judgments`` (question_id, rater, kind, system_a, system_b,
    shown_order, label); ``con``: any DuckDB connection. Returns the number of rows."""
    con.execute(f"""CREATE OR REPLACE TEMP TABLE bench_questions AS
                    SELECT printf('bench:q%07d', i) AS id, i AS n
                    FROM range({first_question}, {first_question + n_questions}) t(i)""")
    quoted = str(path).replace("'", "''")
    con.execute(f"""COPY (SELECT question_id, judge AS rater, kind, system_a, system_b, shown_order, label0 AS label
                          FROM ({_PLAIN}) ORDER BY question_id, system_a, system_b)
                    TO '{quoted}' (HEADER, QUOTE '')""", {"seed": seed})
    con.execute("DROP TABLE bench_questions")
    return n_questions * PAIRS_PER_QUESTION


def build(path: Path, n_verdicts: int, *, rich: bool = False, seed: int = 0, verdicts: bool = True) -> dict:
    """Make the workspace ``path`` (a new file) with about ``n_verdicts`` verdicts; returns counts.
    ``verdicts=False``: the questions and systems only (what ``verdict_file`` rows are imported into)."""
    per_question = PAIRS_PER_QUESTION if not rich else (
        PAIRS_PER_QUESTION * (1 + 1 / 3) + PAIRS_PER_QUESTION + PAIRS_PER_QUESTION + N_SYSTEMS * 4)
    n_questions = max(1, round(n_verdicts / per_question))
    if rich:
        sources = [
            _pairwise("sxs-1", "pairwise", "CASE WHEN q.n % 3 = 0 THEN ['ab', 'ba'] ELSE ['ab'] END", "['']", 3.0),
            _pairwise("sxs-2", "pairwise", f"[CASE WHEN {_u('q.id', 'order')} < 0.5 THEN 'ab' ELSE 'ba' END]",
                      "['']", 1.5),
            _pairwise("gt-sxs", "groundtruth-pairwise", "['ab']", "['1']", 2.0),
            _binary("autoais", "absolute", "['']", "0.3 + 0.05 * s.i"),
            _binary("gt", "groundtruth", "['1', '2']", "0.35 + 0.04 * s.i"),
            _binary("sim", "similarity", "['']", "0.4 + 0.03 * s.i"),
        ]
    else:
        sources = [_PLAIN]
    if not verdicts:
        sources = []
    with store.write(path) as con:
        con.execute(f"""
            INSERT INTO documents (id, source, content_sha1, title, kind)
            SELECT 'bench-doc-' || i, 'generated', sha1('bench-doc-' || i), 'Generated book ' || i, 'book'
            FROM range({N_DOCUMENTS}) t(i)""")
        con.execute(f"""
            INSERT INTO questions (id, document_id, origin, text, reference_1, reference_2, source_index)
            SELECT printf('bench:q%07d', i), 'bench-doc-' || (i % {N_DOCUMENTS}), 'imported',
                   'Generated question ' || i || '?', 'first reference ' || i, 'second reference ' || i, i
            FROM range({n_questions}) t(i)""")
        con.execute(f"""
            INSERT INTO systems (name, model, context)
            SELECT 'sys-' || i, 'bench/generated', 'none' FROM range({N_SYSTEMS}) t(i)""")
        con.execute(f"""CREATE TEMP TABLE bench_questions AS
                        SELECT printf('bench:q%07d', i) AS id, i AS n FROM range({n_questions}) t(i)""")
        for sql in sources:
            con.execute(f"""
                INSERT INTO judgments (id, id_number, judge, kind, family, question_id, system_a, system_b,
                                       shown_order, reference, label, raw_label, status, raw)
                SELECT id, {number_sql("id")}, * EXCLUDE (id) FROM (
                SELECT {ID_SQL} AS id,
                       judge, kind, family, question_id, system_a, system_b, shown_order, reference,
                       CASE WHEN failed THEN NULL ELSE label0 END,
                       CASE WHEN failed THEN '' WHEN shown_order = 'ba' AND label0 = 'A' THEN 'B'
                            WHEN shown_order = 'ba' AND label0 = 'B' THEN 'A' ELSE label0 END,
                       CASE WHEN failed THEN 'parse_error' ELSE 'ok' END,
                       CASE WHEN failed THEN 'the judge said something else' ELSE '' END
                FROM ({sql}))""", {"seed": seed})
        con.execute("DROP TABLE bench_questions")
        n = int(con.execute("SELECT count(*) FROM judgments").fetchone()[0])
    return {"verdicts": n, "questions": n_questions, "systems": N_SYSTEMS}


def add_audits(path: Path, n_audits: int, *, judge: str = "bench-sxs", agree: float = 0.8, double: float = 0.1,
               seed: int = 0) -> int:
    """Add ``n_audits`` random-queue audits of ``judge``'s decided verdicts to the workspace ``path``:
    a simple random sample (each verdict drawn with probability ``n_audits / decided``, stratum
    ``all``), each reviewed by one of three annotators who keeps the judge's label with probability
    ``agree`` and else gives another, a share ``double`` reviewed again by a fourth person (so the
    people's ceiling and the alternative annotator test have verdicts two people labelled); each draw
    recorded in ``audit_draws`` as its first review makes it. Returns the number of audits."""
    with store.write(path) as con:
        n_decided = int(con.execute("SELECT count(*) FROM judgments WHERE judge = ? AND status = 'ok'",
                                    [judge]).fetchone()[0])
        pi = n_audits / n_decided
        labels = "['A', 'B', 'tie', 'none']" if "sxs" in judge else "['yes', 'no']"
        con.execute(f"""
            CREATE TEMP TABLE bench_drawn AS
            SELECT id AS judgment_id, label AS judge_label, row_number() OVER (ORDER BY h, id) AS n,
                   {_u('id', 'agree')} < {agree} AS agrees,
                   {labels}[1 + CAST(floor({_u('id', 'other')} * {len(labels.split(','))}) AS INTEGER)] AS other
            FROM (SELECT id, label, hash(id, $seed, 'audit') AS h FROM judgments WHERE judge = $judge AND status = 'ok')
            ORDER BY h, id LIMIT {int(n_audits)}""", {"seed": seed, "judge": judge})
        base = int(con.execute("SELECT coalesce(max(id), 0) FROM human_reviews").fetchone()[0])
        con.execute(f"""
            INSERT INTO human_reviews (id, annotator, judgment_id, action, label, queue, inclusion_prob, stratum)
            SELECT {base} + n, 'bench-annotator-' || (n % 3),  judgment_id,
                   CASE WHEN agrees OR other = judge_label THEN 'confirm' ELSE 'override' END,
                   CASE WHEN agrees THEN judge_label ELSE other END, 'random', {pi}, 'all'
            FROM bench_drawn""")
        con.execute(f"""
            INSERT INTO audit_draws (judgment_id, queue, inclusion_prob, stratum, review_id)
            SELECT judgment_id, 'random', {pi}, 'all', {base} + n FROM bench_drawn""")
        con.execute(f"""
            INSERT INTO human_reviews (id, annotator, judgment_id, action, label, queue, inclusion_prob, stratum)
            SELECT {base + n_audits} + n, 'bench-annotator-3', judgment_id, 'confirm', judge_label, 'random', {pi}, 'all'
            FROM bench_drawn WHERE n <= {int(n_audits * double)}""")
        con.execute("DROP TABLE bench_drawn")
    return n_audits
