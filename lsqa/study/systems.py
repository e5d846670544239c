"""QA systems: a model, a context setting and a prompt (paper §4 and §5.2).

Generated questions are answered with the prompts of Appendix A.2 (Figs. 9–11), NarrativeQA
questions with those of Appendix A.5 (Figs. 14–16). A ``reference:N`` system is not a model: it
plays NarrativeQA's reference answer N as a human system (§5.2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from lsqa.config.study import SystemSpec
from lsqa.corpus.contexts import BookContexts, ContextTooLong
from lsqa.llm import LLMRequest
from lsqa.prompting import templates as prompts

# (question origin, context kind) → prompt id
ANSWER_PROMPTS = {
    ("narrativeqa", "none"): "nqa_answer_no_context",
    ("narrativeqa", "retrieval"): "nqa_answer_retrieved_context",
    ("narrativeqa", "full"): "nqa_answer_full_context",
    ("other", "none"): "answer_no_context",
    ("other", "retrieval"): "answer_retrieved_context",
    ("other", "full"): "answer_full_context",
}


def answer_prompt(system: SystemSpec, question: dict) -> prompts.Prompt:
    family = "narrativeqa" if question["origin"] == "narrativeqa" else "other"
    return prompts.load_prompt(ANSWER_PROMPTS[(family, system.context.kind)], system.prompt_version,
                               layout=prompts.layout_for(system.prompt_caching))


@dataclass
class AnswerTask:
    """One answer to produce: either an LLM request, or a row ready without a call."""

    question: dict
    system: SystemSpec
    request: LLMRequest | None = None
    passages: tuple[int, ...] = ()
    ready_row: dict | None = None

    def row(self, text: str | None, status: str, call_key: str = "", error: str = "") -> dict:
        return {"question_id": self.question["id"], "system_name": self.system.name, "text": text or "",
                "status": status, "llm_call_key": call_key, "passages": json.dumps(list(self.passages)),
                "extra": json.dumps({"error": error} if error else {})}


def answer_task(system: SystemSpec, question: dict, books: BookContexts) -> AnswerTask:
    task = AnswerTask(question, system)
    if system.context.kind == "reference":
        ref = question.get(f"reference_{system.context.reference}", "")
        task.ready_row = task.row(ref, "ok" if ref else "error", error="" if ref else "no such reference")
        return task
    doc = books.document(question["document_id"])
    try:
        ctx = books.context_for(doc["id"], system.context, question["text"], max_tokens=system.max_context_tokens)
    except ContextTooLong as exc:
        task.ready_row = task.row("", "error", error=str(exc))
        return task
    prompt = answer_prompt(system, question)
    values = {"question": question["text"]}
    if system.context.kind == "none":
        if question["origin"] == "narrativeqa":
            values.update(kind="movie" if doc["kind"] == "movie" else "book", title=doc["title"])
        else:
            values["title_and_author"] = f"{doc['title']} by {doc['author']}" if doc.get("author") else doc["title"]
    else:
        values["context"] = ctx.text
    task.passages = ctx.passages
    task.request = prompts.request(prompt, system.model, system.params, prompt_caching=system.prompt_caching,
                                   mode=system.mode, contexts=ctx.pieces, **values)
    return task
