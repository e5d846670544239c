"""The report's wording rules on workspaces built to be extreme: 5 random audits, a system that never
wins, 1 book and 40 books. Every figure of the headline is a figure the page shows below it; "too few
audits to say" stands exactly where an interval rests on fewer audits than it needs (the corrected
section below 30 random audits) and nowhere else; the per-book section says what 1 book and 40 books
allow; no number on the page is in exponent form or has more than 3 significant digits.

The workspaces are written row by row through lsqa.store (documents, questions, systems, answers,
verdicts with their keyed ids) and audited through lsqa.audit as the Audit page's random queue does.
"""

from __future__ import annotations

import hashlib
import re

import pytest

from lsqa import audit, store
from lsqa.dashboard import report
from lsqa.figures import audits
from lsqa.store import corpus as corpus_store
from lsqa.store import results as results_store
from lsqa.store.verdict_ids import KEY_COLUMNS, judgment_id
from tests.dashboard.test_report import Page, unreadable_numbers

JUDGE = "synth-sxs"
SYSTEMS = ("strong", "middle", "never")
BOOT = 200
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def build(ws, n_books: int, questions_per_book: int) -> None:
    """``strong`` beats ``middle`` on 2 of every 3 questions (the third: middle wins, or a tie on
    every fifth), both beat ``never`` always; every pair judged in both orders."""
    docs, questions, answers, verdicts = [], [], [], []
    q = 0
    for b in range(n_books):
        doc = f"book-{b:03d}"
        docs.append({"id": doc, "source": "synthetic", "content_sha1": hashlib.sha1(doc.encode()).hexdigest(),
                     "title": f"Book {b + 1}", "kind": "book"})
        for _ in range(questions_per_book):
            qid = f"imp:q{q:05d}"
            questions.append({"id": qid, "document_id": doc, "origin": "imported", "text": f"Question {q}?"})
            for s in SYSTEMS:
                answers.append({"question_id": qid, "system_name": s, "text": f"{s} answers question {q} " * (1 + len(s) % 3)})
            upper = "A" if q % 3 else ("tie" if q % 5 == 0 else "B")
            for a, b, label in (("strong", "middle", upper), ("strong", "never", "A"), ("middle", "never", "A")):
                for order in ("ab", "ba"):
                    row = {"judge": JUDGE, "kind": "pairwise", "family": "pairwise", "question_id": qid,
                           "system_a": a, "system_b": b, "shown_order": order, "reference": "", "label": label,
                           "raw_label": label if order == "ab" else {"A": "B", "B": "A"}.get(label, label),
                           "status": "ok"}
                    row["id"] = judgment_id(*(row[c] for c in KEY_COLUMNS))
                    verdicts.append(row)
            q += 1
    with store.write(ws) as con:
        corpus_store.insert_documents(con, docs)
        corpus_store.insert_questions(con, questions)
        results_store.upsert_systems(con, [{"name": s, "model": "imported", "context": "imported"} for s in SYSTEMS])
        results_store.insert_answers(con, answers)
        results_store.insert_judgments(con, verdicts)


def audit_randomly(ws, n: int) -> None:
    rows = audits.queue(ws, JUDGE, "random", rate=0.5, limit=n)["rows"]
    assert len(rows) == n
    for r in rows:
        audit.confirm(ws, "ana", r["id"], sampling=r["sampling"])


@pytest.mark.parametrize("n_books, per_book, n_audits", [(1, 30, 5), (40, 6, 5), (40, 6, 40), (1, 30, 0)],
                         ids=["1-book-5-audits", "40-books-5-audits", "40-books-40-audits", "1-book-no-audits"])
@pytest.mark.sampled(3)
def test_wording_rules_on_extreme_workspaces(workspace, n_books, per_book, n_audits):
    build(workspace, n_books, per_book)
    if n_audits:
        audit_randomly(workspace, n_audits)
    html = report.build(workspace, JUDGE, bootstrap=BOOT)
    page = Page(html)
    said = page.text("headline").split("Every figure here")[0]
    below = " ".join(page.text(s) for s in page.sections if s != "headline")
    # Every headline figure is one the page shows below it.
    for figure in NUMBER.findall(said):
        assert re.search(rf"(?<![\d.,]){re.escape(figure)}(?![\d,]|\.\d)", below), figure
    # The system that never wins is named, and its strength interval says why it has none.
    assert "never never beat another system." in said
    never = next(r for r in page.table("tiers") if r["system"] == "never")
    assert never["95% interval of the strength"].startswith("unbounded: never beat")
    # "too few audits to say": in the corrected section exactly when 0 < audits < 30, and nowhere else.
    too_few = "too few audits to say"
    corrected = page.text("corrected")
    if 0 < n_audits < 30:
        rows = page.table("corrected")
        assert rows and all(r["corrected 95% CI"] == f"too few audits to say (n = {n_audits})" for r in rows)
    else:
        assert too_few not in corrected
    assert too_few not in " ".join(page.text(s) for s in page.sections if s != "corrected")
    assert f"after {n_audits} random audit" in said if n_audits else "no random audits" in said
    # Books: 1 book cannot say how often the order holds on a new one; 40 can, and say of how many.
    books = page.text("books")
    if n_books == 1:
        assert "Too few books to say how often the order would hold on a new book" in books
    else:
        assert "strong is above middle in " in books and "of the 40 books with at least 5 verdicts" in books
        assert re.search(r"with probability \d+(\.\d+)?% \(share of such books: 95% interval", books)
    assert len(page.table("books")) == n_books
    # Examples: the questions where middle beat strong, each linked to its verdict on Audit.
    assert "middle won, against the overall order" in page.text("examples")
    assert html.count(">open on Audit</a>") == min(5, len(page.table("examples")))
    # Numbers a person can read, everywhere.
    assert unreadable_numbers(Page(re.sub(r"<pre>.*?</pre>", "", html, flags=re.S)).text()) == []
