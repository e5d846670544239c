"""``lsqa rank`` / ``lsqa agreement`` (lsqa.cli.stats) and the loaders behind them (lsqa.store.importers.table)."""

from __future__ import annotations

import csv
import json
import math
import re

import pytest
from typer.testing import CliRunner

from lsqa.cli import app
from lsqa.cli.stats import agreement_table, format_agreement_table, format_rank_table, rank_table
from lsqa.errors import InputError
from lsqa.stats.ranking import count_comparisons, fit_bradley_terry
from lsqa.store.importers.table import load_comparisons, load_ratings, read_table
from lsqa.text import numbers
from tests.support.stats_helpers import load_llmbar, load_prd_human

runner = CliRunner()
SYSTEM_KEYS = ["system", "beta", "strength", "ci_low", "ci_high", "rank", "group", "estimable", "note",
               "rank_low", "rank_high", "tier"]


def _write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def prd_rows(shared_data):
    return load_prd_human(shared_data)


@pytest.fixture
def prd_csv(tmp_path, prd_rows):
    return _write_csv(tmp_path / "prd.csv", ["system_a", "system_b", "winner", "question_id"],
                      [[r["system_a"], r["system_b"], r["winner"], r["question_id"]] for r in prd_rows])


# --------------------------------------------------------------------------------------------
# lsqa rank
# --------------------------------------------------------------------------------------------


