"""Which NarrativeQA references are most likely wrong: the triage list (``lsqa suspects``) and the errata.

The paper found many NarrativeQA references wrong or partial (§5.2, Appendix E: written from
Wikipedia summaries, not the books). Dataset-cleaning work locates such labels by the agreement of
independent predictors against the given label (confident learning, Northcutt et al. 2021;
"platinum" benchmarks, Vendrow et al. 2025). Here a reference ``r`` of a question counts as
*confirmed* by each independent source that agrees with it, and is suspect to the degree that none
does — a product of the unconfirmed shares (a noisy-OR over confirmations; which signals enter was
chosen on LiteraryQA's dev books, ``WEIGHTS``, nothing is fitted to a user's labels)::

    machine = (1 − systems_confirm) · systems_contradict · (1 − references_agree) · llm
    humans  = machine with its odds × OVERRIDE_ODDS^k (k: people who overturned, at most MAX_OVERRIDES)
    score   = 1 − (1 − humans) · (1 − flag)

A signal a reference lacks (no answers, no LLM check) takes the workspace's mean: neither suspect
nor cleared for lack of evidence. ``llm`` is 1 until an LLM reference check has run
(``LLM_FLOOR``). The signals beyond word matching (``systems_contradict``, the summary's, ``llm_accepts``)
are computed in ``lsqa.audit.reference_signals``.

- ``answers_match``: mean over the independent systems (every system except those that *are* a
  reference, ``context = reference:N``) of the share of r's content words found in the system's
  answer. Needs answers only. An answer that declines ("I am not going to answer the question",
  "I don't know": ``DECLINED``) is no evidence either way and is left out (counted in ``evidence``);
  an answer saying the book does not tell is kept: it is a reading of the book that does not
  confirm r. On LiteraryQA's edits leaving the 64 declines out moved the answered references'
  AUROC from 0.775 to 0.778 and precision@25 from 0.48 to 0.52 (answers only, analysis script).
- ``judges_accept``: share of "yes" among the ground-truth (yes/no) verdicts against r, any judge
  (embedded or LLM), on the answers not declined. Needs a ``groundtruth`` judge.
- ``systems_confirm``: the larger of the two above that exist (an answer that matches by either
  reading confirms the reference; on LiteraryQA's edits the mean let the embedded lexical judge's
  strict token-F1 verdicts drown the word match, AUROC 0.638 against 0.660 for the larger); when
  a question has neither, the mean over the references that have it (a neutral prior, so a
  reference is never suspect merely for being unanswered).
- ``references_agree``: cosine of the two references' sentence embeddings (all-MiniLM-L6-v2, as
  the similarity rater, ``lsqa.judging.similarity``), clipped to [0, 1]: two annotators who read the
  book independently confirm each other.
- ``systems_contradict``: the agreement with r that the systems' abilities and the question's
  difficulty (an item-response fit over the workspace) led to expect and that did not come: a
  strong system's miss counts most. Shown with each system's ability (``systems``).
- ``summary_support`` / ``question_in_summary`` (shown, not scored): the largest share of r's (the
  question's) content words in one sentence of the story's summary, with that sentence.
- ``llm_accepts``: share of LLM reference checks (judge kind ``reference-check``) saying the question
  is answerable and r answers it, with what they quoted.
- ``humans_overturned``: of the people who labelled ground-truth verdicts against r, those who said
  "yes" where the judge said "no" (the answer was right, the reference made it look wrong). Such an
  override is weak evidence about r (a strict judge missing a paraphrase is overridden too), so it
  weighs as a likelihood ratio on the machine's suspicion, not as a second road to 1: each of the
  first ``MAX_OVERRIDES`` people doubles its odds (``OVERRIDE_ODDS``). A reference that every automatic
  signal supports stays near the bottom however many people overrode (machine 0 stays 0), and one the
  signals half suspect rises (0.2 → 0.33 → 0.5 → 0.67 after one, two, three overrides).
- ``flag``: 1 for a current "wrong" or "unanswerable" flag, ½ for "ambiguous".
- ``book_support`` (shown, not scored): the largest share of r's content words found together in
  one passage of the book. Measured on LiteraryQA's edits it separates wrong references barely
  better than chance (AUROC 0.57), so it explains but does not rank.

How well it ranks LiteraryQA's substantive edits: ``bench/bench_reference_errors.py``,
docs/BENCHMARKS.md. Content words and stems are those of the embedded lexical judge.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from statistics import fmean
from urllib.parse import quote

from lsqa import store
from lsqa.audit import reference_signals as signals
from lsqa.judging import kinds
from lsqa.judging.stored_embeddings import embed_in_workspace
from lsqa.store import corpus as corpus_store
from lsqa.store import reference_checks as reference_checks_store
from lsqa.store import reviews as reviews_store
from lsqa.store import verdicts as verdicts_store
from lsqa.store.workspace_cache import kept_while_unchanged
from lsqa.text.units import content_words

# The columns behind a score, in the order the CLI and the Reference errors page show them.
COLUMNS = ("systems_confirm", "answers_match", "judges_accept", "systems_contradict", "references_agree",
           "summary_support", "question_in_summary", "llm_accepts", "humans_overturned", "flags", "book_support",
           "evidence")
# What a person reads to decide a row (the Reference errors page's evidence panel, ``lsqa suspects --json``).
EVIDENCE_COLUMNS = ("systems_disagree", "systems", "summary_sentence", "question_sentence", "llm_evidence")
FLAG_WEIGHT = {"wrong": 1.0, "unanswerable": 1.0, "ambiguous": 0.5}
ERRATA_COLUMNS = ("question_id", "title", "question", "reference", "reference_text", "correction", "other_reference",
                  "reasons", "annotators", "flagged_at", "notes", "corrections", "score")
# Lists in an errata row, one entry per annotator whose flag stands (a CSV cell joins them with "; ").
ERRATA_LISTS = ("reasons", "annotators", "flagged_at", "notes", "corrections")


# An answer that declines to answer says nothing about the reference (a model's refusal, lsqa/extractive's
# "I don't know."); matched case-insensitively anywhere in the answer.
DECLINED = re.compile(r"\b(not going to answer|won't answer|will not answer|cannot answer|can't answer"
                      r"|i don't know|i do not know|not sure what to say)\b", re.IGNORECASE)
# The machine signals and their weights in the score (``combine``), chosen on LiteraryQA's 8 dev books by
# bench/bench_reference_errors.py --choose: each signal in or out (weight 0 or 1), by the answered references'
# AUROC + precision@10 + precision@25 (the same choice made on 7 books and scored on the 8th: docs/BENCHMARKS.md).
# The summary's two columns are shown, not scored: on the dev books either one in the product lowered all three.
WEIGHTS = {"systems_confirm": 1.0, "systems_contradict": 1.0, "references_agree": 1.0, "summary_support": 0.0,
           "question_in_summary": 0.0}
SUSPICIONS = frozenset({"systems_contradict"})  # columns where high means suspect; the others confirm
# The weight of one human override (``humans_overturned``): the odds that the reference is wrong are
# multiplied by OVERRIDE_ODDS per person who overturned a ground-truth "no" against it, for at most
# MAX_OVERRIDES people (odds × 8 at most). Set by reasoning, not fitted (LiteraryQA has no overrides):
# an override says the answer was right, which a wrong reference or a strict judge both explain.
OVERRIDE_ODDS = 2.0
MAX_OVERRIDES = 3
# What a reference the LLM check accepts keeps of its suspicion. Set before any measurement: the check's
# quality cannot be measured offline (no LLM here), so it may move the list, never hide a reference alone.
LLM_FLOOR = 0.2


def _formula() -> str:
    factors = [(k if k in SUSPICIONS else f"(1 − {k})") + ("" if w == 1 else f"^{w:g}") for k, w in WEIGHTS.items() if w]
    return (f"1 − (1 − humans) · (1 − flag), where humans = machine with its odds × {OVERRIDE_ODDS:g} per person "
            f"who overturned a ground-truth 'no' (at most {MAX_OVERRIDES}), machine = {' · '.join(factors)} · llm, and "
            f"llm = {LLM_FLOOR} + {1 - LLM_FLOOR:.1f} · (1 − llm_accepts) after an LLM reference check, else 1")


FORMULA = _formula()
# What each column means, for the CLI's help, the Reference errors page's column headers and the README.
COLUMN_HELP = {
    "score": "0-1, higher = more likely wrong: how little the systems, the other reference, humans and flags "
             "confirm this reference (see the caption's formula)",
    "systems_confirm": "the larger of answers_match and judges_accept; empty when no system answered (the "
                       "workspace mean is used: neither suspect nor cleared for lack of answers)",
    "answers_match": "mean share of the reference's content words found in each independent system's answer "
                     "(declined answers left out)",
    "judges_accept": "share of 'yes' among ground-truth yes/no verdicts against this reference (embedded or LLM judges)",
    "systems_contradict": "0-1: the agreement with this reference the systems' abilities and the question's "
                          "difficulty led to expect and that did not come (mean of expected × disagreement; "
                          "item-response fit over the workspace): a strong system's miss counts most",
    "references_agree": "cosine of the two references' MiniLM embeddings, 0-1: the other annotator confirms",
    "summary_support": "largest share of the reference's content words in one sentence of the story's summary (the "
                       "annotators wrote from it); shown, not scored",
    "question_in_summary": "largest share of the question's content words in one sentence of the summary: low = a "
                           "question about something the summary never mentions; shown, not scored",
    "llm_accepts": "share of LLM reference checks (judge kind reference-check) saying the question is answerable "
                   "and this reference answers it; empty until such a judge has run",
    "humans_overturned": "people who turned a ground-truth 'no' against this reference into 'yes' / people who "
                         f"reviewed one; each of the first {MAX_OVERRIDES} multiplies the machine's odds by {OVERRIDE_ODDS:g}, "
                         "so overrides alone never lift a reference every automatic signal supports",
    "flags": "current flags on this reference: 'wrong' or 'unanswerable' make the score 1, 'ambiguous' counts half",
    "book_support": "largest share of the reference's content words found in one passage of the book; shown, not "
                    "scored (it barely separates wrong references: AUROC 0.57)",
    "evidence": "the sources this reference had: answers (how many, how many declined), judges, the other "
                "reference, the summary, LLM checks, humans, flags",
}


@lru_cache(maxsize=200_000)  # pure; the page asks again for the same answers on every render
def declined(answer: str) -> bool:
    """Whether an answer declines to answer (no evidence about the reference either way)."""
    return bool(DECLINED.search(answer or ""))


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


@lru_cache(maxsize=100_000)
def _book_support(reference: str, workspace: str, document_id: str, n_passages: int) -> tuple[float, int | None]:
    """``support`` of a reference in its book's passages, kept between renders of the page: the
    passages are read once per book (``_passage_words``) and the scan is the same every time."""
    return support(reference, _passage_words(workspace, document_id, n_passages) if n_passages else ())


def answer_match(reference: str, answer: str) -> float:
    """Share of the reference's content words that the answer contains (1.0 for a reference without any)."""
    ref = _words(reference)
    return len(ref & _words(answer)) / len(ref) if ref else 1.0


