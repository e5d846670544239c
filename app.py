"""lsqa dashboard: navigation over pages/. Start with `make run` (http://127.0.0.1:8501)."""

import os

for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
    os.environ.setdefault(_name, _value)

import streamlit as st  # noqa: E402

st.set_page_config(page_title="lsqa — long-span QA workbench", layout="wide")

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
]

st.navigation(PAGES).run()
