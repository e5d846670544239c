"""Ingestion of real books and NarrativeQA: counts, exact offsets, both references, idempotence,
and malformed inputs that write nothing."""

import json
import shutil

import pytest

from lsqa import store
from lsqa.corpus import ingest
from lsqa.corpus.ingest import ingest_book, ingest_narrativeqa
from lsqa.errors import InputError
from lsqa.figures import analysis
from lsqa.store import runs
from lsqa.study import imports
from lsqa.study.imports import import_answers, import_judgments
from tests.conftest import TEST_DATA

SLICE = TEST_DATA / "narrativeqa_slice"
TOM_KITTEN = "2c5f448df18172babaac38806e1fb699a8baf65b"


def counts(ws):
    with store.connect(ws) as con:
        return runs.table_counts(con)


def test_narrativeqa_slice(workspace):
    s = ingest.ingest_narrativeqa(workspace, SLICE)
    n_questions = sum(1 for line in (SLICE / "nqa_test_slice_qaps.jsonl").read_text().splitlines() if line.strip())
    with store.connect(workspace) as con:
        n_passages = con.execute("SELECT count(*) FROM passages").fetchone()[0]
    assert n_questions == 89 and n_passages > 0
    assert s.added == {"documents": 3, "passages": n_passages, "questions": n_questions}
    with store.connect(workspace) as con:
        doc = con.execute("SELECT full_text, clean_start, clean_end, title, summary FROM documents WHERE id = ?",
                          [TOM_KITTEN]).fetchone()
        passages = con.execute("SELECT char_start, char_end, text FROM passages WHERE document_id = ? ORDER BY ordinal",
                               [TOM_KITTEN]).fetchall()
        q = con.execute("SELECT text, reference_1, reference_2 FROM questions WHERE id = ?",
                        [f"nqa:{TOM_KITTEN}:0"]).fetchone()
        summary_only = con.execute("SELECT count(*) FROM documents WHERE full_text IS NULL").fetchone()[0]
    text, start, end, title, summary = doc
    assert title == "The Tale of Tom Kitten" and summary
    story = text[start:end]
    # NarrativeQA's own story_start marker, and the Gutenberg footer is gone.
    assert story.startswith("Produced by Robert")
    assert "End of Project Gutenberg" not in story and story.rstrip().endswith("ever since.")
    assert passages and all(text[a:b] == t for a, b, t in passages)
    assert passages[0][0] == start and passages[-1][1] == end
    first = next(r for r in map(json.loads, (SLICE / "nqa_test_slice_qaps.jsonl").read_text().splitlines())
                 if r["document_id"] == TOM_KITTEN and r["q_index"] == 0)
    assert q == (first["question"].strip(), first["answer1"].strip(), first["answer2"].strip())
    assert summary_only == 1


def test_reimport_adds_nothing(workspace):
    ingest.ingest_narrativeqa(workspace, SLICE)
    before = counts(workspace)
    again = ingest.ingest_narrativeqa(workspace, SLICE)
    assert counts(workspace) == before
    assert again.added.get("questions") == 0 and again.skipped["questions"] == 89


def test_book_ingest_offsets_and_idempotence(workspace, shared_data):
    path = shared_data / "narrativeqa" / "stories" / "09333c7d604bd412e6aef5d3e56b046ed301c5e5.txt"
    s = ingest.ingest_book(workspace, path)
    assert s.added["documents"] == 1
    with store.connect(workspace) as con:
        title, text, start, end = con.execute("SELECT title, full_text, clean_start, clean_end FROM documents").fetchone()
        rows = con.execute("SELECT char_start, char_end, n_tokens, text FROM passages ORDER BY ordinal").fetchall()
    assert title == "The Adventure of the Dying Detective"  # from the Gutenberg 'Title:' line
    assert "*** START OF" in text[:start] and "*** END OF" in text[end:]
    assert all(text[a:b] == t and n > 0 for a, b, n, t in rows)
    assert all(rows[i][1] <= rows[i + 1][0] for i in range(len(rows) - 1))  # book order, no overlap
    before = counts(workspace)
    again = ingest.ingest_book(workspace, path)
    assert counts(workspace) == before and again.skipped == {"documents": 1}


def _nqa_copy(tmp_path):
    folder = tmp_path / "nqa"
    shutil.copytree(SLICE, folder)
    return folder


