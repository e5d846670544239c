"""The embedded offline models, registered into litellm as custom providers.

They go through exactly the same path as a real model (``lsqa.llm`` → ``litellm.acompletion`` →
cache, retries, cost), so that everything can run, be tested and be demonstrated without a key
or a network:

=========================== ===============================================================
``lsqa/extractive``         answers from the prompt's context with BM25-picked sentences
``lsqa/lexical-judge``      AutoAIS, side-by-side and ground-truth judge prompts, by word overlap
``lsqa/template-questions`` question-generation prompt, from templates and mention sentences
``local/smollm2-135m``      the real SmolLM2-135M-Instruct (GGUF, CPU): a genuinely weak LLM
=========================== ===============================================================

The first three read the rendered prompt by its labels (prompts/README.md) and are deterministic
and fast at any context length. Token counts are estimates (four characters per token) except for
SmolLM2, whose tokenizer counts them exactly; the cost is 0.0: they are free and local.

This package never imports litellm itself (``lsqa.llm`` is the only module that does):
:func:`register` receives the configured litellm module.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from lsqa.llm.embedded import extractive, lexical_judge, template_questions
from lsqa.llm.embedded.prompt_reading import AUTOAIS, QUESTIONS, REFERENCE_CHECK, SIDE_BY_SIDE, YES_NO, read_prompt
from lsqa.text.units import approx_tokens

PROVIDERS = ("lsqa", "local")
EMBEDDED_MODELS = {
    "lsqa/extractive": "answers with the context sentences that best match the question (BM25)",
    "lsqa/lexical-judge": "judges by word overlap with the context or the ground truth",
    "lsqa/template-questions": "writes template questions about an entity from the sentences that mention it",
    "local/smollm2-135m": "SmolLM2-135M-Instruct on the CPU: a real, weak language model",
}


class PromptNotUnderstood(ValueError):
    """The prompt lacks what this embedded model reads (a bad request, not a transient failure)."""


Reply = tuple[str, int, int]  # completion text, prompt tokens, completion tokens


def _approx(messages: list[dict], text: str) -> Reply:
    prompt_chars = sum(len(str(m.get("content") or "")) for m in messages)
    return text, (prompt_chars + 3) // 4, approx_tokens(text)


def _extractive(messages: list[dict], params: dict) -> Reply:
    return _approx(messages, extractive.answer(read_prompt(messages)))


def _lexical_judge(messages: list[dict], params: dict) -> Reply:
    parts = read_prompt(messages)
    if parts.output not in (AUTOAIS, SIDE_BY_SIDE, YES_NO, REFERENCE_CHECK):
        raise PromptNotUnderstood(
            "lsqa/lexical-judge answers judge prompts only (AutoAIS, side by side, yes/no, reference check); this "
            "prompt names none of 'answer_is_entailed_by_context', 'system is better', 'Respond with only yes or "
            "no' or 'reference_answers_question'"
        )
    return _approx(messages, lexical_judge.judge(parts))


def _template_questions(messages: list[dict], params: dict) -> Reply:
    parts = read_prompt(messages)
    if parts.output != QUESTIONS:
        raise PromptNotUnderstood("lsqa/template-questions needs a question-generation prompt with an 'Entity:' line")
    return _approx(messages, template_questions.generate(parts))


def _smollm(messages: list[dict], params: dict) -> Reply:
    from lsqa.llm.embedded import smollm  # torch and transformers load only when this model is used

    return smollm.generate(messages, params)


HANDLERS: dict[str, Callable[[list[dict], dict], Reply]] = {
    "lsqa/extractive": _extractive,
    "lsqa/lexical-judge": _lexical_judge,
    "lsqa/template-questions": _template_questions,
    "local/smollm2-135m": _smollm,
}


def respond(model: str, messages: list[dict], params: dict | None = None) -> Reply:
    """Run an embedded model directly, without litellm (what the provider calls)."""
    handler = HANDLERS.get(model)
    if handler is None:
        raise KeyError(f"no embedded model {model!r}; embedded models: {', '.join(HANDLERS)}")
    return handler(messages, dict(params or {}))


def _provider_class(litellm):
    CustomLLMError = litellm.llms.custom_llm.CustomLLMError  # litellm maps its status_code to 400/404 errors

    class EmbeddedProvider(litellm.CustomLLM):
        """One litellm provider prefix (``lsqa`` or ``local``) serving its embedded models."""

        def __init__(self, provider: str):
            super().__init__()
            self.provider = provider

        def completion(self, model, messages, *args, **kwargs):
            name = f"{self.provider}/{model}"
            if name not in HANDLERS:
                known = ", ".join(m for m in HANDLERS if m.startswith(self.provider + "/"))
                raise CustomLLMError(status_code=404, message=f"no embedded model {name}; known: {known}")
            try:
                text, prompt_tokens, completion_tokens = respond(name, messages, kwargs.get("optional_params") or {})
            except PromptNotUnderstood as exc:
                raise CustomLLMError(status_code=400, message=str(exc)) from exc
            return litellm.ModelResponse(
                model=name,
                choices=[{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                usage=litellm.Usage(
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    total_tokens=prompt_tokens + completion_tokens,
                ),
            )

        async def acompletion(self, model, messages, *args, **kwargs):
            # CPU-bound work runs in a worker thread so HTTP calls on the event loop keep flowing.
            return await asyncio.to_thread(self.completion, model, messages, *args, **kwargs)

    return EmbeddedProvider


def register(litellm) -> None:
    """Add the embedded providers to ``litellm.custom_provider_map`` (idempotent)."""
    cls = _provider_class(litellm)
    kept = [item for item in litellm.custom_provider_map if item.get("provider") not in PROVIDERS]
    litellm.custom_provider_map = kept + [{"provider": p, "custom_handler": cls(p)} for p in PROVIDERS]
