"""lsqa dashboard: navigation over pages/. Start with `make run` (http://127.0.0.1:8501).

Besides the navigation, this file keeps the one piece of state every page shares: who the
annotator is. It lives in the session and in the URL (``?annotator=<name>``), so a bookmark or a
reload keeps it without cookies.
"""

import os

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
                      # one BLAS thread: on a small shared machine threaded BLAS made bootstrap refits erratic
                      ("OPENBLAS_NUM_THREADS", "1")):
    os.environ.setdefault(_name, _value)

import streamlit as st  # noqa: E402

st.set_page_config(page_title="lsqa — long-span QA workbench", layout="wide")

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
    st.Page("pages/run.py", title="Run", icon=":material/play_arrow:"),
    st.Page("pages/audit.py", title="Audit", icon=":material/fact_check:"),
    st.Page("pages/reference_errors.py", title="Reference errors", icon=":material/flag:"),
    st.Page("pages/agreement.py", title="Agreement", icon=":material/handshake:"),
    st.Page("pages/leaderboard.py", title="Leaderboard", icon=":material/leaderboard:"),
    st.Page("pages/corpus.py", title="Corpus", icon=":material/menu_book:"),
]

if "annotator" not in st.session_state:
    st.session_state["annotator"] = st.query_params.get("annotator", "")
st.sidebar.text_input("Annotator", key="annotator", placeholder="your name",
                      help="Saved with every review and flag. Kept in the URL (?annotator=…).")
if st.session_state["annotator"].strip():
    st.query_params["annotator"] = st.session_state["annotator"].strip()

from lsqa.dashboard import page_data  # noqa: E402
from lsqa.errors import LsqaError  # noqa: E402

with page_data.kept_open(page_data.current_workspace()):  # one attachment per render, not one per read
    try:
        st.navigation(PAGES).run()
    except LsqaError as exc:  # e.g. a workspace another process holds too long: what to do, not a traceback
        st.error(str(exc))
