"""Overview: what the workspace holds."""

import streamlit as st

from lsqa import dashboard

ws = dashboard.workspace()
st.title("lsqa — long-span question answering")
st.caption(f"workspace: {ws}")
summary = dashboard.overview(ws)
cols = st.columns(len(summary["counts"]))
for col, (name, n) in zip(cols, summary["counts"].items()):
    col.metric(name, f"{n:,}")
st.subheader("Documents")
st.dataframe(summary["documents"], hide_index=True, use_container_width=True)
