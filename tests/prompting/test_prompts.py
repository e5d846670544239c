"""Prompt files (prompts/*.txt) and lsqa.prompting.templates: format, strict rendering, the label contract of
prompts/README.md, one prompt per figure of the paper's Appendix A, user folders and versions."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from lsqa.errors import LsqaError
from lsqa.prompting import templates as P
from lsqa.prompting.parsers import OUTPUT_FORMATS
from tests.conftest import PROJECT_ROOT, shared_data_dir

PROMPT_FILES = sorted((PROJECT_ROOT / "prompts").glob("*.txt"))

# id -> (figure, output) as the brief and the paper fix them.
EXPECTED = {
    "question_generation": (8, "question-answer-pairs"),
    "answer_no_context": (9, "text"),
    "answer_full_context": (10, "text"),
    "answer_retrieved_context": (11, "text"),
    "autoais": (12, "autoais-json"),
    "side_by_side": (13, "side-by-side-json"),
    "nqa_answer_no_context": (14, "text"),
    "nqa_answer_retrieved_context": (15, "text"),
    "nqa_answer_full_context": (16, "text"),
    "groundtruth_yes_no": (17, "yes-no"),
    "groundtruth_side_by_side": (18, "side-by-side-equal-json"),
    "nqa_autoais": (19, "autoais-json"),
    "nqa_side_by_side": (20, "side-by-side-equal-json"),
}

# Prompts of lsqa's own, not in the paper: id -> output (tests/audit/test_reference_checks.py checks their wording).
OUTSIDE_THE_PAPER = {"reference_check": "reference-check-json"}

PLACEHOLDERS = {
    "reference_check": {"context", "question", "answer"},
    "question_generation": {"context_text", "num_questions", "entity"},
    "answer_no_context": {"title_and_author", "question"},
    "nqa_answer_no_context": {"kind", "title", "question"},
    "groundtruth_yes_no": {"question", "a1", "a2"},
    "groundtruth_side_by_side": {"question", "answer", "system_answer_A", "system_answer_B"},
}
for _id in ("answer_full_context", "answer_retrieved_context", "nqa_answer_retrieved_context", "nqa_answer_full_context"):
    PLACEHOLDERS[_id] = {"context", "question"}
for _id in ("autoais", "nqa_autoais"):
    PLACEHOLDERS[_id] = {"context", "question", "answer"}
for _id in ("side_by_side", "nqa_side_by_side"):
    PLACEHOLDERS[_id] = {"context", "question", "system_answer_A", "system_answer_B"}

# Distinct sentinel values, so the contract test can see each one land after its label. The
# context holds braces and a fake label to show values are inserted verbatim.
SENTINELS = {
    "context": "CTX-SENTINEL {not_a_placeholder} }} {{",
    "context_text": "CTX-SENTINEL passage text",
    "question": "QUESTION-SENTINEL?",
    "answer": "ANSWER-SENTINEL",
    "system_answer_A": "SYSA-SENTINEL",
    "system_answer_B": "SYSB-SENTINEL",
    "a1": "TRUTH-SENTINEL",
    "a2": "PROPOSED-SENTINEL",
    "entity": "ENTITY-SENTINEL",
    "num_questions": 7,
    "title_and_author": "Les Misérables by Victor Hugo",
    "kind": "book",
    "title": "TITLE-SENTINEL",
}


def render_all(prompt):
    return P.render(prompt, **{k: SENTINELS[k] for k in prompt.placeholders})


def lines_starting(text: str, label: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith(label)]


# --- files and format ------------------------------------------------------------------------


def test_every_prompt_id_has_a_v1_and_no_file_is_stray():
    names = {p.name for p in PROMPT_FILES}
    assert {f"{i}.v1.txt" for i in EXPECTED} <= names  # later versions are added beside v1
    assert {n.split(".v")[0] for n in names} == set(EXPECTED) | set(OUTSIDE_THE_PAPER)


@pytest.mark.parametrize("path", PROMPT_FILES, ids=lambda p: p.name)
def test_every_file_loads_and_header_matches_body(path):
    prompt = P.parse_prompt_file(path)
    assert f"{prompt.id}.v{prompt.version}.txt" == path.name
    used = {name for _, name, _, _ in string.Formatter().parse(prompt.body) if name}
    assert set(prompt.placeholders) == used == PLACEHOLDERS[prompt.id]
    assert re.fullmatch(r"[0-9a-f]{64}", prompt.sha256)
    if prompt.id in OUTSIDE_THE_PAPER:
        assert prompt.output == OUTSIDE_THE_PAPER[prompt.id] and "not in the paper" in prompt.implements
        return
    assert prompt.output == EXPECTED[prompt.id][1] and prompt.output in OUTPUT_FORMATS
    assert f"Fig. {EXPECTED[prompt.id][0]} " in prompt.implements + " "


def test_each_appendix_figure_has_exactly_one_prompt():
    figures = []
    for prompt in {p.id: p for p in P.list_prompts()}.values():  # the latest version of each id
        figures += [int(n) for n in re.findall(r"Fig\. (\d+)", prompt.implements)]
    assert sorted(figures) == list(range(8, 21))


def test_prefills_keep_the_papers_open_object():
    assert P.load_prompt("autoais").prefill == "{'answer_is_entailed_by_context':"
    assert P.load_prompt("nqa_autoais").prefill == "{'answer_is_entailed_by_context':"
    for pid in ("groundtruth_side_by_side", "nqa_side_by_side"):
        assert P.load_prompt(pid).prefill == "{ 'system is better':"
    # Fig. 13 and the answer prompts have no prefill in the paper.
    assert P.load_prompt("side_by_side").prefill == ""
    assert P.load_prompt("answer_full_context").prefill == ""
    assert render_all(P.load_prompt("autoais")).endswith(P.load_prompt("autoais").prefill)


# --- the label contract (prompts/README.md) --------------------------------------------------


@pytest.mark.parametrize("prompt_id", sorted(EXPECTED))
def test_rendered_prompt_keeps_the_label_contract(prompt_id):
    prompt = P.load_prompt(prompt_id)
    text = render_all(prompt)
    lines = text.split("\n")
    assert "{" + "not_a_placeholder}" not in prompt.body

    # context between "# CONTEXT" and "# CONTEXT END", verbatim
    ctx_key = "context" if "context" in prompt.placeholders else "context_text" if "context_text" in prompt.placeholders else None
    if ctx_key:
        start, end = lines.index("# CONTEXT"), lines.index("# CONTEXT END")
        assert "\n".join(lines[start + 1 : end]) == str(SENTINELS[ctx_key])
        assert lines.count("# CONTEXT") == 1 and lines.count("# CONTEXT END") == 1
    else:
        assert "# CONTEXT" not in lines

    if "question" in prompt.placeholders:
        assert SENTINELS["question"] in lines_starting(text, "Question:")[-1]
    if prompt.output in ("autoais-json",):
        answer_lines = [i for i, line in enumerate(lines) if line.startswith("Answer:")]
        question_line = max(i for i, line in enumerate(lines) if line.startswith("Question:"))
        assert len(answer_lines) == 1 and answer_lines[0] > question_line
        assert SENTINELS["answer"] in lines[answer_lines[0]]
        assert "answer_is_entailed_by_context" in text
    if prompt.output.startswith("side-by-side"):
        assert lines_starting(text, "Answer A:") == [f'Answer A: "{SENTINELS["system_answer_A"]}"']
        assert lines_starting(text, "Answer B:") == [f'Answer B: "{SENTINELS["system_answer_B"]}"']
        assert "system is better" in text
        # Equal is listed only where the paper allows it (Figs. 18, 20).
        assert ("Equal" in text) == (prompt.output == "side-by-side-equal-json")
        assert "equal" not in text.lower() or prompt.output == "side-by-side-equal-json"
    if prompt_id == "groundtruth_side_by_side":
        assert lines_starting(text, "Ground truth answer:") == [f'Ground truth answer: "{SENTINELS["answer"]}"']
    if prompt.output == "yes-no":
        assert lines_starting(text, "Answer 1") == [f"Answer 1: {SENTINELS['a1']}"]
        assert lines_starting(text, "Answer 2") == [f"Answer 2: {SENTINELS['a2']}"]
        assert "Respond with only yes or no" in text
    if prompt.output == "question-answer-pairs":
        assert lines_starting(text, "Entity:") == [f'Entity: "{SENTINELS["entity"]}"']
        assert lines_starting(text, "Number of questions:") == ["Number of questions: 7"]
        assert "'Question: '" in text and "'Answer: '" in text
        # the format instruction must not itself look like a question line
        assert not lines_starting(text, "Question:") and not lines_starting(text, "Answer:")
        # the eight numbered requirements of Appendix A.1
        assert [int(n) for n in re.findall(r"^(\d)\. ", text, re.M)] == list(range(1, 9))
    if prompt.output == "text":
        assert lines[-1] == "Answer:"
        length = "at most one sentence" if prompt_id.startswith("nqa_") else "no longer than 5 sentences"
        assert length in text
    if prompt_id == "side_by_side":
        for criterion in ("*Accuracy*", "*Relevance*", "*Detail*", "*Clarity*", "'None'"):
            assert criterion in text


def test_no_long_run_of_the_papers_prose_is_copied():
    """The prompts restate the paper's specification in our own words: outside labels, section
    headers, quoted labels and the JSON format lines, no 8 words in a row match Appendix A."""
    paper_path = shared_data_dir().parent / "paper" / "long-span-qa.txt"
    if not paper_path.is_file():  # part of the shared inputs, like the data: never silently skipped
        pytest.fail(f"paper text not found at {paper_path}")
    paper = paper_path.read_text(encoding="utf-8")
    appendix = paper[paper.index("## A Prompts") : paper.index("## B Examples")]

    def words(text):
        return re.findall(r"[a-z0-9]+", text.lower())

    n = 8
    paper_words = words(appendix)
    grams = {tuple(paper_words[i : i + n]) for i in range(len(paper_words) - n + 1)}
    structural = re.compile(r"^(#|\{\{|Question:|Answer|Ground truth answer:|Entity:|Number of questions:)")
    copied = {}
    for prompt in P.list_prompts():
        prose = "\n".join(line for line in prompt.body.split("\n") if not structural.match(line))
        w = words(re.sub(r"'[^'\n]*'", " ", prose))
        hits = [" ".join(w[i : i + n]) for i in range(len(w) - n + 1) if tuple(w[i : i + n]) in grams]
        if hits:
            copied[prompt.id] = hits
    assert not copied


# --- strict rendering ------------------------------------------------------------------------


def test_missing_placeholder_names_it_and_the_prompt():
    prompt = P.load_prompt("autoais")
    with pytest.raises(P.PromptError, match=r"autoais\.v1 needs a value for answer"):
        P.render(prompt, context="c", question="q")


def test_unused_value_is_an_error():
    prompt = P.load_prompt("autoais")
    with pytest.raises(P.PromptError, match=r"does not use entity"):
        P.render(prompt, context="c", question="q", answer="a", entity="x")


def test_none_value_is_an_error():
    with pytest.raises(P.PromptError, match="question is None"):
        P.render(P.load_prompt("answer_full_context"), context="c", question=None)


def test_prompt_error_is_an_lsqa_error():
    assert issubclass(P.PromptError, LsqaError)


def test_messages_are_one_user_turn():
    prompt = P.load_prompt("groundtruth_yes_no")
    msgs = P.messages(prompt, question="Who?", a1="Javert", a2="the inspector")
    assert msgs == [{"role": "user", "content": P.render(prompt, question="Who?", a1="Javert", a2="the inspector")}]


def test_literal_braces_render_single():
    text = render_all(P.load_prompt("side_by_side"))
    assert "{ 'system is better': 'A is better|B is better|None'," in text
    assert "{{" not in text.replace(SENTINELS["context"], "")


# --- user folders, versions, validation --------------------------------------------------------


def write_prompt(folder: Path, pid: str, version: int, body: str, placeholders: str, output: str = "text", **over) -> Path:
    header = {"id": pid, "version": str(version), "implements": "test", "placeholders": placeholders, "output": output}
    header.update(over)
    text = "".join(f"# {k}: {v}\n" for k, v in header.items()) + "---\n" + body + "\n"
    path = folder / f"{pid}.v{version}.txt"
    path.write_text(text, encoding="utf-8")
    return path


V2_BODY = "# CONTEXT\n{context}\n# CONTEXT END\n\nQuestion: {question}\nAnswer: {answer}\nanswer_is_entailed_by_context?"


def test_user_folder_v4_overrides_v1_by_argument(tmp_path):
    write_prompt(tmp_path, "autoais", 4, V2_BODY, "context, question, answer", "autoais-json")
    prompt = P.load_prompt("autoais", dirs=[tmp_path])
    assert (prompt.version, prompt.path.parent) == (4, tmp_path)
    assert P.load_prompt("autoais", 1, dirs=[tmp_path]).path.parent.resolve() == (PROJECT_ROOT / "prompts").resolve()
    assert P.load_prompt("autoais", "v1", dirs=[tmp_path]).version == 1
    assert P.load_prompt("autoais").version == 1  # without the folder


def test_user_folder_v4_overrides_v1_by_environment(tmp_path, monkeypatch):
    write_prompt(tmp_path, "autoais", 4, V2_BODY, "context, question, answer", "autoais-json")
    monkeypatch.setenv("LSQA_PROMPTS_DIR", str(tmp_path))
    assert P.load_prompt("autoais").version == 4
    assert [p.version for p in P.list_prompts() if p.id == "autoais"] == [1, 2, 3, 4]


def test_same_version_with_other_text_is_refused(tmp_path):
    write_prompt(tmp_path, "autoais", 1, V2_BODY, "context, question, answer", "autoais-json")
    with pytest.raises(P.PromptError, match=r"autoais\.v1 exists twice.*autoais\.v4\.txt"):
        P.load_prompt("autoais", dirs=[tmp_path])


def test_identical_copy_in_a_user_folder_is_fine(tmp_path):
    source = PROJECT_ROOT / "prompts" / "autoais.v1.txt"
    (tmp_path / source.name).write_bytes(source.read_bytes())
    assert P.load_prompt("autoais", dirs=[tmp_path]).sha256 == P.load_prompt("autoais").sha256


def test_missing_user_folder_is_reported(tmp_path):
    with pytest.raises(P.PromptError, match="does not exist"):
        P.list_prompts(dirs=[tmp_path / "nope"])


def test_unknown_id_and_version_list_what_exists():
    with pytest.raises(P.PromptError, match="known ids: .*autoais"):
        P.load_prompt("autoias")
    with pytest.raises(P.PromptError, match=r"has no version 9 \(has v1, v2, v3\)"):
        P.load_prompt("autoais", 9)


@pytest.mark.parametrize(
    "body, placeholders, over, message",
    [
        ("Q: {question} {answer}", "question", {}, r"body uses answer but the header does not list it"),
        ("Q: {question}", "question, answer", {}, r"header lists answer but the body does not use it"),
        ("Q: {question:>10}", "question", {}, r"not a plain name"),
        ("Q: {0}", "", {}, r"not a plain name"),
        ("a lone { brace", "", {}, r"bad braces"),
        ("Q: {question}", "question", {"output": "json"}, r"unknown output 'json'"),
        ("Q: {question}", "question", {"id": "other"}, r"header says id 'other'"),
        ("Q: {question}", "question", {"colour": "red"}, r"unknown header 'colour'"),
    ],
)
def test_bad_files_are_refused_with_the_file_named(tmp_path, body, placeholders, over, message):
    path = write_prompt(tmp_path, "mine", 1, body, placeholders, **over)
    with pytest.raises(P.PromptError, match=message) as info:
        P.parse_prompt_file(path)
    assert str(path) in str(info.value)


def test_file_without_separator_or_with_bad_name(tmp_path):
    path = tmp_path / "mine.v1.txt"
    path.write_text("# id: mine\nno separator\n", encoding="utf-8")
    with pytest.raises(P.PromptError, match="no line '---'"):
        P.parse_prompt_file(path)
    bad = tmp_path / "mine.version1.txt"
    bad.write_text("x", encoding="utf-8")
    with pytest.raises(P.PromptError, match=r"named <id>\.v<N>\.txt"):
        P.parse_prompt_file(bad)