def references_agree(workspace: Path, pairs: list[tuple[str, str]]) -> list[float]:
    """Cosine of each pair's sentence embeddings (stored in the workspace once computed), clipped to [0, 1]."""
    vectors = embed_in_workspace(workspace, [t for pair in pairs for t in pair])
    return [min(1.0, max(0.0, float(vectors[a] @ vectors[b]))) for a, b in pairs]


def reference_raters() -> list[str]:
    """The judge kinds whose verdicts say yes/no about an answer against one NarrativeQA reference
    (the ground-truth raters of paper §5.2): their verdicts, and people's labels of them, are evidence
    about that reference."""
    return [k.name for k in kinds.all_kinds() if not k.pairwise and k.one_reference]


def _grouped(rows: list[dict], *key: str) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        out[tuple(r[k] for k in key)].append(r)
    return out


def _responses(data: dict) -> tuple[dict, dict, dict]:
    """Each non-declined independent answer's word match, ground-truth verdicts and response to each
    reference: ``matches`` and ``verdicts`` keyed (question id, system, reference), ``responses``
    keyed (question id, system) → {reference: response} (the item-response fit's input)."""
    gt = _grouped(data["gt"], "question_id", "system", "reference")
    refs_of = {q["question_id"]: {"1": q["reference_1"], "2": q["reference_2"]} for q in data["questions"]}
    matches, verdicts, responses = {}, {}, {}
    for a in data["answers"]:
        qid, system = a["question_id"], a["system"]
        if qid not in refs_of or declined(a["text"]):
            continue
        for ref, text in refs_of[qid].items():
            key = (qid, system, ref)
            matches[key] = answer_match(text, a["text"])
            verdicts[key] = [v["label"] == "yes" for v in gt.get(key, [])]
            responses.setdefault((qid, system), {})[ref] = signals.answer_response(matches[key], verdicts[key])
    return matches, verdicts, responses


