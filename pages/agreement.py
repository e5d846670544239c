"""Agreement: each judge against the humans and against the other judges (paper Fig. 4, §5.1-5.2).

Agreement %, Cohen's κ with a bootstrap CI, confusion matrices, position consistency, the
self-preference 2×2 and agreement among annotators — recomputed from the current reviews on
every render (nothing here is cached).
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:  # opened before app.py ran (pages/ auto-discovery): see app.py
    PagesManager.uses_pages_directory = False
    st.rerun()

from lsqa.dashboard import agreement_view, charts, common, md_escape  # noqa: E402
from lsqa.dashboard.agreement_view import FINAL_LABEL_RULE  # noqa: E402

workspace = common.current_workspace()
md = md_escape  # names come from config and import files: never Markdown
st.title("Agreement")
rounds = st.sidebar.selectbox("Bootstrap rounds for κ CIs", [1000, 200, 0], key="ag_rounds")


def plain_table(rows: list[dict]) -> None:
    """A small static table; st.table renders text cells and headers as Markdown, names must stay text."""
    st.table([{md(k): md(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows], hide_index=True)


def confusion_table(result: dict) -> None:
    """One confusion matrix as a table, its agreement and κ above it."""
    kappa = "" if result["kappa"] is None else f", κ = {result['kappa']:.3f}"
    agreement = "" if result["agreement"] is None else f" — agreement {100 * result['agreement']:.1f}%{kappa}"
    st.caption(f"{md(result['rater_a'])} vs {md(result['rater_b'])}{agreement}")
    plain_table(agreement_view.confusion_rows(result))


def vs_humans(view: dict) -> None:
    """Each judge against the humans who reviewed its verdicts, and against each of them."""
    st.caption("Per verdict: each person's label on a verdict of the judge is compared with the judge's label on "
               "that same verdict (one reference, one answer order); “human” is the verdict's final human label. "
               + FINAL_LABEL_RULE)
    if view["vs_human"]:
        rows = agreement_view.agreement_rows(view["vs_human"])
        st.dataframe(rows, hide_index=True, width="stretch", key="ag_human_table")
        st.download_button("Table (CSV)", common.to_csv(rows), "agreement_vs_human.csv", "text/csv",
                           on_click="ignore", key="ag_dl_human")
        st.markdown("**Confusion matrices** (verdicts; the diagonal is where the judge and the humans agree)")
        cols = st.columns(min(3, len(view["vs_human"])))
        for i, res in enumerate(view["vs_human"]):
            with cols[i % len(cols)]:
                confusion_table(res)
        if view["vs_annotator"]:
            st.subheader("Per annotator")
            st.caption("Each judge against each person who reviewed its verdicts.")
            rows = agreement_view.agreement_rows(view["vs_annotator"])
            st.dataframe(rows, hide_index=True, width="stretch", key="ag_annotator_table")
            st.download_button("Table (CSV)", common.to_csv(rows), "agreement_vs_annotator.csv", "text/csv",
                               on_click="ignore", key="ag_dl_annotator")
    else:
        st.info("No human reviews yet: audit some verdicts first.")


def vs_judges(view: dict) -> None:
    """Each pair of judges of one family on the items both judged."""
    if view["pairs"]:
        rows = agreement_view.agreement_rows(view["pairs"])
        st.dataframe(rows, hide_index=True, width="stretch", key="ag_pairs_table")
        st.download_button("Table (CSV)", common.to_csv(rows), "agreement_judges.csv", "text/csv",
                           on_click="ignore", key="ag_dl_pairs")
        labels = [f"{p['rater_a']} vs {p['rater_b']}" for p in view["pairs"]]
        pick = st.selectbox("Confusion matrix", range(len(labels)), format_func=labels.__getitem__, key="ag_pick")
        pair = view["pairs"][pick]
        confusion_table(pair)
        st.download_button("Heatmap (HTML)", lambda p=pair: charts.to_html(charts.confusion(p, p["rater_a"], p["rater_b"])),
                           "confusion.html", "text/html", on_click="ignore", key="ag_dl_fig")
    else:
        st.info("Fewer than two judges of one kind (yes/no or side by side) share items.")


def bias(view: dict) -> None:
    """Position consistency and the self-preference 2×2 of side-by-side judges."""
    st.subheader("Position consistency")
    st.caption("Side-by-side judges: how often the answer shown first won a decisive verdict (50% is no "
               "preference for either place), and, on the answer pairs judged in both orders, how often the two "
               "orders agree and their κ (none for a judge run in one order only).")
    if view["position"]:
        st.dataframe(agreement_view.position_rows(view["position"]), hide_index=True, width="stretch",
                     key="ag_position")
    else:
        st.info("No side-by-side judges.")

    st.subheader("Length preference")
    st.caption("Does a longer answer win by itself? The length coefficient of the style-controlled Bradley-Terry fit "
               "(> 0: longer answers win, whoever wrote them; 95% bootstrap CI) and the share of decisive verdicts "
               "the longer answer won, for the judge on all its verdicts and, on the verdicts people audited, for "
               "the judge and for the people (same verdicts, same estimator).")
    lengths = agreement_view.length_preference_rows(workspace, bootstrap=rounds)
    if lengths:
        st.dataframe(lengths, hide_index=True, width="stretch", key="ag_length")
    else:
        st.info("No side-by-side judges.")

    st.subheader("Self-preference (paper §5.1)")
    pairwise = view["families"]["pairwise"]
    systems = agreement_view.pairwise_systems(workspace)
    if len(pairwise) >= 2 and len(systems) >= 2:
        c = st.columns(4)
        j1 = c[0].selectbox("Judge 1", pairwise, index=0, key="sp_j1")
        j2 = c[1].selectbox("Judge 2", pairwise, index=1, key="sp_j2")
        s1 = c[2].selectbox("System A", systems, index=0, key="sp_s1")
        s2 = c[3].selectbox("System B", systems, index=1, key="sp_s2")
        table = agreement_view.self_preference(workspace, (j1, j2), (s1, s2)) if j1 != j2 and s1 != s2 else None
        if table:
            plain_table(agreement_view.preference_rows(table))
            st.download_button("Heatmap (HTML)", lambda t=table: charts.to_html(charts.preference(t)), "self_preference.html",
                               "text/html", on_click="ignore", key="ag_dl_pref")
            st.caption(f"Comparisons of {md(s1)} and {md(s2)} per judge: {table['totals']} (the rest were equal or neither).")
        else:
            st.info("Pick two different judges that compared these two systems.")
    else:
        st.info("Needs two side-by-side judges and two systems.")


def among_annotators(view: dict) -> None:
    """Agreement among the people who reviewed the same verdicts."""
    ann = view["annotators"]
    c = st.columns(3)
    c[0].metric("annotators", len(ann["annotators"]))
    c[1].metric("verdicts reviewed by ≥ 2", ann["n_items"],
                help="Counted as in the pair table below: two people's labels are paired only on the same verdict "
                     "(one judge, one reference, one answer order), never across judges")
    c[2].metric("Krippendorff's α", "—" if ann["krippendorff_alpha"] is None else f"{ann['krippendorff_alpha']:.3f}")
    if ann["fleiss_kappa"] is not None:
        st.caption(f"Fleiss' κ over the {ann['n_complete']} verdicts every annotator reviewed: {ann['fleiss_kappa']:.3f}")
    if view["annotator_pairs"]:
        st.dataframe(agreement_view.agreement_rows(view["annotator_pairs"]), hide_index=True, width="stretch",
                     key="ag_annotator_pairs")


def show_llmbar(view: dict) -> None:
    """LLMBar's published agreement figures next to the same figures computed here (lsqa.study.llmbar)."""
    rows = view["llmbar"]
    if not rows:
        return
    st.subheader("LLMBar: published figures reproduced")
    same = sum(r["same"] for r in rows)
    st.caption(f"{same} of {len(rows)} figures of the authors' statistics.json equal lsqa's own, computed from the "
               "imported verdicts and gold labels: correct_False = judge vs human:llmbar-gold (first order), "
               "equal and kappa_agreement = the position panel's consistency and κ.")
    st.dataframe([{**r, "published": str(r["published"]), "lsqa": str(r["lsqa"])} for r in rows],
                 hide_index=True, width="stretch", key="ag_llmbar")


