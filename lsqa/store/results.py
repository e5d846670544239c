"""Systems, their answers, and judge verdicts."""

from __future__ import annotations

from lsqa.store import queue_signals, verdict_ids
from lsqa.store.bulk import fetch_dicts, insert_rows
from lsqa.vocabulary import FAMILIES, PAIRWISE


def upsert_systems(con, rows: list[dict], *, replace: bool = False) -> int:
    """Add systems; ``replace``: overwrite a row of the same name (only for names without answers)."""
    return insert_rows(con, "systems", rows, on_conflict="replace" if replace else "nothing", key=("name",))


def system_definitions(con) -> dict[str, str | dict]:
    """System name → its recorded definition (JSON), or for a system recorded without one
    (imported answers, a workspace from before definitions were kept) its model and context."""
    return {name: definition or {"model": model, "context": context}
            for name, definition, model, context in con.execute(
                "SELECT name, definition, model, context FROM systems").fetchall()}


def judge_definitions(con) -> dict[str, str | dict]:
    """Judge name → its recorded definition (JSON), or for a judge with verdicts but no record
    (imported verdicts, a workspace from before definitions were kept) the kind of its verdicts."""
    out: dict[str, str | dict] = {}
    verdicts, recorded = con.execute("SELECT (SELECT coalesce(list((judge, kinds)), []) FROM"
                                     " (SELECT judge, list(DISTINCT kind) AS kinds FROM judgments GROUP BY judge)),"
                                     " (SELECT coalesce(list((name, definition) ORDER BY rowid), []) FROM judges)"
                                     ).fetchone()
    for judge, kinds in verdicts:
        if len(kinds) == 1:
            out[judge] = {"kind": kinds[0]}
    out.update(recorded)
    return out


def names_with_results(con) -> tuple[set[str], set[str]]:
    """(systems that have answers, judges that have verdicts: on answers, or on references (migration 0018))."""
    systems = {r[0] for r in con.execute("SELECT DISTINCT system_name FROM answers").fetchall()}
    judges = {r[0] for r in con.execute(
        "SELECT DISTINCT judge FROM judgments UNION SELECT DISTINCT judge FROM reference_checks").fetchall()}
    return systems, judges


def record_definitions(con, *, systems: dict[str, str], judges: dict[str, str]) -> None:
    """Record these definitions. The caller has checked them against names with results; a name
    without results (a run that failed before making any) takes the new definition."""
    for name, definition in systems.items():
        con.execute("UPDATE systems SET definition = ? WHERE name = ?", [definition, name])
    for name, definition in judges.items():
        con.execute("INSERT INTO judges (name, definition) VALUES (?, ?)"
                    " ON CONFLICT (name) DO UPDATE SET definition = excluded.definition", [name, definition])


def list_systems(con) -> list[dict]:
    return fetch_dicts(con, "SELECT * FROM systems ORDER BY name")


def insert_answers(con, rows: list[dict], *, replace: bool = False) -> int:
    return insert_rows(con, "answers", rows, on_conflict="replace" if replace else "nothing",
                       key=("question_id", "system_name"))


def answered(con, system_name: str) -> set[str]:
    """Question ids the system already has a usable answer for."""
    rows = con.execute(
        "SELECT question_id FROM answers WHERE system_name = ? AND status = 'ok'", [system_name]
    ).fetchall()
    return {r[0] for r in rows}


def answers_for(con, question_ids: list[str], systems: list[str] | None = None) -> list[dict]:
    sql = "SELECT * FROM answers WHERE question_id IN (SELECT unnest(?))"
    params: list = [list(question_ids)]
    if systems is not None:
        sql += " AND system_name IN (SELECT unnest(?))"
        params.append(list(systems))
    return fetch_dicts(con, sql + " ORDER BY question_id, system_name", params)


def _stored(con, ids: list[str], column: str) -> dict[str, object]:
    """``{id: column}`` of the stored verdicts among ``ids``, found through the key (``verdict_ids.among``);
    the ids compared after, so a number shared by another id could not answer for it."""
    wanted = set(ids)
    among, params = verdict_ids.among(list(wanted))
    rows = con.execute(f"SELECT id, {column} FROM judgments WHERE {among}", params).fetchall()
    return {i: value for i, value in rows if i in wanted}


def judgment_labels(con, ids: list[str]) -> dict[str, str | None]:
    """``{id: label}`` of the stored verdicts among ``ids``."""
    return _stored(con, ids, "label")


