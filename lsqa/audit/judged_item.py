"""One verdict as the judge saw it, with what a human needs to decide: the question and its
references, the answers in the order shown, the judge's evidence found in the book, the other
verdicts on the same answers and the reviews so far.

The judges are asked to extract literal passages of the book as evidence (paper Appendix A.3 for
AutoAIS, §3.1; A.4 side by side, §3.2): each is looked up in the book's text and shown in its
passage, the quotes marked, folded to a few sentences around them. Whether the judge's label may be
shown yet (blind review) is decided here too (``reveal``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from lsqa import store
from lsqa.audit.kept_reads import REVIEW_TABLES, SKIPS_TABLE, no_reviews_read
from lsqa.audit.wording import describe, label_options, to_shown_label
from lsqa.judging import kinds
from lsqa.store import corpus as corpus_store
from lsqa.store import llm_calls as llm_calls_store
from lsqa.store import results as results_store
from lsqa.store import reviews as reviews_store
from lsqa.store import workspace_cache
from lsqa.store.lineage import Change
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.text import highlight
from lsqa.text.units import content_words

CONTEXT_CHARS = 350  # book text shown either side of an evidence excerpt when no passage holds it
FOLD_SENTENCES = 2  # sentences kept either side of the marked evidence until the passage is unfolded


READ_AHEAD = 16  # verdicts read in one go: the one asked for and the next ones its caller will show


def item(workspace: Path, judgment_id: str, *, context_chars: int = CONTEXT_CHARS,
         ahead: Sequence[str] = ()) -> dict | None:
    """One verdict as the judge saw it, with what a human needs to decide.

    ``answers``: in the order shown to the judge (``position`` A / B); ``evidence``: each excerpt
    with where it was found in the story and the passage around it, as escaped HTML with the
    excerpt in ``<mark>``.

    Read in two parts. The verdict's own (``_static``: the verdict in its question's context, the
    answers, the other judges' verdicts on them, the evidence found in the book) no review changes:
    it is kept per verdict across every review. Its reviews (``_reviews``: the flags on its question,
    the human labels, the review history) are kept per verdict across the reviews of other verdicts.
    ``ahead``: the verdicts the caller will show next (the Audit page's queue): when a part of this
    verdict is not kept, that part of the nearest of them (up to ``READ_AHEAD`` in all) is read with
    it where it is not kept either, one statement per kind of read for all, and kept each under its
    own id, so that the next items cost no read until something they show changes. ``item.uncached``:
    both parts read afresh, nothing kept."""
    kept = _static.kept_only(workspace, judgment_id, context_chars)
    read = {} if kept is not None else _read_ahead(workspace, judgment_id, context_chars, ahead)
    static = kept[0] if kept is not None else read[judgment_id]
    if static is None:
        return None
    kept = _reviews.kept_only(workspace, judgment_id, static["question_id"])
    reviews = kept[0] if kept is not None else _reviews_ahead(workspace, static, context_chars, ahead, read)
    return _with_reviews(static, reviews)


def _read_once(workspace: Path, judgment_id: str, *, context_chars: int = CONTEXT_CHARS) -> dict | None:
    """``item`` read afresh, nothing kept: what the kept parts must add up to."""
    static = _static.uncached(workspace, judgment_id, context_chars)
    if static is None:
        return None
    return _with_reviews(static, _reviews.uncached(workspace, judgment_id, static["question_id"]))


item.uncached = _read_once  # type: ignore[attr-defined]


def _with_reviews(static: dict, reviews: dict) -> dict:
    """The item: its verdict's own part with its reviews, each label in the verdict's words."""
    labels_now = reviews["human_labels"]
    for lab in labels_now:
        lab["text"] = describe(static["kind"], lab["label"], static["system_a"], static["system_b"])
        lab["shown_label"] = to_shown_label(static["kind"], lab["label"], static["shown_order"])
    return {**static, "flags": reviews["flags"], "human_labels": labels_now, "history": reviews["history"]}


def _reviews_survive(change: Change, arguments: dict) -> bool:
    """A verdict's reviews change with its own reviews only (a flag is not a declared change); a skip
    is not a review (``SKIPS_TABLE``, which no part of the item reads)."""
    return change.only_in(SKIPS_TABLE) or (change.only_in(*REVIEW_TABLES) and bool(change.judgments)
                                           and arguments["judgment_id"] not in change.judgments)


@kept_while_unchanged(maxsize=512, survives=_reviews_survive)  # as many as the verdicts' own parts
def _reviews(workspace: Path, judgment_id: str, question_id: str) -> dict:
    """What reviews change of an item: the current flags on its question's references, its human
    labels and its review history."""
    return _reviews_of(workspace, {judgment_id: question_id})[judgment_id]


def _reviews_ahead(workspace: Path, static: dict, context_chars: int, ahead: Sequence[str],
                   read: dict[str, dict | None]) -> dict:
    """The reviews of ``static``'s verdict (not kept), read with those of the nearest verdicts ``ahead``
    whose own part is at hand (``read`` just now, or kept) and whose reviews are not kept; each kept
    under its own id, under the data version read before the read."""
    version = store.data_version(workspace) if workspace_cache.enabled() else None
    if version is None:  # nothing can be kept: read this one alone
        return _reviews.uncached(workspace, static["id"], static["question_id"])
    asked = {static["id"]: static["question_id"]}
    for i in _nearest(static["id"], ahead):
        own = read[i] if i in read else (_static.kept_only(workspace, i, context_chars) or (None,))[0]
        if own is not None and _reviews.kept_only(workspace, i, own["question_id"]) is None:
            asked[i] = own["question_id"]
    reviews = _reviews_of(workspace, asked)
    for i, question_id in asked.items():
        _reviews.keep_derived(workspace, version, reviews[i], i, question_id)
    return reviews[static["id"]]


def _reviews_of(workspace: Path, asked: dict[str, str]) -> dict[str, dict]:
    """``{id: its reviews}`` for each verdict id of ``asked`` (``{id: its question id}``): one statement
    per kind of read (flags by question, labels, history) for all of them, in one connection."""
    with store.connect(workspace) as con:
        flags = reviews_store.flags_of(con, list(asked.values()))
        labels = reviews_store.human_labels_of(con, list(asked))
        history = reviews_store.review_history(con, list(asked))
    return {i: {"flags": flags[q], "human_labels": labels[i], "history": history[i]} for i, q in asked.items()}


# The verdicts' own parts of the items on the screens a server serves and the ones read ahead of them.
@kept_while_unchanged(maxsize=512, survives=no_reviews_read)
def _static(workspace: Path, judgment_id: str, context_chars: int) -> dict | None:
    """A verdict's own part of its item, or None for no such verdict: what no review changes."""
    return _statics(workspace, [judgment_id], context_chars)[judgment_id]


def _read_ahead(workspace: Path, judgment_id: str, context_chars: int,
                ahead: Sequence[str]) -> dict[str, dict | None]:
    """The own part of ``judgment_id`` (not kept), read with those of the nearest verdicts ``ahead``
    that are not kept either; each kept under its own id, under the data version read before the
    read (what was read is at least as new). ``{id: own part, or None}`` of every verdict read."""
    version = store.data_version(workspace) if workspace_cache.enabled() else None
    if version is None:  # nothing can be kept: read this one alone
        return {judgment_id: _static.uncached(workspace, judgment_id, context_chars)}
    ids = [judgment_id] + [i for i in _nearest(judgment_id, ahead)
                           if _static.kept_only(workspace, i, context_chars) is None]
    statics = _statics(workspace, ids, context_chars)
    for one in ids:
        _static.keep_derived(workspace, version, statics[one], one, context_chars)
    return statics


def _nearest(judgment_id: str, ahead: Sequence[str]) -> list[str]:
    """The verdicts ``ahead`` read with ``judgment_id``: the nearest ones, ``READ_AHEAD`` in all."""
    return [i for i in dict.fromkeys(ahead) if isinstance(i, str) and i != judgment_id][:READ_AHEAD - 1]


def _statics(workspace: Path, ids: list[str], context_chars: int) -> dict[str, dict | None]:
    """``{id: its verdict's own part of the item, or None}`` for each of ``ids``: one statement per
    kind of read (verdicts in context, answers, other verdicts, passages) for all of them."""
    with store.connect(workspace) as con:
        found = results_store.judgments_in_context(con, ids)
        verdicts = [found[i] for i in ids if i in found]
        systems = [[s for s in (j["system_a"], j["system_b"]) if s] for j in verdicts]
        answers = {(a["question_id"], a["system_name"]): a for a in results_store.answers_for(
            con, sorted({j["question_id"] for j in verdicts}), sorted({s for ss in systems for s in ss}))} \
            if verdicts else {}
        others = results_store.other_verdicts(con, [(j["question_id"], ss) for j, ss in zip(verdicts, systems, strict=True)])
        parts = []
        for j in verdicts:
            pairwise = kinds.get(j["kind"]).pairwise
            if pairwise:
                shown = [j["system_a"], j["system_b"]] if j["shown_order"] == "ab" else [j["system_b"], j["system_a"]]
            else:
                shown = [j["system_a"]]
            shown_answers = [{"position": "AB"[i] if pairwise else "", "system": s,
                              "text": (answers.get((j["question_id"], s)) or {}).get("text", ""),
                              "status": (answers.get((j["question_id"], s)) or {}).get("status", "missing")}
                             for i, s in enumerate(shown)]
            book = _book(workspace, j["document_id"]) if j["document_id"] else None
            parts.append((j, pairwise, shown_answers, book, _found(j, book)))
        asked = [(j["document_id"], [(m.start, m.end) for m in matches])
                 for j, _, _, _, found_in_book in parts for _, matches in found_in_book if matches]
        covering = iter(corpus_store.passages_covering(con, asked))
    out: dict[str, dict | None] = dict.fromkeys(ids)
    for (j, pairwise, shown_answers, book, found_in_book), other_rows in zip(parts, others, strict=True):
        passages = [next(covering) if matches else [] for _, matches in found_in_book]
        out[j["id"]] = _own_part(j, pairwise, shown_answers, other_rows,
                                 _evidence(j, book, shown_answers, found_in_book, passages, context_chars))
    return out


def _about(other: dict, pairwise: bool, shown_answers: list[dict]) -> str:
    """Which of the answers on screen another verdict judges: on a side-by-side item a verdict on one answer says
    which (its position and system), else both."""
    if not pairwise:
        return "this answer"
    if other["system_b"]:
        return "both answers"
    position = next((a["position"] for a in shown_answers if a["system"] == other["system_a"]), "?")
    return f"answer {position} ({other['system_a']})"


def _own_part(j: dict, pairwise: bool, shown_answers: list[dict], others: list[dict], evidence: list[dict]) -> dict:
    other_rows = [{"judge": o["judge"], "kind": o["kind"], "about": _about(o, pairwise, shown_answers),
                   "order": o["shown_order"], "reference": o["reference"],
                   "verdict": describe(o["kind"], o["label"], o["system_a"], o["system_b"]) if o["status"] == "ok"
                   else o["status"], "this": o["id"] == j["id"]} for o in others]
    try:
        extra = json.loads(j.get("extra") or "{}")
    except json.JSONDecodeError:
        extra = {}
    return {
        "id": j["id"], "judge": j["judge"], "kind": j["kind"], "pairwise": pairwise, "status": j["status"],
        "question_id": j["question_id"], "question": j["question"] or "", "title": j["title"] or "",
        "document_id": j["document_id"], "origin": j["origin"],
        "references": [{"n": "1", "text": j["reference_1"] or ""}, {"n": "2", "text": j["reference_2"] or ""}],
        "reference_used": j["reference"],
        "system_a": j["system_a"], "system_b": j["system_b"], "shown_order": j["shown_order"],
        "answers": shown_answers,
        "label": j["label"], "raw_label": j["raw_label"], "score": j["score"],
        "label_text": describe(j["kind"], j["label"], j["system_a"], j["system_b"]),
        "shown_label": to_shown_label(j["kind"], j["label"], j["shown_order"]),
        "evidence": evidence, "raw": j["raw"] or "", "extra": extra,
        "prompt_version": f"{j['prompt_id']} v{j['prompt_version']}" if j["prompt_id"] else "",
        "other_verdicts": other_rows, "options": label_options(j["kind"]),
    }


@kept_while_unchanged(maxsize=8, survives=no_reviews_read)  # the books of the items on screen
def _book(workspace: Path, document_id: str) -> dict | None:
    """A book with its text, or None when it has none: read once for the items of one book (its text
    was a fixed share of each item's read, whatever the book's length:
    docs/benchmarks-log/2026-12-06-team-cpu.md)."""
    with store.connect(workspace) as con:
        book = corpus_store.get_document(con, document_id)
    return book if book and book.get("full_text") is not None else None


def prompt_of(workspace: Path, judgment_id: str) -> str:
    """The prompt a verdict's judge was sent, as text (one block per message); "" without a call.

    Apart from ``item`` because a prompt can carry a whole book: read only when someone asks to see
    it (the Audit page's "Raw completion and prompt" panel). On a *Les Misérables* verdict of the
    full demo this read was most of the item's time, paid on every key press
    (docs/benchmarks-log/2026-12-01-0031-browser-after-the-speed-work.md)."""
    with store.connect(workspace) as con:
        j = results_store.judgments_in_context(con, [judgment_id]).get(judgment_id)
        call = llm_calls_store.get_call(con, j["llm_call_key"]) if j and j["llm_call_key"] else None
    return _prompt_text(call)


def _prompt_text(call: dict | None) -> str:
    if not call:
        return ""
    try:
        messages = json.loads(call["messages"])
    except (TypeError, json.JSONDecodeError):
        return str(call.get("messages") or "")
    return "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in messages if isinstance(m, dict))


def _found(j: dict, book: dict | None) -> list[tuple[str, list]]:
    """Each excerpt of the judge's evidence with where the book holds it (``highlight.find_evidence``;
    none: not found in the book)."""
    try:
        excerpts = [str(e) for e in json.loads(j["evidence"] or "[]")]
    except json.JSONDecodeError:
        excerpts = [j["evidence"]]
    full = (book or {}).get("full_text") or ""
    lo, hi = ((book or {}).get("clean_start") or 0), ((book or {}).get("clean_end") or len(full))
    return [(text, highlight.find_evidence(full, text, lo, hi) if full else []) for text in excerpts]


def _evidence(j: dict, book: dict | None, answers: list[dict], found: list[tuple[str, list]],
              passages: list[list[dict]], context_chars: int) -> list[dict]:
    """The judge's evidence: quotes found in the book (``found``, each with the ``passages`` that hold
    it), one block per passage (several quotes in one
    passage share it), folded to a few sentences around the marks with the whole passage kept for
    unfolding; on side-by-side items each block says which shown answer its quotes share words with.
    Text not found in the book (an explanation, a paraphrase) is kept as a note, its ``A:``/``B:``
    prefix read as the answer it is about."""
    pairwise = kinds.get(j["kind"]).pairwise
    words = {a["position"]: set(content_words(a["text"] or "")) for a in answers} if pairwise else {}
    notes, blocks = [], {}
    full = (book or {}).get("full_text") or ""
    lo, hi = ((book or {}).get("clean_start") or 0), ((book or {}).get("clean_end") or len(full))
    for (text, matches), holding in zip(found, passages, strict=True):
        if not matches:
            about = text[:1] if pairwise and text[:2] in ("A:", "B:") else ""
            notes.append({"found": False, "how": "", "where": "", "about": about, "text": text,
                          "html": highlight.text_html(text), "html_full": "", "folded": False})
            continue
        spans = [(m.start, m.end) for m in matches]
        if holding:
            lo_p, hi_p = holding[0]["char_start"], holding[-1]["char_end"]
            where = f"passage {holding[0]['ordinal']}" + (f"–{holding[-1]['ordinal']}" if len(holding) > 1 else "")
        else:
            lo_p, hi_p = highlight.word_bounds(full, *highlight.window(len(full), spans[0][0], spans[-1][1],
                                                                       context_chars, lo, hi))
            where = f"characters {spans[0][0]:,}–{spans[-1][1]:,}"
        block = blocks.setdefault((lo_p, hi_p), {"found": True, "how": matches[0].how, "where": where,
                                                 "lo": lo_p, "hi": hi_p, "spans": [], "about": set()})
        block["spans"] += spans
        if pairwise:
            quoted = set(content_words(text))
            block["about"] |= {pos for pos, w in words.items() if quoted & w}
    out = []
    for b in sorted(blocks.values(), key=lambda b: b["lo"]):
        spans = sorted(b.pop("spans"))
        s, e = highlight.sentence_window(full, spans[0][0], spans[-1][1], FOLD_SENTENCES, b["lo"], b["hi"])
        lo_p, hi_p = b.pop("lo"), b.pop("hi")
        b["folded"] = (s, e) != (lo_p, hi_p)
        b["html"] = highlight.marked_html(full[s:e], spans, offset=s)
        b["html_full"] = highlight.marked_html(full[lo_p:hi_p], spans, offset=lo_p)
        b["about"] = " and ".join(sorted(b["about"]))
        out.append(b)
    return out + notes


def reveal(it: dict, annotator: str, blind: bool) -> bool:
    """Whether the judge's label, other annotators' labels and system names may be shown: always,
    unless blind and this annotator has not decided the item yet."""
    if not blind:
        return True
    return any(lab["annotator"] == annotator.strip() for lab in it["human_labels"])


def as_shown(it: dict, annotator: str, blind: bool) -> dict:
    """The item as a page may show it to ``annotator``: the item itself once revealed (``reveal``),
    else ``blind_copy``. ``revealed`` says which."""
    if reveal(it, annotator, blind):
        return {**it, "revealed": True}
    return blind_copy(it, annotator)


def blind_copy(it: dict, annotator: str) -> dict:
    """What an item holds before the person decides, in blind review: the question, its references
    and the answers in the order shown, and nothing that tells what the judge or anybody else
    thought of them. Left out: the judge's label in any form (label, raw label, its words, the
    label in the positions shown), its score, its raw completion and extra output, its notes (the
    evidence text not found in the book: "B: 1 of 1 content words … (1.00)", "token F1 0.00 …"),
    which answer each quote is about, the other verdicts on these answers, the review history,
    other people's labels and other people's flags on the references (one's own flags stay: one
    made them). System names give way to "answer A" / "answer B" (a system's name is a prior on
    its quality). Quotes found in the book stay, as passages of the book, without attribution.
    ``status`` stays: a verdict whose output could not be used has no label to hide, and the person
    has to give one."""
    who = (annotator or "").strip()
    answers = [{**a, "system": f"answer {a['position']}".strip()} for a in it["answers"]]
    evidence = [{**ev, "about": ""} for ev in it["evidence"] if ev["found"]]
    return {**it, "revealed": False, "answers": answers, "evidence": evidence,
            "system_a": "", "system_b": "", "label": None, "raw_label": None, "score": None, "label_text": "",
            "shown_label": None, "raw": "", "extra": {}, "other_verdicts": [], "human_labels": [], "history": [],
            "flags": [f for f in it["flags"] if who and f.get("annotator") == who]}