@pytest.mark.parametrize("damage, message", [
    (lambda d: (d / "nqa_test_slice_qaps.jsonl").write_text('{"document_id": "x"}\n'), "missing column"),
    (lambda d: (d / "nqa_test_slice_qaps.jsonl").write_text(
        (d / "nqa_test_slice_qaps.jsonl").read_text() + '{"document_id": "nope", "question": "q", "answer1": "a",'
        ' "answer2": "b", "set": "test"}\n'), "unknown document_id"),
    (lambda d: (d / "nqa_test_slice_qaps.jsonl").write_text(
        (d / "nqa_test_slice_qaps.jsonl").read_text() + "{not json\n"), "invalid JSON"),
    (lambda d: (d / "stories" / f"{TOM_KITTEN}.txt").write_bytes(b"caf\xe9 au lait\n" * 3), "not valid UTF-8"),
    (lambda d: (d / "documents.csv").write_text(""), "empty"),
])
def test_malformed_narrativeqa_writes_nothing(workspace, tmp_path, damage, message):
    ingest.ingest_book(workspace, SLICE / "stories" / "2dd593d19e201c9cf4edb0703cad0f525c1038a2.txt")
    before = counts(workspace)
    folder = _nqa_copy(tmp_path)
    damage(folder)
    with pytest.raises(InputError, match=message) as info:
        ingest.ingest_narrativeqa(workspace, folder)
    assert str(folder) in str(info.value)
    assert counts(workspace) == before


def test_error_names_the_line(workspace, tmp_path):
    folder = _nqa_copy(tmp_path)
    qaps = folder / "nqa_test_slice_qaps.jsonl"
    lines = qaps.read_text().splitlines()
    lines[4] = "{broken"
    qaps.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        ingest.ingest_narrativeqa(workspace, folder)
    assert info.value.line == 5 and f"{qaps}:5" in str(info.value)


def test_huge_and_empty_books_are_refused(workspace, tmp_path, monkeypatch):
    from lsqa.text import book as book_text

    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InputError, match="empty"):
        ingest.ingest_book(workspace, empty)
    big = tmp_path / "big.txt"
    big.write_text("word " * 1000)
    monkeypatch.setattr(book_text, "MAX_BOOK_BYTES", 100)  # a 2 GB file is refused the same way, by size
    with pytest.raises(InputError, match="limit"):
        ingest.ingest_book(workspace, big)
    assert counts(workspace)["documents"] == 0


def _answers_file(tmp_path, rows, suffix=".jsonl"):
    path = tmp_path / f"answers{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        import csv

        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return path


def test_import_answers_and_judgments(workspace, tmp_path):
    ingest.ingest_narrativeqa(workspace, SLICE)
    q0, q1 = f"nqa:{TOM_KITTEN}:0", f"nqa:{TOM_KITTEN}:1"
    answers = _answers_file(tmp_path, [
        {"question_id": q0, "system": "gpt-x", "answer": "Tom Kitten.", "temperature": "0"},
        {"question_id": q1, "system": "gpt-x", "answer": "In the garden."},
    ], ".csv")
    s = imports.import_answers(workspace, answers)
    assert s.added == {"systems": 1, "answers": 2}
    assert imports.import_answers(workspace, answers).added["answers"] == 0
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("".join(json.dumps(r) + "\n" for r in [
        {"item_id": q0, "rater": "alice", "kind": "pairwise", "system_a": "gpt-x", "system_b": "ref2",
         "label": "A is better", "confidence": 0.9},
        {"item_id": q1, "rater": "alice", "kind": "absolute", "system_a": "gpt-x", "label": "no"},
    ]))
    assert imports.import_judgments(workspace, verdicts).added == {"judgments": 2}
    with store.connect(workspace) as con:
        rows = con.execute("SELECT label, raw_label, extra FROM judgments ORDER BY kind").fetchall()
        extra = con.execute("SELECT extra FROM answers WHERE question_id = ?", [q0]).fetchone()[0]
    assert [r[0] for r in rows] == ["no", "A"] and rows[1][1] == "A is better"
    assert json.loads(rows[1][2])["confidence"] == 0.9 and json.loads(extra) == {"temperature": "0"}