# One section at a time, in tabs: only the open one is computed and drawn (switching reruns the page),
# and the open tab is kept in the link (?section=...). All five at once made this page 3,500 px
# tall and among the slowest to open.
SECTIONS = {"Judges against humans": ("humans", vs_humans), "Judges against each other": ("judges", vs_judges),
            "Position and self-preference": ("bias", bias), "Among annotators": ("annotators", among_annotators)}
if agreement_view.has_llmbar(workspace):
    SECTIONS["LLMBar"] = ("llmbar", show_llmbar)
tabs = st.tabs(list(SECTIONS), key="section", on_change="rerun", bind="query-params")
for tab, (section, show) in zip(tabs, SECTIONS.values(), strict=False):
    if tab.open:
        view = agreement_view.agreement_overview(workspace, bootstrap=rounds, sections=(section,))
        with tab:
            show(view)


def certification_panel() -> None:
    """Can this judge replace the annotators? The verdict from its random/active audits (
    lsqa.stats.certification, the same as `lsqa certify`)."""
    st.divider()
    st.subheader("Can this judge replace the annotators?")
    judges = [j for names in common.judges_by_family(workspace).values() for j in names]
    if not judges:
        st.info("No judge verdicts yet.")
        return
    defaults = agreement_view.Thresholds()
    c = st.columns(4)
    judge = c[0].selectbox("Judge", judges, key="cert_judge")
    min_agreement = c[1].number_input("Minimum agreement", 0.01, 1.0, defaults.min_agreement, 0.01, key="cert_min_agr",
                                      help="The lower end of the judge's agreement interval must reach this")
    min_recall = c[2].number_input("Minimum recall per label", 0.01, 1.0, defaults.min_recall, 0.01, key="cert_min_rec",
                                   help="For each label people gave: of the verdicts they labelled so, the share "
                                        "the judge labelled so too (its lower end must reach this)")
    epsilon = c[3].number_input("ε (alternative annotator test)", 0.0, 0.5, defaults.epsilon, 0.05, key="cert_eps",
                                help="How much better than the judge people must be to keep their place: 0.1 for "
                                     "crowd workers, 0.15 for skilled annotators, 0.2 for experts (Calderon et al. 2025)")
    try:
        view = agreement_view.certification_panel(workspace, judge, agreement_view.Thresholds(
            min_agreement=min_agreement, min_recall=min_recall, epsilon=epsilon))
    except ValueError as exc:  # a judge whose verdicts all failed to parse has nothing to certify
        st.info(md(str(exc)))
        return
    say = {agreement_view.REPLACEABLE: st.success, agreement_view.NOT_REPLACEABLE: st.error}.get(view["verdict"], st.warning)
    say(md(view["headline"]))
    st.caption(f"From {view['n_audits']} random or active audits ({md(view['design'] or 'none yet')}), each weighed by "
               "how likely it was to be drawn. Priority-queue reviews are left out: they are picked for disagreement. "
               "The intervals hold however often you re-check as audits come in (an anytime-valid confidence "
               "sequence), so looking after every batch does not raise the chance of a wrong verdict.")
    st.dataframe(view["rows"], hide_index=True, width="stretch", key="cert_table")
    for line in view["reasons"]:
        st.markdown(f"- {md(line)}")
    if view["ceiling_rows"]:
        st.markdown("**The people's ceiling**: on verdicts two or more people labelled")
        st.dataframe(view["ceiling_rows"], hide_index=True, width="stretch", key="cert_ceiling")
    if view["alt_rows"]:
        alt = view["alt_test"]
        st.markdown(f"**Alternative annotator test** (Calderon et al. 2025): the judge wins against "
                    f"{alt['winning_rate']:.0%} of {alt['n_annotators']} annotators — "
                    f"{'passed' if alt['passed'] else 'failed'} (50% passes)")
        st.dataframe(view["alt_rows"], hide_index=True, width="stretch", key="cert_alt")
    for note in view["notes"]:
        st.caption(md(note))


certification_panel()