@kept_while_unchanged()
def system_abilities(workspace: Path) -> list[dict]:
    """The item-response fit behind ``systems_contradict``: each independent system's ability (logits,
    and as its share right on a question of typical difficulty) and how many answers it rests on,
    strongest first."""
    with store.connect(workspace) as con:
        data = verdicts_store.reference_evidence(con, reference_raters())
    _, _, responses = _responses(data)
    fit = signals.fit_abilities(responses)
    counts: dict[str, int] = defaultdict(int)
    for _, system in responses:
        counts[system] += 1
    rows = [{"system": s, "ability": round(fit.typical_share(s), 3), "ability_logit": round(theta, 3),
             "answers": counts[s]} for s, theta in fit.ability.items()]
    return sorted(rows, key=lambda r: (-r["ability_logit"], r["system"]))


@kept_while_unchanged()
def suspects(workspace: Path, *, limit: int | None = None) -> list[dict]:
    """Every reference of the books that have answers, verdicts or flags, most likely wrong first.

    Each row: ``question_id``, ``reference`` ("1"|"2"), ``score`` in [0, 1], the evidence
    columns the score is computed from (see the module docstring), ``evidence`` naming the
    sources that were available for this reference, and what a person checks first: ``systems``
    (each system's ability, expected and actual agreement), ``summary_sentence``, ``llm_evidence``.
    """
    with store.connect(workspace) as con:
        data = verdicts_store.reference_evidence(con, reference_raters())
        n_passages = corpus_store.passage_counts(con)
        checks = _grouped(reference_checks_store.current_checks(con), "question_id", "reference")
    answers = _grouped(data["answers"], "question_id")
    human = _grouped(data["human_gt"], "question_id", "reference")
    flags = _grouped(data["flags"], "question_id", "reference")
    questions = data["questions"]
    matches, verdicts_of, responses = _responses(data)
    fit = signals.fit_abilities(responses)
    refs_agree_of = references_agree(workspace, [(q["reference_1"], q["reference_2"]) for q in questions])

    rows = []
    for q, refs_agree in zip(questions, refs_agree_of, strict=False):
        qid = q["question_id"]
        refs = {"1": q["reference_1"], "2": q["reference_2"]}
        doc = q["document_id"]
        for ref, other in (("1", "2"), ("2", "1")):
            given = answers.get((qid,), [])
            used = [a["system"] for a in given if (qid, a["system"], ref) in matches]
            n_declined = len(given) - len(used)
            verdicts = [v for s in used for v in verdicts_of[(qid, s, ref)]]
            contra = signals.contradiction(fit, qid, {s: responses[(qid, s)][ref] for s in used})
            sup, where = _book_support(refs[ref], str(workspace), doc, n_passages.get(doc, 0))
            hum = human.get((qid, ref), [])
            overturned = len({h["annotator"] for h in hum if h["judge_label"] == "no" and h["human_label"] == "yes"})
            fl = flags.get((qid, ref), [])
            summary = signals.summary_evidence(refs[ref], q["question"], q["summary"])
            llm = signals.llm_evidence(checks.get((qid, ref), []))
            declines = f", {n_declined} declined" if n_declined else ""
            evidence = [f"answers ({len(used)}{declines})" if given else "",
                        f"judges ({len(verdicts)})" if verdicts else "",
                        "other reference", "summary" if summary["summary_support"] is not None else "",
                        f"LLM check ({len(checks[(qid, ref)])})" if llm["llm_accepts"] is not None else "",
                        f"humans ({len(hum)})" if hum else "", "flags" if fl else ""]
            rows.append({
                "question_id": qid, "reference": ref, "title": q["title"], "question": q["question"],
                "reference_text": refs[ref], "other_reference": refs[other],
                "answers_match": round(fmean(matches[(qid, s, ref)] for s in used), 3) if used else None,
                "judges_accept": round(fmean(verdicts), 3) if verdicts else None,
                "systems_contradict": round(contra.value, 3) if contra else None,
                "systems": contra.systems if contra else [],
                "systems_disagree": signals.systems_line(contra.systems) if contra else "",
                "references_agree": round(refs_agree, 3),
                **summary, **llm,
                "humans_overturned": f"{overturned}/{len({h['annotator'] for h in hum})}", "_overturned": overturned,
                "flags": ", ".join(f"{f['reason']} ({f['annotator']})" for f in fl),
                "_flag": max((FLAG_WEIGHT.get(f["reason"], 0.0) for f in fl), default=0.0),
                "book_support": round(sup, 2), "support_passage": where,
                "evidence": ", ".join(e for e in evidence if e),
            })
    _score(rows)
    rows.sort(key=lambda r: (-r["score"], r["title"], r["question_id"], r["reference"]))
    return rows[:limit] if limit else rows