@pytest.mark.parametrize("rows, message", [
    ([{"question_id": "nqa:unknown:0", "system": "s", "answer": "a"}], "unknown question id"),
    ([{"question_id": f"nqa:{TOM_KITTEN}:0", "answer": "a"}], "missing value for system"),
])
def test_bad_answer_files_write_nothing(workspace, tmp_path, rows, message):
    ingest.ingest_narrativeqa(workspace, SLICE)
    before = counts(workspace)
    with pytest.raises(InputError, match=message):
        imports.import_answers(workspace, _answers_file(tmp_path, rows))
    assert counts(workspace) == before


def test_bad_label_names_line(workspace, tmp_path):
    ingest.ingest_narrativeqa(workspace, SLICE)
    path = tmp_path / "v.csv"
    path.write_text(f"question_id,rater,kind,system_a,system_b,label\nnqa:{TOM_KITTEN}:0,bob,pairwise,x,y,maybe\n")
    with pytest.raises(InputError, match=r"v.csv:2: label 'maybe'"):
        imports.import_judgments(workspace, path)


def test_passages_keep_a_last_paragraph_followed_by_a_single_newline():
    from lsqa.text.book import split_passages

    assert [p.text for p in split_passages("A.\n\nB.\n", target_tokens=1)] == ["A.", "B."]
    assert [p.text for p in split_passages("A.  \n\nB. x \n  ", target_tokens=2)] == ["A.", "B. x"]


