"""Corpus: books with their passages, entities with their mention chains (paper §2), and questions
with every system's answer. Book and model text is shown escaped, mentions marked."""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa.dashboard import LsqaError, common, corpus_view, longspan_view, md_escape  # noqa: E402

workspace = common.current_workspace()
md = md_escape  # names come from config and import files: never Markdown
st.markdown("<style>.lsqa-text{line-height:1.5} .lsqa-text mark{background:#ffe066;padding:0 2px}</style>",
            unsafe_allow_html=True)  # static CSS only
st.title("Corpus")
books = corpus_view.books(workspace)
if not books:
    st.info("No books with full text yet: `lsqa ingest-book PATH` or `lsqa ingest-narrativeqa DIR`.")
    st.stop()
st.dataframe(books, hide_index=True, width="stretch", key="co_books",
             column_order=["title", "author", "kind", "word_count", "n_tokens", "passages", "entities", "questions",
                           "answered"], column_config=common.headed())
titles = {b["id"]: b["title"] for b in books}
with_questions = [b["id"] for b in books if b["answered"]] or [b["id"] for b in books if b["questions"]] or list(titles)
# A link may open a book's tab (`/corpus?book=<id>&tab=long-span`, e.g. from an Audit item): only the
# first time, so that the person's own choices win from then on.
linked_book = st.query_params.get("book")
doc = st.selectbox("Book", list(titles), format_func=titles.get, key="co_book",
                   index=list(titles).index(linked_book if linked_book in titles else with_questions[0]))



def show_chain(doc: str, ent: str) -> None:
    """The entity's stretches of text, mentions marked, ten to a page."""
    c = st.columns([1, 3])
    page = c[0].number_input("Stretches page", 1, corpus_view.page_count(workspace, ent), 1,
                             key=f"co_chain_page_{ent}") - 1
    chain = corpus_view.mention_chain(workspace, doc, ent, page=page)
    c[1].caption(f"{chain['n_mentions']:,} mentions in {chain['n_windows']:,} stretches of text · "
                 f"page {chain['page'] + 1} of {chain['pages']}")
    for w in chain["windows"]:
        st.caption(f"characters {w['start']:,}–{w['end']:,} · {w['n']} mentions")
        st.markdown(w["html"], unsafe_allow_html=True)
    mentions = st.expander("All mentions", key=f"co_all_mentions_{ent}", on_change="rerun")
    if mentions.open:  # the table is built only when asked for
        mentions.dataframe(chain["mentions"], hide_index=True, width="stretch", key="co_mentions")


def questions_tab() -> None:
    qa = corpus_view.questions_and_answers(workspace, doc)
    if not qa["rows"]:
        st.info("No questions for this book.")
        return
    st.caption(f"{len(qa['rows'])} questions · systems: {md(', '.join(qa['systems'])) or 'none yet'}")
    st.dataframe(qa["rows"], hide_index=True, width="stretch", key="co_qa",
                 column_order=["question", "reference 1", "reference 2", *qa["systems"], "origin", "question_id"],
                 column_config={"question_id": common.HEADINGS["question_id"]})  # the others are system names


def passages_tab() -> None:
    c = st.columns([3, 1])
    needle = c[0].text_input("Find in passages", key="co_find")
    size = 10
    first = corpus_view.passages(workspace, doc, page=0, page_size=size, contains=needle)
    page = c[1].number_input("Page", 1, first["pages"], 1, key="co_page") - 1
    view = first if page == 0 else corpus_view.passages(workspace, doc, page=page, page_size=size, contains=needle)
    st.caption(f"{view['total']:,} passages" + (f" containing “{md_escape(needle)}”" if needle else ""))
    for p in view["rows"]:
        st.caption(f"passage {p['ordinal']} · characters {p['char_start']:,}–{p['char_end']:,} · "
                   f"{p['n_tokens']} tokens")
        st.markdown(p["html"], unsafe_allow_html=True)