def suspicion(row: dict, signal: str) -> float | None:
    """How much one signal of a row says "wrong", in [0, 1] (None when the row lacks it)."""
    value = row.get(signal)
    if value is None:
        return None
    return value if signal in SUSPICIONS else 1.0 - value


def combine(rows: list[dict], weights: dict[str, float] = WEIGHTS) -> list[float]:
    """Each row's machine suspicion: the product over the signals of suspicion^weight, a signal a row
    lacks taking the workspace's mean of it (neither suspect nor cleared for lack of evidence), times
    the LLM check's factor (``llm_factor``). Pure: the bench re-chooses ``weights`` with it."""
    priors = {}
    for signal in weights:
        known = [v for v in (suspicion(r, signal) for r in rows) if v is not None]
        priors[signal] = fmean(known) if known else 1.0
    out = []
    for r in rows:
        machine = 1.0
        for signal, w in weights.items():
            if w:
                value = suspicion(r, signal)
                machine *= (priors[signal] if value is None else value) ** w
        out.append(machine * llm_factor(r.get("llm_accepts")))
    return out


def llm_factor(accepts: float | None) -> float:
    """An LLM reference check's effect: a reference it accepts keeps ``LLM_FLOOR`` of its suspicion, one it
    rejects keeps all; without a check, nothing changes."""
    return 1.0 if accepts is None else LLM_FLOOR + (1.0 - LLM_FLOOR) * (1.0 - accepts)


