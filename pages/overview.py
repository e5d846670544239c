"""Overview: what the workspace holds, the latest runs, and where audit work is waiting."""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa.dashboard import common, overview_view  # noqa: E402

workspace = common.current_workspace()
st.title("lsqa — long-span question answering")
st.caption(f"workspace: {workspace}")
if not common.exists(workspace):
    st.warning(f"No workspace at {workspace}. Build the demo with `lsqa demo --path {workspace}` or start a study on the Run page.")

summary = overview_view.overview(workspace)
counts = summary["counts"]
shown = ["books", "questions", "systems", "judges", "verdicts", "human reviews", "flagged references"]
# One row that wraps, each figure as wide as its label: seven equal columns cut "flagged references" short.
figures = st.container(horizontal=True, gap="medium")
for name in shown:
    figures.metric(name, f"{counts[name]:,}", width="content")
st.caption(f"{counts['documents']:,} documents in all ({counts['books']} with full text) · "
           f"{counts['questions answered']:,} questions answered · {counts['answers']:,} answers · "
           f"{counts['verdicts not decided']:,} verdicts without a usable label · {counts['annotators']} annotators")

left, right = st.columns(2)
with left:
    st.subheader("Audit work waiting")
    if summary["audit_work"]:
        st.dataframe(summary["audit_work"], hide_index=True, width="stretch",
                     column_order=["judge", "kind", "verdicts", "reviewed %", "waiting", "parse_errors", "errors"],
                     column_config=common.headed({"reviewed %": st.column_config.ProgressColumn(
                         "reviewed %", min_value=0, max_value=100, format="%.1f%%")}))
        st.page_link("pages/audit.py", label="Open the audit queue", icon="✅")
    else:
        st.info("No verdicts yet: run judges on the Run page.")
with right:
    st.subheader("Annotators")
    if summary["annotators"]:
        st.dataframe(summary["annotators"], hide_index=True, width="stretch", column_config=common.headed())
    else:
        st.info("Nobody has reviewed a verdict yet.")

st.subheader("Latest runs")
if summary["runs"]:
    st.dataframe(summary["runs"], hide_index=True, width="stretch",
                 column_config=common.headed({"cost_usd": st.column_config.NumberColumn("cost (USD)", format="$%.4f")}))
else:
    st.info("No pipeline runs yet.")

# Built only while open (opening it reruns the page): a table folded away still cost a new tab its drawing.
documents = st.expander("Documents", key="ov_documents", on_change="rerun")
if documents.open:
    documents.dataframe(summary["documents"], hide_index=True, width="stretch", column_config=common.headed())
