"""Benchmark: loading ``local/smollm2-135m`` (``lsqa.llm.embedded.smollm.load``) beside the plain
transformers load it replaced, each in a fresh process, alternating, so both see the same machine:

    .venv/bin/python bench/bench_smollm_load.py [--rounds 3]

"plain" makes the tokenizer and the model from the GGUF file with two ``from_pretrained`` calls,
as ``load`` did before 2026-12-02 (transformers parses the file four times); "lsqa" is ``load``
itself (one parse over plain slices, one tensor-name map: ``_gguf_made_once``). Each process also generates 12 tokens greedily from one
prompt: the two completions must be the same. Prints each load's seconds, the medians and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ONE_LOAD = r"""
import json, sys, time
import torch
from lsqa.llm.embedded import smollm

t = time.perf_counter()
if sys.argv[1] == "plain":
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    path = smollm.gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
else:
    model, tokenizer = smollm.load()
seconds = time.perf_counter() - t
ids = tokenizer.apply_chat_template([{"role": "user", "content": "Who is Tom Kitten?"}], add_generation_prompt=True,
                                    return_tensors="pt")
with torch.inference_mode():
    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=12, do_sample=False)
print(json.dumps({"seconds": seconds, "text": tokenizer.decode(out[0][ids.shape[1]:])}))
"""


def one(kind: str) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", ONE_LOAD, kind], capture_output=True, text=True, env=env,
                          timeout=600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    seconds: dict[str, list[float]] = {"plain": [], "lsqa": []}
    texts = set()
    for _ in range(args.rounds):
        for kind in seconds:
            result = one(kind)
            seconds[kind].append(result["seconds"])
            texts.add(result["text"])
    for kind, values in seconds.items():
        print(f"{kind:6} load: {', '.join(f'{v:.1f}' for v in values)} s   median {statistics.median(values):.1f} s")
    ratio = statistics.median(seconds["lsqa"]) / statistics.median(seconds["plain"])
    print(f"lsqa / plain: {ratio:.2f}")
    print(f"completions: {'the same' if len(texts) == 1 else 'DIFFERENT'} ({sorted(texts)!r})")
    return 0 if len(texts) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
