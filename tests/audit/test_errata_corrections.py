"""Errata that carry the right answer: a flag may propose a corrected reference, the errata file writes
it (``correction``, and every person's proposal under ``corrections``), and `lsqa ingest-narrativeqa
--errata FILE` reads it back as a corrected reference kept beside the original (reference_1/2 unchanged),
visible in `lsqa export` (questions' corrected_reference_1/2, reference_corrections) and `lsqa status`."""

from __future__ import annotations

import csv
import json
import shutil

from lsqa import audit, store
from lsqa.audit import reference_errors
from lsqa.corpus.ingest import read_errata
from lsqa.figures import analysis
from lsqa.store import corpus as corpus_store
from tests.support.bad_input import invoke


def _questions(ws, n: int) -> list[dict]:
    with store.connect(ws) as con:
        rows = con.execute("SELECT id, reference_1, reference_2 FROM questions WHERE reference_1 <> '' AND"
                           " reference_2 <> '' ORDER BY id LIMIT ?", [n]).fetchall()
    assert len(rows) == n
    return [{"id": r[0], "1": r[1], "2": r[2]} for r in rows]


def _corrections(ws) -> dict:
    with store.connect(ws) as con:
        return {(r["question_id"], r["reference"]): (r["text"], r["original"])
                for r in corpus_store.reference_corrections(con)}


def test_a_flag_with_a_correction_comes_back_beside_the_original(demo_workspace, tmp_path):
    ws = demo_workspace
    q = _questions(ws, 5)
    audit.flag(ws, "ana", q[0]["id"], "2", "wrong", "the book, ch. 2", correction="  The three Puddle-ducks  ")
    audit.flag(ws, "ben", q[0]["id"], "2", "wrong", correction="The three Puddle-ducks")   # the same: agreed
    audit.flag(ws, "cy", q[1]["id"], "1", "ambiguous", correction="-1 kittens, then none")  # formula-like in CSV
    audit.flag(ws, "dee", q[2]["id"], "1", "wrong")                                        # no proposal
    audit.flag(ws, "ana", q[3]["id"], "1", "wrong", correction="Moppet")                   # people differ:
    audit.flag(ws, "ben", q[3]["id"], "1", "wrong", correction="Mittens")                  # nobody chose yet
    # An undo of a flag restores the flag before it, its proposal included.
    audit.flag(ws, "eve", q[4]["id"], "2", "wrong", correction="first thought")
    audit.flag(ws, "eve", q[4]["id"], "2", "wrong", correction="second thought")
    audit.undo_last(ws, "eve", "flag")

    rows = {(r["question_id"], r["reference"]): r for r in reference_errors.errata(ws)}
    assert rows[(q[0]["id"], "2")]["correction"] == "The three Puddle-ducks"
    assert rows[(q[0]["id"], "2")]["corrections"] == ["ana: The three Puddle-ducks", "ben: The three Puddle-ducks"]
    assert rows[(q[1]["id"], "1")]["correction"] == "-1 kittens, then none"
    assert rows[(q[2]["id"], "1")]["correction"] == "" and rows[(q[2]["id"], "1")]["corrections"] == []
    assert rows[(q[3]["id"], "1")]["correction"] == ""
    assert sorted(rows[(q[3]["id"], "1")]["corrections"]) == ["ana: Moppet", "ben: Mittens"]
    assert rows[(q[4]["id"], "2")]["correction"] == "first thought"

    files = {"csv": tmp_path / "errata.csv", "jsonl": tmp_path / "errata.jsonl"}
    files["csv"].write_bytes(reference_errors.errata_csv(list(rows.values())))
    files["jsonl"].write_bytes(reference_errors.errata_jsonl(list(rows.values())))
    assert "'-1 kittens" in files["csv"].read_text()  # the CSV keeps spreadsheets from running it...
    expected = {(q[0]["id"], "2"): ("The three Puddle-ducks", q[0]["2"]),
                (q[1]["id"], "1"): ("-1 kittens, then none", q[1]["1"]),  # ...and reading it back removes the '
                (q[4]["id"], "2"): ("first thought", q[4]["2"])}
    copy = tmp_path / "copy.duckdb"
    shutil.copy(ws, copy)
    for fmt, target in (("csv", ws), ("jsonl", copy)):
        done = invoke("ingest-narrativeqa", "--errata", str(files[fmt]), "--workspace", str(target), "--json")
        assert done.exit_code == 0, done.output
        assert json.loads(done.stdout)["added"] == {"corrected references": 3}, fmt
        assert _corrections(target) == expected, fmt
        again = invoke("ingest-narrativeqa", "--errata", str(files[fmt]), "--workspace", str(target), "--json")
        assert json.loads(again.stdout)["added"] == {"corrected references": 0}, fmt  # nothing twice
    # The originals stay as they were, and the corrections show beside them in the export and the status.
    assert _questions(ws, 5) == q
    out = tmp_path / "export"
    written = analysis.export(ws, out, "csv")
    assert written["reference_corrections.csv"] == 3
    with open(out / "questions.csv", newline="", encoding="utf-8") as f:
        exported = {r["id"]: r for r in csv.DictReader(f)}
    assert exported[q[0]["id"]]["reference_2"] == q[0]["2"]
    assert exported[q[0]["id"]]["corrected_reference_2"] == "The three Puddle-ducks"
    assert exported[q[0]["id"]]["corrected_reference_1"] == ""
    assert exported[q[1]["id"]]["corrected_reference_1"] == "'-1 kittens, then none"  # the CSV rule, as any cell
    status = invoke("status", "--json", "--workspace", str(ws))
    assert json.loads(status.stdout)["reference_corrections"] == 3

    # A person settles the differing proposals in the file; reading it again adds that one.
    with open(files["csv"], newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    for r in table:
        if r["question_id"] == q[3]["id"]:
            r["correction"] = "Mittens"
    with open(files["csv"], "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    assert [r["text"] for r in read_errata(files["csv"]) if r["question_id"] == q[3]["id"]] == ["Mittens"]
    done = invoke("ingest-narrativeqa", "--errata", str(files["csv"]), "--workspace", str(ws), "--json")
    assert json.loads(done.stdout)["added"] == {"corrected references": 1}
    assert _corrections(ws)[(q[3]["id"], "1")] == ("Mittens", q[3]["1"])
