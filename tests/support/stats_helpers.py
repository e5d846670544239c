"""Helpers for the statistics tests (issue 3): where the shared real data is, and readers for the
two judgment sources used as references (PRD Vicuna80, LLMBar).

The shared data dir is ``$LSQA_DATA_DIR``, else ``<project>/../shared/data``; nothing is downloaded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# PRD Vicuna80 human ratings: file answer_{m1}-vs-answer_{m2}-human-reviewer_threeclass.jsonl holds
# ratings of m1's answer shown first ("Assistant 1") against m2's; `score` 1 / 2 / 3 is the number
# the rater output under the three-class prompt (prompts/vicuna_prompt_threeclass.jsonl): "1 or 2
# respectively, or choose 3 if the two assistants are equivalent".
PRD_HUMAN = Path("judgments/prd/data/vicuna80/ratings-human")
PRD_PROMPT = Path("judgments/prd/data/vicuna80/prompts/vicuna_prompt_threeclass.jsonl")
PRD_FILE = re.compile(r"answer_(?P<a>.+)-vs-answer_(?P<b>.+)-human-reviewer_threeclass\.jsonl")
PRD_SCORE = {1: "A", 2: "B", 3: "tie"}

LLMBAR = Path("judgments/llmbar")
LLMBAR_SETS = ("MT-Bench", "FairEval")
LLMBAR_JUDGES = ("GPT-4", "ChatGPT")


def load_prd_human(data_dir: Path) -> list[dict]:
    """All PRD Vicuna80 human pairwise ratings as rows system_a, system_b, winner, question_id."""
    rows = []
    files = sorted((data_dir / PRD_HUMAN).glob("*.jsonl"))
    assert files, f"no PRD human rating files under {data_dir / PRD_HUMAN}"
    for f in files:
        match = PRD_FILE.fullmatch(f.name)
        assert match, f"unexpected PRD file name {f.name}"
        for line in f.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            rows.append(dict(system_a=match["a"], system_b=match["b"], winner=PRD_SCORE[rec["score"]],
                             question_id=str(rec["question_id"])))
    return rows


def load_llmbar(data_dir: Path, dataset: str, judge: str) -> tuple[list[dict], dict]:
    """LLMBar ``result.json`` items (Vanilla_NoRules) and the authors' ``statistics.json``."""
    base = data_dir / LLMBAR / dataset
    items = json.loads((base / judge / "Vanilla_NoRules" / "result.json").read_text(encoding="utf-8"))
    stats_file = base / "evaluators" / judge / "Vanilla_NoRules" / "statistics.json"
    stats = json.loads(stats_file.read_text(encoding="utf-8"))
    return items, stats