def with_overrides(machine: float, overturned: int) -> float:
    """The machine's suspicion after ``overturned`` people overturned a ground-truth "no" against the
    reference: its odds × ``OVERRIDE_ODDS`` per person, for at most ``MAX_OVERRIDES`` (a likelihood ratio
    per override, so overrides move what the signals say and never replace it: 0 stays 0)."""
    if machine >= 1.0 or machine <= 0.0 or overturned <= 0:
        return min(max(machine, 0.0), 1.0)
    odds = machine / (1.0 - machine) * OVERRIDE_ODDS ** min(overturned, MAX_OVERRIDES)
    return odds / (1.0 + odds)


def _score(rows: list[dict]) -> None:
    for r in rows:
        parts = [r[k] for k in ("answers_match", "judges_accept") if r[k] is not None]
        r["systems_confirm"] = round(max(parts), 3) if parts else None
    for r, machine in zip(rows, combine(rows), strict=False):
        r["score"] = round(1.0 - (1.0 - with_overrides(machine, r.pop("_overturned"))) * (1.0 - r.pop("_flag")), 4)


def explain(row: dict) -> str:
    """One line saying how a row's score was made from its columns."""
    def share(value) -> str:
        return "—" if value is None else f"{value:.2f}"

    confirm = "the workspace mean (no answers or verdicts)" if row["systems_confirm"] is None \
        else f"{share(row['systems_confirm'])} (the larger of: answers contain it {share(row['answers_match'])}, " \
             f"ground-truth judges accept {share(row['judges_accept'])})"
    contradict = "the workspace mean (no answers)" if row["systems_contradict"] is None \
        else share(row["systems_contradict"])
    llm = "" if row.get("llm_accepts") is None else f"; LLM checks accept {share(row['llm_accepts'])}"
    summary = "" if row.get("summary_support") is None else f"the summary supports it {share(row['summary_support'])}, "
    return (f"score {row['score']}: systems confirm {confirm}; the systems' abilities expected agreement that "
            f"did not come {contradict}; the other reference agrees {share(row['references_agree'])}{llm}; "
            f"humans overturned {row['humans_overturned']}"
            + (f"; flags: {row['flags']}" if row["flags"] else "")
            + f" · not scored: {summary}support in the book {row['book_support']}"
            + (f" (passage {row['support_passage']})" if row["support_passage"] is not None else "")
            + f" · evidence used: {row['evidence']}")