def insert_judgments(con, rows: list[dict], *, replace: bool = False) -> int:
    """Store verdicts. Each row carries its kind's ``family`` (from the kind's record in
    ``lsqa.judging.kinds``): the readers below treat a verdict by it, so a row without one is refused."""
    # A row read back from the table carries its id_number: the number is computed from the id below
    # (Arrow, which carries the rows in, has no 128-bit integer).
    rows = [{k: v for k, v in r.items() if k != "id_number"} for r in rows]
    for r in rows:
        if r.get("family") not in FAMILIES:
            raise ValueError(f"verdict {r.get('id')!r} ({r.get('kind')!r}) has family {r.get('family')!r}, "
                             f"not one of {', '.join(FAMILIES)}: take it from the kind's record")
        # The primary key on the id's number is the one unique index (migrations 0020, 0021): an id that
        # is not its key's hash would let a second verdict with the same key in.
        if r.get("id") != verdict_ids.key_id(r):
            raise ValueError(f"verdict {r.get('id')!r} is not keyed by lsqa.store.verdict_ids.judgment_id of its "
                             f"judge, kind, question, systems, order and reference")
    queue_signals.mark(con, (r.get("question_id") for r in rows))  # the audit queue's kept signals
    if replace:
        # Deleted through the key (insert_rows' replace would match ids by a scan of every id, on every
        # call at a million verdicts, and a run writes each verdict as it comes:
        # docs/benchmarks-log/2026-12-03-import-id-number.md); two rows with one id in the call then
        # fail on the key, as they did.
        among, params = verdict_ids.among([r["id"] for r in rows])
        con.execute(f"DELETE FROM judgments WHERE {among}", params)
    return insert_rows(con, "judgments", rows, on_conflict="error" if replace else "nothing",
                       computed={"id_number": verdict_ids.number_sql("id")})


def judgment_ids(con, ids: list[str]) -> set[str]:
    """The ids among ``ids`` of stored verdicts with a decided label (status ok)."""
    return {i for i, status in _stored(con, ids, "status").items() if status == "ok"}


def list_judgments(con, *, judge: str | None = None, kind: str | None = None) -> list[dict]:
    sql = "SELECT * EXCLUDE (id_number) FROM judgments WHERE 1=1"
    params: list = []
    if judge:
        sql += " AND judge = ?"
        params.append(judge)
    if kind:
        sql += " AND kind = ?"
        params.append(kind)
    return fetch_dicts(con, sql + " ORDER BY judge, question_id, system_a, system_b", params)


def judges(con) -> list[dict]:
    return fetch_dicts(
        con,
        "SELECT judge, kind, family, count(*) AS n, count(*) FILTER (WHERE status = 'ok') AS n_ok"
        " FROM judgments GROUP BY judge, kind, family ORDER BY judge, kind",
    )


def judgments_in_context(con, ids: list[str]) -> dict[str, dict]:
    """``{id: verdict}`` of the stored verdicts among ``ids``, each with its question, references and
    book's title and span (the book's text is read apart, per book: ``lsqa.store.corpus.get_document``),
    in one statement however many: the Audit page reads the verdicts it will show next with the one on
    screen (``lsqa.audit.judged_item``). Found through the key (``verdict_ids.among``; MATERIALIZED keeps
    the look-up apart from the joins), the ids compared after, as ``_stored`` does. Joined with the
    books' text column, the read scanned every book's text, most of an item's read
    (docs/benchmarks-log/2026-12-06-team-cpu.md)."""
    wanted = set(ids)
    if not wanted:
        return {}
    among, params = verdict_ids.among(list(wanted))
    rows = fetch_dicts(con, f"""
        WITH j AS MATERIALIZED (SELECT * EXCLUDE (id_number) FROM judgments WHERE {among})
        SELECT j.*, q.text AS question, q.reference_1, q.reference_2, q.origin, q.document_id,
               d.title, d.clean_start, d.clean_end
        FROM j LEFT JOIN questions q ON q.id = j.question_id
        LEFT JOIN (SELECT id, title, clean_start, clean_end FROM documents) d ON d.id = q.document_id""", params)
    return {r["id"]: r for r in rows if r["id"] in wanted}


def judgment_label(con, judgment_id: str) -> dict | None:
    """A verdict's kind, status and label alone: what a review checks, without the joins of
    ``judgments_in_context``, on every decision (docs/benchmarks-log/2026-12-02-0425-browser-ninth-pass.md)."""
    verdict, params = verdict_ids.one_verdict(judgment_id)
    rows = fetch_dicts(con, f"SELECT kind, status, label FROM {verdict}", params)
    return rows[0] if rows else None


def other_verdicts(con, asked: list[tuple[str, list[str]]]) -> list[list[dict]]:
    """For each ``(question_id, systems)`` asked, every judge's verdicts on those answers (the audit
    view's comparison table): on that question, of those systems only; one statement for all asked,
    the lists in the order asked."""
    if not asked:
        return []
    rows = fetch_dicts(con, """
        SELECT w.n, j.id, j.judge, j.kind, j.system_a, j.system_b, j.shown_order, j.reference, j.label, j.status,
               j.score
        FROM (SELECT unnest(?) AS n, unnest(?) AS question_id, unnest(?) AS systems) w
        JOIN judgments j ON j.question_id = w.question_id
        WHERE list_contains(w.systems, j.system_a) AND (j.system_b = '' OR list_contains(w.systems, j.system_b))
        ORDER BY w.n, j.family = ?, j.judge, j.shown_order, j.reference, j.system_a, j.system_b, j.kind""",
                       [list(range(len(asked))), [q for q, _ in asked], [list(s) for _, s in asked], PAIRWISE])
    out: list[list[dict]] = [[] for _ in asked]
    for r in rows:
        out[r.pop("n")].append(r)
    return out