def test_published_csv_layout(workspace, tmp_path):
    """NarrativeQA's repository layout: qaps.csv and third_party/wikipedia/summaries.csv."""
    import csv

    folder = tmp_path / "narrativeqa"
    (folder / "third_party" / "wikipedia").mkdir(parents=True)
    shutil.copy(SLICE / "documents.csv", folder / "documents.csv")
    shutil.copytree(SLICE / "stories", folder / "stories")
    qas = [json.loads(line) for line in (SLICE / "nqa_test_slice_qaps.jsonl").read_text().splitlines()]
    with (folder / "qaps.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["document_id", "set", "question", "answer1", "answer2", "question_tokenized",
                    "answer1_tokenized", "answer2_tokenized"])
        for q in qas:
            w.writerow([q["document_id"], "test", q["question"], q["answer1"], q["answer2"], "", "", ""])
    summaries = [json.loads(line) for line in (SLICE / "nqa_test_slice_summaries.jsonl").read_text().splitlines()]
    with (folder / "third_party" / "wikipedia" / "summaries.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["document_id", "set", "summary", "summary_tokenized"])
        for s in summaries:
            w.writerow([s["document_id"], "test", s["summary"], ""])
    result = ingest.ingest_narrativeqa(workspace, folder)
    assert result.added["questions"] == len(qas) and result.added["documents"] == 3
    with store.connect(workspace) as con:
        q = con.execute("SELECT text, reference_1, reference_2 FROM questions WHERE id = ?",
                        [f"nqa:{TOM_KITTEN}:0"]).fetchone()
        n_summaries = con.execute("SELECT count(*) FROM documents WHERE summary <> ''").fetchone()[0]
    first = next(x for x in qas if x["document_id"] == TOM_KITTEN)
    assert q == (first["question"].strip(), first["answer1"].strip(), first["answer2"].strip())
    assert n_summaries == 3
    assert ingest.ingest_narrativeqa(workspace, folder, set_name="valid").added.get("questions", 0) == 0


TOM_KITTEN_STORY = TEST_DATA / "narrativeqa_slice" / "stories" / f"{TOM_KITTEN}.txt"


def _orphans(ws) -> tuple[int, int]:
    with store.connect(ws) as con:
        return con.execute("""SELECT (SELECT count(*) FROM passages WHERE document_id NOT IN (SELECT id FROM documents)),
                                     (SELECT count(*) FROM questions WHERE document_id NOT IN (SELECT id FROM documents))
                           """).fetchone()


def test_conflicting_rows_in_one_import_file_are_an_error(demo_workspace, tmp_path):
    qid = f"nqa:{TOM_KITTEN}:9"
    answers = tmp_path / "answers.csv"
    answers.write_text(f"question_id,system,answer\n{qid},imp,first\n{qid},imp,second\n")
    with pytest.raises(InputError, match="repeats line 2") as err:
        import_answers(demo_workspace, answers)
    assert err.value.line == 3
    verdicts = tmp_path / "verdicts.csv"
    verdicts.write_text("question_id,rater,kind,system_a,system_b,label\n"
                        f"{qid},p,pairwise,x,y,A\n{qid},p,pairwise,x,y,A is better\n{qid},p,pairwise,x,y,B\n")
    with pytest.raises(InputError, match="repeats line 2") as err:
        import_judgments(demo_workspace, verdicts)
    assert err.value.line == 4
    with store.connect(demo_workspace) as con:
        assert con.execute("SELECT count(*) FROM answers WHERE system_name = 'imp'").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM judgments WHERE judge = 'p'").fetchone()[0] == 0
    # The same row twice is harmless.
    answers.write_text(f"question_id,system,answer\n{qid},imp,first\n{qid},imp,first\n")
    assert import_answers(demo_workspace, answers).added["answers"] == 1


def test_narrativeqa_story_already_stored_as_a_book_leaves_no_orphans(workspace):
    ingest_book(workspace, TOM_KITTEN_STORY)
    summary = ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    assert _orphans(workspace) == (0, 0)  # before: 6 passages and 30 questions of a document never stored
    assert any("already in the workspace as book-" in n for n in summary.notes)
    with store.connect(workspace) as con:
        doc = con.execute("SELECT full_text IS NULL FROM documents WHERE id = ?", [TOM_KITTEN]).fetchone()
    assert doc == (True,)
    again = ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    assert again.added["questions"] == 0 and _orphans(workspace) == (0, 0)


def test_story_filled_in_later_when_its_text_is_already_a_book(workspace, tmp_path):
    """NarrativeQA without stories, then the story as a plain book, then NarrativeQA with stories:
    before, the fill-in hit the unique content_sha1 and the import died with a ConstraintException."""
    bare = tmp_path / "nqa"
    bare.mkdir()
    for f in (TEST_DATA / "narrativeqa_slice").iterdir():
        if f.is_file():
            shutil.copy(f, bare / f.name)
    ingest_narrativeqa(workspace, bare)
    ingest_book(workspace, TOM_KITTEN_STORY)
    summary = ingest_narrativeqa(workspace, TEST_DATA / "narrativeqa_slice")
    assert summary.added.get("story texts filled in") == 1  # Jeremy Fisher's; Tom Kitten's is the book's
    assert _orphans(workspace) == (0, 0)


def test_a_bad_q_index_names_the_file_and_line(workspace, tmp_path):
    """Before: a raw ValueError traceback from int()."""
    import json

    folder = tmp_path / "nqa"
    folder.mkdir()
    shutil.copy(TEST_DATA / "narrativeqa_slice" / "documents.csv", folder / "documents.csv")
    lines = (TEST_DATA / "narrativeqa_slice" / "nqa_test_slice_qaps.jsonl").read_text().splitlines()[:3]
    recs = [json.loads(line) for line in lines]
    recs[2]["q_index"] = "third"
    (folder / "test_qaps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(InputError, match="q_index must be a whole number") as err:
        ingest_narrativeqa(workspace, folder)
    assert err.value.line == 3 and err.value.path.endswith("test_qaps.jsonl")


def test_an_imported_similarity_score_becomes_a_score_and_a_yes_no_label(demo_workspace, tmp_path):
    """Before: the label was the number itself ('0.83'), which accuracy counted as not correct and
    agreement as a third category; the score column stayed empty."""
    q = f"nqa:{TOM_KITTEN}"
    path = tmp_path / "similarity.csv"
    path.write_text("question_id,rater,kind,system_a,label\n"
                    f"{q}:9,sim-import,similarity,extractive-fullbook,0.83\n"
                    f"{q}:8,sim-import,similarity,extractive-fullbook,0.12\n"
                    f"{q}:7,sim-import,similarity,extractive-fullbook,yes\n")
    import_judgments(demo_workspace, path)
    with store.connect(demo_workspace) as con:
        rows = con.execute("SELECT label, raw_label, score FROM judgments WHERE judge = 'sim-import'"
                           " ORDER BY question_id DESC").fetchall()
    assert rows == [("yes", "0.83", 0.83), ("no", "0.12", 0.12), ("yes", "yes", None)]
    acc = analysis.accuracy(demo_workspace, "sim-import")
    assert acc[0]["n"] == 3 and acc[0]["correct"] == 2