def row_key(row: dict) -> tuple[str, str]:
    """What a triage row is about: (question id, reference). Selections keep this, never a row number."""
    return row["question_id"], row["reference"]


def find(rows: list[dict], key: tuple[str, str] | None) -> int | None:
    """Where the row about ``key`` is in ``rows`` now (the list re-sorts after every flag), or None."""
    if key is None:
        return None
    key = tuple(key)
    return next((i for i, r in enumerate(rows) if row_key(r) == key), None)


def errata(workspace: Path) -> list[dict]:
    """The flagged references, one row per (question, reference), with reasons, annotators, when each
    flagged it (``flagged_at``, the workspace's clock, ``YYYY-MM-DD HH:MM:SS``; beside ``annotators``),
    notes, and ``open``: the Audit page holding the question's verdicts (``errata_link``).

    ``corrections``: each proposed corrected reference as ``name: text``; ``correction``: the proposed
    text when everybody who proposed one proposed the same, else '' (people differ: a person chooses,
    writing it into the file's ``correction`` before ``lsqa ingest-narrativeqa --errata`` reads it back)."""
    with store.connect(workspace) as con:
        rows = reviews_store.flagged_questions(con)
    scores = {(r["question_id"], r["reference"]): r["score"] for r in suspects(workspace)} if rows else {}
    grouped: dict[tuple[str, str], dict] = {}
    for r in rows:
        key = (r["question_id"], r["reference"])
        g = grouped.setdefault(key, {"question_id": r["question_id"], "title": r["title"] or "",
                                     "question": r["question"] or "", "reference": r["reference"],
                                     "reference_text": r["reference_text"] or "",
                                     "other_reference": r["other_reference"] or "",
                                     "reasons": [], "annotators": [], "flagged_at": [], "notes": [],
                                     "corrections": [], "correction": "", "_proposed": set(),
                                     "score": scores.get(key), "open": errata_link(r["question_id"])})
        g["reasons"].append(r["reason"])
        g["annotators"].append(r["annotator"])
        g["flagged_at"].append(r["created_at"].isoformat(sep=" ", timespec="seconds"))
        if r["note"]:
            g["notes"].append(f"{r['annotator']}: {r['note']}")
        if r["correction"]:
            g["corrections"].append(f"{r['annotator']}: {r['correction']}")
            g["_proposed"].add(r["correction"])
    for g in grouped.values():
        proposed = g.pop("_proposed")
        g["correction"] = next(iter(proposed)) if len(proposed) == 1 else ""
    return list(grouped.values())


def errata_link(question_id: str) -> str:
    """The Audit page on one question's verdicts, reviewed or not (``?question=``, read by the Audit page)."""
    return f"/audit?question={quote(question_id, safe='')}&reviewed=all"


def errata_csv(rows: list[dict]) -> bytes:
    """The errata as CSV; a cell a spreadsheet would run as a formula starts with a ' (``lsqa.text.csv_cells``)."""
    from lsqa.text.csv_cells import safe_row

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=ERRATA_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for r in rows:
        writer.writerow(safe_row({**r, **{k: "; ".join(r[k]) for k in ERRATA_LISTS}}))
    return buf.getvalue().encode("utf-8")


def errata_jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps({k: r.get(k) for k in ERRATA_COLUMNS}, ensure_ascii=False) + "\n"
                   for r in rows).encode("utf-8")
