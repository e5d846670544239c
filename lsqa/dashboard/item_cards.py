"""The Audit item's question card and its answer cards, each one block of HTML.

The Audit page draws its item again on every key (J, K, a decision), and the browser's share of a
key grows with the number of Streamlit elements on the page. Built from columns and bordered
containers, the question with its two references took 9 elements and two answers 9 more; as one
block each they take 2, and J and a decision show the next item sooner (
docs/BENCHMARKS.md, ninth pass). The look is the page's own: the classes are styled by the Audit
page (``lsqa-card``, ``lsqa-grid``, ``lsqa-note``), and the cards sit side by side, one under the
other on a narrow screen.

Every text from the workspace (question, references, answers, system names, flag notes) is escaped
by ``lsqa.text.highlight.escape``: the only tags are the ones written here, so a system named
``<a href=…>`` or a note holding a URL is shown as it was written, never as a link. Line breaks
become ``<br>``, so the block never holds a blank line and a Markdown renderer keeps it whole as raw
HTML. Pure: no streamlit, no database.
"""

from __future__ import annotations

from lsqa.text.highlight import escape, text_html


def _stamp(item_id: str) -> str:
    """The item a card shows, as an attribute: the page's keys.js lets a key write only while every
    card on screen and the decision bar name the same item (between two items, the bar of
    the next one was up before its question and answers)."""
    return f' data-lsqa-item="{escape(item_id)}"' if item_id else ""


def stamped(markdown: str, item_id: str) -> str:
    """A line of Markdown (HTML allowed; its data escaped, ``md_escape``) led by an empty element
    stamped with ``item_id``: the decision bar's "Item i of N", the item its buttons write on."""
    return f"<span{_stamp(item_id)}></span>{markdown}"


def question_card(question: str, references: list[dict], *, used: object = None,
                  flags: dict | None = None, item_id: str = "") -> str:
    """The question above its references side by side.

    ``references``: ``{"n", "text"}`` each; ``used``: the ``n`` of the reference this rater was
    given, if any; ``flags``: per ``n``, the flags on that reference (``{"reason", "annotator",
    "note"}``), shown under it; ``item_id``: the item it belongs to (``_stamp``)."""
    flags = flags or {}
    refs = "".join(_reference(ref, ref["n"] == used, flags.get(ref["n"], [])) for ref in references)
    return (f'<div class="lsqa-card"{_stamp(item_id)}><p><b>Question</b></p>{text_html(question, css="font-size:1.15rem")}'
            f'<div class="lsqa-grid">{refs}</div></div>')


def _reference(ref: dict, used: bool, flags: list[dict]) -> str:
    head = f"<p><b>NarrativeQA reference {escape(str(ref['n']))}</b>{' — used by this rater' if used else ''}</p>"
    notes = "".join(f'<p class="lsqa-note">⚑ {escape(f["reason"])} — {escape(f["annotator"])}'
                    f'{": " + escape(f["note"]) if f.get("note") else ""}</p>' for f in flags)
    return f"<div>{head}{text_html(ref['text'] or '—')}{notes}</div>"


def answer_cards(heading: str, answers: list[tuple[str, str]], item_id: str = "") -> str:
    """``heading`` above one card per answer, ``(title, text)`` each, in the order given; ``item_id``:
    the item they belong to (``_stamp``)."""
    cards = "".join(f'<div class="lsqa-card"><p><b>{escape(title)}</b></p>{text_html(text)}</div>'
                    for title, text in answers)
    return f'<p><b>{escape(heading)}</b></p><div class="lsqa-grid"{_stamp(item_id)}>{cards}</div>'
