"""lsqa.corpus.questions (pure parts): questions from a Fig. 8 completion, the names-the-entity flag, and
the §2 annotated rendering on a real passage of Les Misérables."""

from __future__ import annotations

import pytest

from lsqa.corpus.questions import GeneratedQuestion, annotated_rendering, names_entity, questions_from_generation

# A completion in the style of the paper's Appendix B.1 questions (numbered, bold labels, a repeat,
# a question that names its entity, an unanswered question, closing chatter).
COMPLETION = """Sure! Here are five questions about the text.

1. **Question:** How does the "man of God" who opens his door to a former convict change the course of that guest's life?
**Answer:** By trusting Jean Valjean and giving him the silver candlesticks, the Bishop of Digne sets him on the road to redemption.

2. **Question:** How does the "man of God" who opens his door to a former convict change the course of that guest's life
**Answer:** (repeated) He redeems him.

3. **Question:** Why does M. Myriel give up the episcopal palace?
**Answer:** He finds the hospital crowded and exchanges his large palace for its small building.

4. **Question:** What does the prelate's answer to the senator reveal about his view of death?
**Answer:**

5. **Question:** ???
**Answer:** Nothing.

6. **Question:** How does the gift of silver shape the "redeemed soul's" later choices as a mayor?
**Answer:** Valjean keeps the candlesticks all his life
and lets the memory of the bishop guide his mercy towards Fantine and Cosette.

I hope these questions are useful for your evaluation!
"""


def test_questions_from_a_realistic_completion():
    questions = questions_from_generation(COMPLETION, entity="M. Myriel")
    assert [q.question for q in questions] == [
        'How does the "man of God" who opens his door to a former convict change the course of that guest\'s life?',
        "Why does M. Myriel give up the episcopal palace?",
        'How does the gift of silver shape the "redeemed soul\'s" later choices as a mayor?',
    ]
    assert [q.names_entity for q in questions] == [False, True, False]
    assert questions[2].answer == (
        "Valjean keeps the candlesticks all his life and lets the memory of the bishop guide his mercy towards "
        "Fantine and Cosette."
    )
    assert questions.dropped == {"no_answer": 1, "empty": 1, "duplicate": 1}
    assert all(isinstance(q, GeneratedQuestion) for q in questions)


def test_without_entity_nothing_is_flagged():
    assert not any(q.names_entity for q in questions_from_generation(COMPLETION))


def test_no_questions_in_a_refusal():
    questions = questions_from_generation("I'm sorry, I can't help with that.")
    assert questions == [] and questions.dropped["no_answer"] == 0


@pytest.mark.parametrize(
    "question, entity, expected",
    [
        ("Why does M. Myriel give up his palace?", "M. Myriel", True),
        ("Why does m.  myriel give up his palace?", "M. Myriel", True),  # case and spacing aside
        ("What does Myriel's sister think?", "Myriel", True),
        ("What does the man of God desire?", "Sire", False),  # not inside another word
        ("Who is the bishop?", "M. Myriel", False),
        ("Why does M. Myriel act?", '"M. Myriel"', True),  # quoted as the prompt writes it
        ("Anything", "", False),
    ],
)
def test_names_entity(question, entity, expected):
    assert names_entity(question, entity) is expected


# --- §2 annotated rendering ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def myriel_passage(shared_data):
    """The real two-line passage of Les Misérables that the paper's §2 example annotates."""
    book = (shared_data / "books" / "pg135_les_miserables.txt").read_text(encoding="utf-8")
    start = book.index("“Sire,” said M. Myriel")
    end = book.index("great man.", start) + len("great man.")
    return book[start:end]


def span(text: str, needle: str, after: str = "") -> tuple[int, int]:
    start = text.index(needle, text.index(after) + len(after) if after else 0)
    return start, start + len(needle)


def test_annotated_rendering_of_the_papers_example(myriel_passage):
    text = myriel_passage
    assert text == "“Sire,” said M. Myriel, “you are looking at a good man, and I at a\ngreat man."
    mentions = [
        (*span(text, "M. Myriel"), 6),  # given out of order on purpose
        (*span(text, "Sire"), 15),
        (*span(text, "you"), 15),
        (*span(text, "I", after="and "), 6),
    ]
    assert annotated_rendering(text, mentions) == (
        "“[15 Sire],” said [6 M. Myriel], “[15 you] are looking at a good man, and [6 I] at a\ngreat man."
    )


def test_overlapping_mentions_keep_the_outer_one(myriel_passage):
    text = myriel_passage
    outer = (*span(text, "said M. Myriel"), 3)
    inner = (*span(text, "Myriel"), 6)
    same_start = (*span(text, "said"), 9)
    assert annotated_rendering(text, [inner, same_start, outer]).startswith("“Sire,” [3 said M. Myriel], “you")


def test_no_mentions_and_bad_spans():
    assert annotated_rendering("Sire.", []) == "Sire."
    assert annotated_rendering("Sire.", [(0, 4, "15")]) == "[15 Sire]."
    for bad in [(3, 3, 1), (-1, 2, 1), (0, 99, 1), (2, 1, 1)]:
        with pytest.raises(ValueError, match="not a span"):
            annotated_rendering("Sire.", [bad])
