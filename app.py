"""lsqa dashboard: navigation over pages/. Start with `make run` (http://127.0.0.1:8501).

Besides the navigation, this file keeps the one piece of state every page shares: who acts
(``lsqa.dashboard.sign_in``). In a workspace with people, a personal link (``/?token=…``) signs a
person in once: served by ``dashboard.py`` (``make run``), the sign-in front exchanges the token
before this script runs and sets the browser's session cookie, ``HttpOnly`` (``lsqa.team.sessions``),
which this script reads, so that a reload, a new tab or a page change stays signed in until *Sign
out*; every page asks for a sign-in until then. Served as ``streamlit run app.py`` (no front), a
link signs nobody in and the page says how to start the dashboard. In a workspace without people, the annotator is a typed
name, kept in the session and in the URL (``?annotator=<name>``) so a bookmark or a reload keeps it
without cookies; it may act only while the dashboard listens on this machine's loopback address.
"""

import lsqa  # noqa: F401  (first: it sets the process defaults, offline and one BLAS thread, before numpy loads)

# isort: split
import streamlit as st

st.set_page_config(page_title="lsqa — long-span QA workbench", layout="wide")

# Emoji, not Streamlit's Material icon names: the browser fetches each of those as an SVG from
# fonts.gstatic.com, and the dashboard makes no request beyond 127.0.0.1 (it runs offline;
# tests/browser/test_queue_end_browser.py fails on any).
PAGES = [
    st.Page("pages/overview.py", title="Overview", icon="🏠", default=True),
    st.Page("pages/run.py", title="Run", icon="▶️"),
    st.Page("pages/audit.py", title="Audit", icon="✅"),
    st.Page("pages/adjudicate.py", title="Adjudicate", icon="⚖️"),
    st.Page("pages/reference_errors.py", title="Reference errors", icon="🚩"),
    st.Page("pages/agreement.py", title="Agreement", icon="🤝"),
    st.Page("pages/leaderboard.py", title="Leaderboard", icon="🏆"),
    st.Page("pages/corpus.py", title="Corpus", icon="📖"),
]

from urllib.parse import urlsplit  # noqa: E402

from lsqa.dashboard import LsqaError, common, sign_in  # noqa: E402

ss = st.session_state
# The sign-in front (dashboard.py) takes every ?token= before this script sees it: one that gets here
# means it is not in place, and a script cannot set an HttpOnly cookie, so the link signs nobody in.
if "token" in st.query_params:
    del st.query_params["token"]
    ss["lsqa_link_problem"] = "no-front"
if "sign_in" in st.query_params:  # the front's code for a link that signed nobody in (sign_in.LINK_PROBLEMS)
    ss["lsqa_link_problem"] = st.query_params["sign_in"]
    del st.query_params["sign_in"]
if "annotator" not in ss:
    ss["annotator"] = st.query_params.get("annotator", "")
SERVER_ADDRESS = st.get_option("server.address")
WORKSPACE = common.current_workspace()
COOKIE = sign_in.cookie_name(WORKSPACE)
# The browser's session cookie (HttpOnly: set by the front, read here from the websocket's handshake)
# as it was when this tab connected. Sign out is the front's (a form posted to /sign-out): it ends the
# session in the workspace, so this tab's next run, and every other tab's, finds nobody.
if "lsqa_session" not in ss:
    ss["lsqa_session"] = st.context.cookies.get(COOKIE)
try:
    SETTINGS = sign_in.load_settings()
    presence = sign_in.who_is_here(WORKSPACE, session_id=ss.get("lsqa_session"), headers=st.context.headers,
                                   typed_name=ss["annotator"], server_address=SERVER_ADDRESS,
                                   identity_header=SETTINGS.identity_header,
                                   link_problem=ss.get("lsqa_link_problem", ""))
except LsqaError as exc:  # e.g. a settings file that cannot be read: say so instead of a traceback
    st.error(str(exc))
    st.stop()
if presence.person is not None:
    ss.pop("lsqa_link_problem", None)
ss["lsqa_presence"] = presence  # the pages read who acts from here (sign_in.presence_of)


def _new_link():
    made = sign_in.new_link(WORKSPACE, presence.name, by=presence.person, link_days=SETTINGS.link_days)
    base = urlsplit(st.context.url or "")
    ss["lsqa_new_link"] = (f"{base.scheme}://{base.netloc}/?token={made['token']}", made["expires_at"])


def _sign_in_page():
    st.title("Sign in")
    if presence.problem:
        st.error(presence.problem)
    st.markdown("This workspace has people: open your personal sign-in link (an admin makes one with "
                "`lsqa users add NAME --role ROLE` or `lsqa users link NAME`), or "
                f"[paste its token]({sign_in.PASTE_PATH}). A link signs in once, in the browser that opens it.")


if presence.team:
    st.query_params.pop("annotator", None)  # a typed name acts no more once the workspace has people
    if presence.person is None:  # the only page until somebody signs in: a page of its own, so its
        st.navigation([st.Page(_sign_in_page, title="Sign in")], position="hidden").run()  # widgets keep their ids
        st.stop()
    st.sidebar.markdown(sign_in.signed_in_caption(presence))
    if presence.person.via in ("token", "session"):  # a proxy's header signs people in (and out) itself
        st.sidebar.html(sign_in.SIGN_OUT_FORM)
        with st.sidebar.expander("A new sign-in link"):
            st.caption(f"For another browser of yours: it signs you in once, within {SETTINGS.link_days} days, "
                       "and your previous link stops working.")
            st.button("Make a new link", on_click=_new_link, key="new_link")
            made = ss.pop("lsqa_new_link", None)  # shown once: a rerun forgets it
            if made:
                st.code(made[0], language=None)
                st.caption(f"Shown only now; expires {made[1]:%Y-%m-%d %H:%M} UTC.")
else:
    st.sidebar.text_input("Annotator", key="annotator", placeholder="your name",
                          help="Saved with every review and flag. Kept in the URL (?annotator=…).")
    if ss["annotator"].strip():
        st.query_params["annotator"] = ss["annotator"].strip()
    note = sign_in.read_only_note(presence, SERVER_ADDRESS)
    if note:
        st.sidebar.warning(note)

with common.kept_open(WORKSPACE):  # one attachment per render, not one per read
    try:
        st.navigation(PAGES).run()
    except LsqaError as exc:  # e.g. a workspace another process holds too long: what to do, not a traceback
        st.error(str(exc))
