"""Regenerate tests/data/malformed_llm_outputs.jsonl: real raw completions of SmolLM2-135M.

Ten judge prompts (five AutoAIS, Fig. 19; five side by side, Fig. 20) over real NarrativeQA test
questions on *The Tale of Tom Kitten*, each with a short retrieved context (the lexical index's
best sentences for the question), judged by ``local/smollm2-135m`` through lsqa.llm. The outputs
are what a weak model really writes: the parser tests read them as a golden corpus.

    .venv/bin/python tests/data/make_malformed_llm_outputs.py    # ~1 minute on two cores
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lsqa import llm  # noqa: E402
from lsqa.llm.embedded import respond  # noqa: E402
from lsqa.llm.embedded.sentence_index import index_for  # noqa: E402
from lsqa.prompting import templates as prompts  # noqa: E402
from lsqa.text.units import content_words  # noqa: E402

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "narrativeqa"
DOCUMENT = "2c5f448df18172babaac38806e1fb699a8baf65b"  # The Tale of Tom Kitten
MODEL = "local/smollm2-135m"
OUT = Path(__file__).with_name("malformed_llm_outputs.jsonl")


def retrieved(book: str, question: str, k: int = 4) -> str:
    index = index_for(book)
    best = sorted(i for i, _ in index.top(content_words(question), k))
    return "\n\n".join(index.sentence(i) for i in best)


def main() -> None:
    book = (DATA / "stories" / f"{DOCUMENT}.txt").read_text(encoding="utf-8")
    qas = [json.loads(line) for line in (DATA / "nqa_test_first3000_qaps.jsonl").open(encoding="utf-8")]
    qas = [q for q in qas if q["document_id"] == DOCUMENT][:5]
    autoais, side = prompts.load_prompt("nqa_autoais"), prompts.load_prompt("nqa_side_by_side")
    requests, meta = [], []
    for q in qas:
        context = retrieved(book, q["question"])
        extractive = respond("lsqa/extractive", prompts.messages(prompts.load_prompt("nqa_answer_retrieved_context"),
                                                                context=context, question=q["question"]))[0]
        for prompt, values in (
            (autoais, {"context": context, "question": q["question"], "answer": q["answer1"]}),
            (side, {"context": context, "question": q["question"], "system_answer_A": extractive,
                    "system_answer_B": q["answer1"]}),
        ):
            requests.append(llm.LLMRequest(MODEL, prompts.messages(prompt, **values), {"max_tokens": 48},
                                           prompt.id, str(prompt.version)))
            meta.append({"prompt_id": prompt.id, "prompt_version": prompt.version, "output": prompt.output,
                         "prefill": prompt.prefill, "document_id": DOCUMENT, "q_index": q["q_index"]})
    with tempfile.TemporaryDirectory() as tmp:
        results = llm.complete_many(Path(tmp) / "ws.duckdb", requests, max_concurrency=1, show_bar=True)
    with OUT.open("w", encoding="utf-8") as fh:
        for m, r in zip(meta, results, strict=False):
            r.raise_for_status()
            fh.write(json.dumps({"model": MODEL, "prompt_id": m["prompt_id"], "raw": r.text, **{
                k: v for k, v in m.items() if k != "prompt_id"}}, ensure_ascii=False) + "\n")
    print(f"wrote {len(results)} outputs to {OUT}")


if __name__ == "__main__":
    main()