def test_rank_json_on_prd_human_ratings(prd_csv, prd_rows):
    res = runner.invoke(app, ["rank", "--input", str(prd_csv), "--bootstrap", "300", "--seed", "0", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert list(out) == ["systems", "win_probability", "n_comparisons", "n_excluded", "warnings", "adjacent"]
    assert out["n_comparisons"] == 7040 and out["n_excluded"] == 0
    fit = fit_bradley_terry(count_comparisons([r["system_a"] for r in prd_rows], [r["system_b"] for r in prd_rows],
                                              [r["winner"] for r in prd_rows]))
    ranks = [s["rank"] for s in out["systems"]]
    assert ranks == sorted(ranks) and ranks[0] == 1
    for s in out["systems"]:
        assert list(s) == SYSTEM_KEYS
        k = fit.index(s["system"])
        assert s["beta"] == pytest.approx(fit.beta[k], abs=1e-12)
        assert s["strength"] == pytest.approx(math.exp(s["beta"]), rel=1e-12)
        assert s["ci_low"] <= s["strength"] <= s["ci_high"]
        assert s["rank"] == fit.rank[k]
    wp = out["win_probability"]
    names = [s["system"] for s in out["systems"]]
    assert list(wp) == names
    for a in names:
        for b in names:
            if a != b:
                assert wp[a][b] + wp[b][a] == pytest.approx(1.0, abs=1e-12)
    # Seeded: the same command gives the same output.
    again = runner.invoke(app, ["rank", "--input", str(prd_csv), "--bootstrap", "300", "--seed", "0", "--json"])
    assert again.stdout == res.stdout


def test_rank_table_output_is_aligned_text(prd_csv, prd_rows):
    res = runner.invoke(app, ["rank", "--input", str(prd_csv), "--bootstrap", "100", "--by-question"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert re.split(r"\s{2,}", lines[0].strip())[:6] == ["tier", "system", "ranks (95%)", "rank", "beta", "strength"]
    assert "7,040 comparisons used, 0 excluded" in res.stdout
    # Every figure through the one formatter: no more than 3 significant digits, never exponent form.
    from tests.dashboard.test_report import unreadable_numbers

    assert unreadable_numbers(res.stdout) == []
    systems = {r["system_a"] for r in prd_rows} | {r["system_b"] for r in prd_rows}
    body = lines[1:1 + len(systems)]
    cells = [re.split(r"\s{2,}", line.strip()) for line in body]
    assert [c[3] for c in cells] == [str(k) for k in range(1, len(systems) + 1)]
    assert {c[1] for c in cells} == systems
    tiers = [int(c[0]) for c in cells]
    assert tiers[0] == 1 and tiers == sorted(tiers)  # tiers first, in rank order
    assert len({len(line) for line in body}) == 1  # aligned columns: same width for all rows


def test_rank_jsonl_with_none_and_mixed_case(tmp_path):
    rows = [{"system_a": "x", "system_b": "y", "winner": w} for w in ["a", "B", "NONE", "Tie", "A", "none"]]
    rows += [{"system_a": "y", "system_b": "z", "winner": w} for w in ["A", "b", "a"]]
    rows += [{"system_a": "z", "system_b": "x", "winner": w} for w in ["A", "b"]]
    path = _write_jsonl(tmp_path / "c.jsonl", rows)
    res = runner.invoke(app, ["rank", "-i", str(path), "--json", "--bootstrap", "50"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["n_excluded"] == 2 and out["n_comparisons"] == 9


def test_rank_anchor(prd_csv):
    res = runner.invoke(app, ["rank", "--input", str(prd_csv), "--anchor", "vicuna-13b", "--bootstrap", "50", "--json"])
    out = json.loads(res.stdout)
    vic = next(s for s in out["systems"] if s["system"] == "vicuna-13b")
    assert vic["beta"] == 0.0 and vic["strength"] == 1.0 and vic["ci_low"] == vic["ci_high"] == 1.0


def test_rank_without_bootstrap_has_null_cis(prd_rows):
    out = rank_table(prd_rows, bootstrap=0)
    assert all(s["ci_low"] is None and s["ci_high"] is None for s in out["systems"])
    assert "—" in format_rank_table(out)


def test_rank_table_accepts_rows_from_anywhere():
    rows = [dict(system_a="p", system_b="q", winner="A")] * 3 + [dict(system_a="q", system_b="p", winner="A")]
    out = rank_table(rows, bootstrap=20)
    assert [s["system"] for s in out["systems"]] == ["p", "q"]
    assert out["win_probability"]["p"]["q"] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="question_id"):
        rank_table(rows, by_question=True)


# --------------------------------------------------------------------------------------------
# Input errors: message on stderr, exit code 2, no traceback
# --------------------------------------------------------------------------------------------


def _bad_inputs(tmp_path):
    (tmp_path / "empty.csv").write_text("\n  \n", encoding="utf-8")
    (tmp_path / "latin1.csv").write_bytes("system_a,system_b,winner\nx,y,A\nMisérables,y,B\n".encode("latin-1"))
    _write_csv(tmp_path / "nocol.csv", ["system_a", "system_b", "result"], [["x", "y", "A"]])
    _write_csv(tmp_path / "badwin.csv", ["system_a", "system_b", "winner"], [["x", "y", "A"], ["x", "y", "C"]])
    (tmp_path / "badjson.jsonl").write_text('{"system_a": "x", "system_b": "y", "winner": "A"}\n{"system_a": \n',
                                            encoding="utf-8")
    _write_jsonl(tmp_path / "missing.jsonl", [{"system_a": "x", "system_b": "y", "winner": "A"},
                                              {"system_a": "x", "winner": "B"}])
    _write_csv(tmp_path / "self.csv", ["system_a", "system_b", "winner"], [["x", "x", "A"]])
    _write_csv(tmp_path / "blank.csv", ["system_a", "system_b", "winner"], [["x", "", "A"]])
    _write_csv(tmp_path / "nonly.csv", ["system_a", "system_b", "winner"], [["x", "y", "none"]])
    return [
        ("empty.csv", "empty.csv: file is empty"),
        ("latin1.csv", "latin1.csv:3: not valid UTF-8"),
        ("nocol.csv", "nocol.csv:1: missing column(s) winner"),
        ("badwin.csv", "badwin.csv:3: unknown winner value 'C'"),
        ("badjson.jsonl", "badjson.jsonl:2: invalid JSON"),
        ("missing.jsonl", "missing.jsonl:2: missing column system_b"),
        ("self.csv", "self.csv:2: system_a and system_b are both 'x'"),
        ("blank.csv", "blank.csv:2: empty value in column system_b"),
        ("nonly.csv", "nothing to rank"),
        ("does-not-exist.csv", "does-not-exist.csv: file not found"),
    ]


def test_rank_input_errors_exit_2_with_file_and_line(tmp_path):
    for name, expected in _bad_inputs(tmp_path):
        res = runner.invoke(app, ["rank", "--input", str(tmp_path / name), "--bootstrap", "10"])
        assert res.exit_code == 2, (name, res.output)
        assert expected in res.stderr, (name, res.stderr)
        assert "Traceback" not in res.output and res.stdout == ""


def test_rank_by_question_without_ids_is_an_input_error(tmp_path):
    path = _write_csv(tmp_path / "c.csv", ["system_a", "system_b", "winner"], [["x", "y", "A"], ["y", "x", "A"]])
    res = runner.invoke(app, ["rank", "--input", str(path), "--by-question"])
    assert res.exit_code == 2 and "question_id" in res.stderr


def test_unknown_anchor_is_an_input_error(prd_csv):
    res = runner.invoke(app, ["rank", "--input", str(prd_csv), "--anchor", "nobody"])
    assert res.exit_code == 2 and "anchor system 'nobody'" in res.stderr


# --------------------------------------------------------------------------------------------
# lsqa agreement
# --------------------------------------------------------------------------------------------


def _llmbar_long(shared_data, tmp_path, dataset="MT-Bench", judge="GPT-4"):
    items, stats = load_llmbar(shared_data, dataset, judge)
    rows = []
    for k, it in enumerate(items):
        res = it["results"][-1]
        rows.append([f"item{k}", "original_order", res["swap = False"]["winner"]])
        rows.append([f"item{k}", "swapped_order", res["swap = True"]["winner"]])
        rows.append([f"item{k}", "gold", str(it["label"])])
    return _write_csv(tmp_path / "long.csv", ["item_id", "rater", "label"], rows), stats


def test_agreement_json_reproduces_llmbar_kappa(shared_data, tmp_path):
    path, stats = _llmbar_long(shared_data, tmp_path)
    res = runner.invoke(app, ["agreement", "--input", str(path), "--rater-a", "original_order",
                              "--rater-b", "swapped_order", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert list(out) == ["n", "agreement", "kappa", "kappa_ci", "labels", "confusion"]
    assert out["n"] == 200 and out["labels"] == ["1", "2"]
    assert out["kappa"] == stats["kappa_agreement"]
    assert f"{round(out['agreement'] * 200)} / 200 = {out['agreement'] * 100}%" == stats["equal"]
    assert sum(map(sum, out["confusion"])) == 200
    assert out["kappa_ci"][0] < out["kappa"] < out["kappa_ci"][1]


def test_agreement_text_output(shared_data, tmp_path):
    path, stats = _llmbar_long(shared_data, tmp_path, "FairEval", "ChatGPT")
    res = runner.invoke(app, ["agreement", "-i", str(path), "--rater-a", "gold", "--rater-b", "original_order",
                              "--labels", "2,1"])
    assert res.exit_code == 0, res.output
    # Agreement of gold and the original order is the authors' correct_False ("44 / 66 = 66.66…%").
    k, n = map(int, re.fullmatch(r"(\d+) / (\d+) = .+%", stats["correct_False"]).groups())
    assert f"{n} items rated by both" in res.stdout and f"agreement      {numbers.percent(k / n)}" in res.stdout
    assert "confusion (rows = gold, columns = original_order)" in res.stdout


def test_agreement_table_direct_and_partial_overlap():
    rows = [dict(item_id=i, rater=r, label=lab) for i, r, lab in [
        ("1", "x", "yes"), ("1", "y", "yes"), ("2", "x", "no"), ("2", "y", "yes"), ("3", "x", "no"),
        ("4", "y", "no"), ("5", "x", "no"), ("5", "y", "no")]]
    out = agreement_table(rows, "x", "y", bootstrap=200)
    assert out["n"] == 3 and out["labels"] == ["yes", "no"] and out["confusion"] == [[1, 0], [1, 1]]
    assert out["agreement"] == pytest.approx(2 / 3)
    text = format_agreement_table(out, "x", "y")
    assert "3 items rated by both" in text


def test_agreement_undefined_kappa_is_null():
    rows = [dict(item_id=str(i), rater=r, label="A") for i in range(3) for r in ("x", "y")]
    out = agreement_table(rows, "x", "y", bootstrap=50)
    assert out["kappa"] is None and out["kappa_ci"] is None and out["agreement"] == 1.0
    json.dumps(out, allow_nan=False)


def test_agreement_input_errors(tmp_path):
    dup = _write_csv(tmp_path / "dup.csv", ["item_id", "rater", "label"],
                     [["1", "x", "A"], ["1", "y", "B"], ["1", "x", "B"]])
    res = runner.invoke(app, ["agreement", "--input", str(dup), "--rater-a", "x", "--rater-b", "y"])
    assert res.exit_code == 2 and "dup.csv:4: rater 'x' labelled item '1' twice (first on line 2)" in res.stderr
    ok = _write_csv(tmp_path / "ok.csv", ["item_id", "rater", "label"], [["1", "x", "A"], ["1", "y", "B"]])
    res = runner.invoke(app, ["agreement", "--input", str(ok), "--rater-a", "x", "--rater-b", "z"])
    assert res.exit_code == 2 and "rater 'z' not found" in res.stderr
    nocol = _write_csv(tmp_path / "nocol.csv", ["item", "rater", "label"], [["1", "x", "A"]])
    res = runner.invoke(app, ["agreement", "--input", str(nocol), "--rater-a", "x", "--rater-b", "y"])
    assert res.exit_code == 2 and "nocol.csv:1: missing column(s) item_id" in res.stderr


# --------------------------------------------------------------------------------------------
# lsqa.store.importers.table
# --------------------------------------------------------------------------------------------


def test_read_table_formats_and_frame(tmp_path):
    csv_path = tmp_path / "t.csv"
    csv_path.write_text("\ufeffSystem_A , system_b,Winner\n\nx, y ,a\n\"p,q\",y,B\n", encoding="utf-8")
    table = load_comparisons(csv_path)
    assert table.columns == ["system_a", "system_b", "winner"]
    assert table.rows[0] == {"system_a": "x", "system_b": "y", "winner": "A"} and table.lines == [3, 4]
    assert table.rows[1]["system_a"] == "p,q"
    frame = table.to_frame()
    assert list(frame["winner"]) == ["A", "B"] and list(frame["line"]) == [3, 4]

    tsv = tmp_path / "t.tsv"
    tsv.write_text("item_id\trater\tlabel\n1\tx\tyes\n", encoding="utf-8")
    assert load_ratings(tsv).rows == [{"item_id": "1", "rater": "x", "label": "yes"}]

    arr = tmp_path / "t.json"
    arr.write_text(json.dumps([{"item_id": 1, "rater": "x", "label": 2}]), encoding="utf-8")
    assert load_ratings(arr).rows == [{"item_id": "1", "rater": "x", "label": "2"}]

    sniffed = tmp_path / "rows.txt"
    sniffed.write_text('{"a": 1}\n{"a": 2, "b": 3}\n', encoding="utf-8")
    t = read_table(sniffed)
    assert t.columns == ["a", "b"] and t.lines == [1, 2]


def test_read_table_structural_errors(tmp_path):
    ragged = tmp_path / "r.csv"
    ragged.write_text("a,b\n1,2\n1,2,3\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_table(ragged)
    assert err.value.line == 3 and "3 fields" in err.value.problem
    header_only = tmp_path / "h.csv"
    header_only.write_text("system_a,system_b,winner\n", encoding="utf-8")
    with pytest.raises(InputError, match="no data rows"):
        load_comparisons(header_only)
    not_obj = tmp_path / "n.jsonl"
    not_obj.write_text('{"a": 1}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"n.jsonl:2: expected a JSON object"):
        read_table(not_obj)


def test_every_command_reports_errors_the_same_way(tmp_path):
    """One friendly_errors for every command: 'error: ' + one line on stderr, exit 2, no traceback."""
    ok = _write_csv(tmp_path / "ok.csv", ["item_id", "rater", "label"], [["1", "x", "A"], ["1", "y", "B"]])
    results = [
        runner.invoke(app, ["agreement", "--input", str(ok), "--rater-a", "x", "--rater-b", "x"]),
        runner.invoke(app, ["rank", "--workspace", str(tmp_path / "w.duckdb")]),
        runner.invoke(app, ["rank", "--input", str(ok), "--tie-model", "elo"]),
        runner.invoke(app, ["entities", "No Such Book", "--workspace", str(tmp_path / "w.duckdb")]),
        runner.invoke(app, ["import-answers", str(tmp_path / "missing.csv"), "--workspace", str(tmp_path / "w.duckdb")]),
    ]
    for res in results:
        assert res.exit_code == 2, res.output
        assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
        assert "Traceback" not in res.output
    assert "the two raters are both 'x'" in results[0].stderr
    assert "--tie-model: unknown tie model 'elo' (use half or davidson)" in results[2].stderr


def test_library_messages_do_not_name_command_line_flags():
    from lsqa.errors import NoVerdicts

    with pytest.raises(ValueError, match="resampling by question needs a question_id") as info:
        rank_table([{"system_a": "x", "system_b": "y", "winner": "A"}], by_question=True)
    assert "--" not in str(info.value)
    with pytest.raises(ValueError, match="two raters are both") as info:
        agreement_table([{"item_id": "1", "rater": "x", "label": "A"}], "x", "x")
    assert "--" not in str(info.value)
    with pytest.raises(NoVerdicts, match="no item in common"):
        agreement_table([{"item_id": "1", "rater": "x", "label": "A"}, {"item_id": "2", "rater": "y", "label": "A"}],
                        "x", "y")
    with pytest.raises(NoVerdicts, match="nothing to rank"):
        rank_table([{"system_a": "x", "system_b": "y", "winner": "none"}])