def entities_tab() -> None:
    ents = corpus_view.entities(workspace, doc)
    if not ents:
        st.info("No entities for this book yet: `lsqa entities BOOK` extracts them (the demo does it for every "
                "book), and so does question generation (`questions = \"generate\"` in a study config).")
        return
    st.dataframe(ents, hide_index=True, width="stretch", key="co_ents",
                 column_order=["rank", "name", "n_mentions", "method"], column_config=common.headed())
    names = {e["id"]: f"{e['rank']}. {e['name']} ({e['n_mentions']} mentions, {e['method']})" for e in ents}
    ent = st.selectbox("Entity", list(names), format_func=names.get, key="co_ent")
    show_chain(doc, ent)


def longspan_tab() -> None:
    """Which of this book's questions needed the whole book (`lsqa longspan`)."""
    judges = corpus_view.binary_judges(workspace)
    judge = st.selectbox("Judge (says whether an answer is right)", ["(default)", *judges], key="co_ls_judge")
    try:
        result = longspan_view.book(workspace, doc, None if judge == "(default)" else judge)
    except LsqaError as exc:
        st.info(str(exc))
        return
    s, d = {role: ", ".join(names) for role, names in result["systems"].items()}, result["document"]
    st.caption(f"Judge {md(result['judge'])}; systems: no context {md(s['no_context'])}, retrieval "
               f"{md(s['retrieval'])}, full book {md(s['full'])}. Evidence places: quotes of "
               f"{md(result['evidence_judge'] or 'no judge')} found in the book, and the mention chain of a "
               "question's entity.")
    c = st.columns(2)
    for col, (label, key) in zip(c, (("Full book vs retrieval", "full_vs_retrieval"),
                                     ("Full book vs no context", "full_vs_no_context")), strict=False):
        col.metric(label, longspan_view.gain_words(d[key]))
        col.caption(md(longspan_view.gain_notes(d[key])))
    every = st.expander("All books: gains that hold together", key="co_ls_all", on_change="rerun")
    if every.open:  # built only when asked for: it reads every book's questions
        books_table = longspan_view.all_books(workspace, None if judge == "(default)" else judge)
        every.caption(md(f"Judge {books_table['judge']}. 'together': {books_table['statement']}."))
        every.dataframe(books_table["rows"], hide_index=True, width="stretch", key="co_ls_books")
    st.caption(" · ".join(f"{name}: {share:.0%}" for name, share in d["classes"].items() if share is not None)
               + f" of {d['n_classified']} classified questions (of {d['n_questions']})")
    mentions, entity = None, ""
    if result["entities"]:
        ent = st.selectbox("Entity whose mention chain is drawn", list(result["entities"]),
                           format_func=result["entities"].get, key="co_ls_entity")
        entity, mentions = result["entities"][ent], longspan_view.mention_fractions(workspace, doc, ent)
    st.plotly_chart(longspan_view.timeline(result, mentions, entity), key="co_ls_timeline")
    st.dataframe(longspan_view.question_rows(result), hide_index=True, width="stretch", key="co_ls_questions",
                 column_config={"evidence from": st.column_config.NumberColumn(format="percent"),
                                "evidence to": st.column_config.NumberColumn(format="percent")})


# Only the open tab is built and sent (switching tabs reruns the page): building all three tabs'
# tables and passages at once made this the slowest page to open.
TAB_LINKS = {"questions": "Questions and answers", "passages": "Passages", "entities": "Entities",
             "long-span": "Long span"}
tabs = st.tabs(list(TAB_LINKS.values()), key="co_tab", on_change="rerun",
               default=TAB_LINKS.get(st.query_params.get("tab", ""), "Questions and answers"))
for tab, show in zip(tabs, (questions_tab, passages_tab, entities_tab, longspan_tab), strict=False):
    if tab.open:
        with tab:
            show()
