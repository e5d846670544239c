"""Which NarrativeQA references are most likely wrong: a triage list, and the errata file.

The paper (§5.2, Appendix E) found that many NarrativeQA references are wrong — written from
Wikipedia summaries, not the books — and that a book-grounded rater (AutoAIS with the full book)
accepts answers that ground-truth raters reject because of the bad reference. Each reference
``r`` ∈ {1, 2} of a question is scored from that evidence::

    score = 2.0 · grounded_vs_reference   share of answers a book-grounded judge (AutoAIS, kind
                                          ``absolute``) accepts while a ground-truth rater using
                                          reference r rejects them
          + 1.0 · reference_specific      share of answers a ground-truth rater accepts against the
                                          other reference but rejects against r
          + 1.0 · (1 − support)           support = largest share of r's content words found together
                                          in one passage of the book (0 when the book is unknown)
          + 0.5 · (1 − references_agree)  word overlap (Jaccard) of the two references: low when the
                                          two annotators wrote different things
          + 1.5 · human_accepts           share of humans' labels on ground-truth verdicts against r
                                          that turned a "no" into "yes"
          + 3.0 · [flagged wrong or unanswerable]  + 1.5 · [flagged ambiguous]

Support uses the same content words (stop words removed, crude stems) as the embedded lexical
judge (``lsqa.text_units``). Everything but the support depends on reviews and flags, so the
list is recomputed on every call; the per-book passage word sets are cached per process.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from lsqa import store
from lsqa.text_units import content_words
from lsqa.store import corpus as corpus_store
from lsqa.store import reviews as reviews_store
from lsqa.store import verdicts as verdicts_store

WEIGHTS = {"grounded_vs_reference": 2.0, "reference_specific": 1.0, "low_support": 1.0,
           "references_disagree": 0.5, "human_accepts": 1.5, "flag_wrong": 3.0, "flag_ambiguous": 1.5}
ERRATA_COLUMNS = ("question_id", "title", "question", "reference", "reference_text", "other_reference", "reasons",
                  "annotators", "notes", "score")


def _words(text: str) -> frozenset[str]:
    return frozenset(content_words(text or ""))


@lru_cache(maxsize=64)
def _passage_words(workspace: str, document_id: str, n_passages: int) -> tuple[tuple[int, frozenset[str]], ...]:
    # n_passages is part of the key so a re-ingested book is read again.
    with store.connect(workspace) as con:
        rows = corpus_store.passages_of_documents(con, [document_id])
    return tuple((r["ordinal"], _words(r["text"])) for r in rows)


def support(reference: str, passages: tuple[tuple[int, frozenset[str]], ...]) -> tuple[float, int | None]:
    """(largest share of the reference's content words in one passage, that passage's ordinal)."""
    ref = _words(reference)
    if not ref or not passages:
        return (0.0 if ref else 1.0), None
    best, where = 0.0, None
    for ordinal, words in passages:
        share = len(ref & words) / len(ref)
        if share > best:
            best, where = share, ordinal
            if best == 1.0:
                break
    return best, where


def jaccard(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


def triage(workspace: Path, *, limit: int | None = None) -> list[dict]:
    """Every (question, reference) with verdicts, most likely wrong first, with the evidence as columns."""
    with store.connect(workspace) as con:
        data = verdicts_store.reference_triage_rows(con)
        n_passages = {d["id"]: d["passages"] for d in corpus_store.books(con)}
    grounded: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in data["grounded"]:
        grounded[(r["question_id"], r["system"])].append(r["label"])
    gt: dict[tuple[str, str, str], list[str]] = defaultdict(list)  # (question, system, reference) → labels
    for r in data["gt"]:
        gt[(r["question_id"], r["system"], r["reference"])].append(r["label"])
    human: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in data["human_gt"]:
        human[(r["question_id"], r["reference"])].append(r)
    flags: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for f in data["flags"]:
        flags[(f["question_id"], f["reference"])].append(f)
    systems_of: dict[str, set[str]] = defaultdict(set)
    for (qid, system, _ref) in gt:
        systems_of[qid].add(system)
    for (qid, system) in grounded:
        systems_of[qid].add(system)

    out = []
    for q in data["questions"]:
        qid = q["question_id"]
        refs = {"1": q["reference_1"], "2": q["reference_2"]}
        agree = jaccard(refs["1"], refs["2"])
        passages = _passage_words(str(workspace), q["document_id"], n_passages.get(q["document_id"], 0)) \
            if n_passages.get(q["document_id"]) else ()
        for ref, other in (("1", "2"), ("2", "1")):
            if not refs[ref]:
                continue
            conflict = n_conflict = specific = n_specific = 0
            for system in systems_of[qid]:
                mine = gt.get((qid, system, ref))
                if not mine:
                    continue
                rejected = all(label == "no" for label in mine)
                book = grounded.get((qid, system))
                if book:
                    n_conflict += 1
                    conflict += rejected and (sum(b == "yes" for b in book) * 2 > len(book))
                theirs = gt.get((qid, system, other))
                if theirs:
                    n_specific += 1
                    specific += rejected and any(label == "yes" for label in theirs)
            sup, where = support(refs[ref], passages)
            hum = human.get((qid, ref), [])
            accepts = sum(h["judge_label"] == "no" and h["human_label"] == "yes" for h in hum)
            fl = flags.get((qid, ref), [])
            reasons = sorted({f["reason"] for f in fl})
            parts = {
                "grounded_vs_reference": conflict / n_conflict if n_conflict else 0.0,
                "reference_specific": specific / n_specific if n_specific else 0.0,
                "low_support": 1.0 - sup,
                "references_disagree": 1.0 - agree,
                "human_accepts": accepts / len(hum) if hum else 0.0,
                "flag_wrong": float(bool({"wrong", "unanswerable"} & set(reasons))),
                "flag_ambiguous": float("ambiguous" in reasons),
            }
            score = sum(WEIGHTS[k] * v for k, v in parts.items())
            out.append({
                "question_id": qid, "title": q["title"], "question": q["question"], "reference": ref,
                "reference_text": refs[ref], "other_reference": refs[other], "score": round(score, 3),
                "book_accepts_ref_rejects": f"{conflict}/{n_conflict}", "only_this_ref_rejects": f"{specific}/{n_specific}",
                "support": round(sup, 2), "support_passage": where, "references_agree": round(agree, 2),
                "human_accepts": f"{accepts}/{len(hum)}", "flags": ", ".join(f"{f['reason']} ({f['annotator']})" for f in fl),
                **{f"part_{k}": round(v, 3) for k, v in parts.items()},
            })
    out.sort(key=lambda r: (-r["score"], r["title"], r["question_id"], r["reference"]))
    return out[:limit] if limit else out


def errata(workspace: Path) -> list[dict]:
    """The flagged references, one row per (question, reference), with reasons, annotators and notes."""
    with store.connect(workspace) as con:
        rows = reviews_store.flagged_questions(con)
    scores = {(r["question_id"], r["reference"]): r["score"] for r in triage(workspace)} if rows else {}
    grouped: dict[tuple[str, str], dict] = {}
    for r in rows:
        key = (r["question_id"], r["reference"])
        g = grouped.setdefault(key, {"question_id": r["question_id"], "title": r["title"] or "",
                                     "question": r["question"] or "", "reference": r["reference"],
                                     "reference_text": r["reference_text"] or "",
                                     "other_reference": r["other_reference"] or "",
                                     "reasons": [], "annotators": [], "notes": [],
                                     "score": scores.get(key)})
        g["reasons"].append(r["reason"])
        g["annotators"].append(r["annotator"])
        if r["note"]:
            g["notes"].append(f"{r['annotator']}: {r['note']}")
    return list(grouped.values())


def errata_csv(rows: list[dict]) -> bytes:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=ERRATA_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for r in rows:
        writer.writerow({**r, **{k: "; ".join(r[k]) for k in ("reasons", "annotators", "notes")}})
    return buf.getvalue().encode("utf-8")


def errata_jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps({k: r.get(k) for k in ERRATA_COLUMNS}, ensure_ascii=False) + "\n"
                   for r in rows).encode("utf-8")
