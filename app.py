"""lsqa dashboard: navigation over pages/. Start with `make run` (http://127.0.0.1:8501).

Besides the navigation, this file keeps the one piece of state every page shares: who acts
(``lsqa.dashboard.sign_in``). In a workspace with people, a personal link (``/?token=…``) signs a
person in: the token moves from the address bar to the session, and the browser keeps a session
cookie (``lsqa.team.sessions``) so that a reload or a new tab stays signed in until *Sign out*;
every page asks for a sign-in until then. In a workspace without people, the annotator is a typed
name, kept in the session and in the URL (``?annotator=<name>``) so a bookmark or a reload keeps it
without cookies; it may act only while the dashboard listens on this machine's loopback address.
"""

import lsqa  # noqa: F401  (first: it sets the process defaults, offline and one BLAS thread, before numpy loads)

# isort: split
import streamlit as st

st.set_page_config(page_title="lsqa — long-span QA workbench", layout="wide")

# Emoji, not Streamlit's Material icon names: the browser fetches each of those as an SVG from
# fonts.gstatic.com, and the dashboard makes no request beyond 127.0.0.1 (it runs offline;
# tests/test_queue_end_browser.py fails on any).
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

from lsqa import team  # noqa: E402
from lsqa.config.settings import load_settings  # noqa: E402
from lsqa.dashboard import page_data, sign_in  # noqa: E402
from lsqa.errors import LsqaError  # noqa: E402

ss = st.session_state
if "token" in st.query_params:  # a personal link: the token goes to the session, out of the address bar
    ss["lsqa_token"] = st.query_params["token"]
    del st.query_params["token"]
if "annotator" not in ss:
    ss["annotator"] = st.query_params.get("annotator", "")
SERVER_ADDRESS = st.get_option("server.address")
WORKSPACE = page_data.current_workspace()
COOKIE = sign_in.cookie_name(WORKSPACE)
# The browser's session cookie as it was when this tab connected (Streamlit reads cookies once); after
# a sign out in this tab it is not tried again (the workspace has ended that session anyway).
if "lsqa_session" not in ss and not ss.get("lsqa_signed_out"):
    ss["lsqa_session"] = st.context.cookies.get(COOKIE)
try:
    presence = sign_in.who_is_here(WORKSPACE, token=ss.get("lsqa_token"), session_id=ss.get("lsqa_session"),
                                   headers=st.context.headers, typed_name=ss["annotator"],
                                   server_address=SERVER_ADDRESS, identity_header=load_settings().identity_header)
    if presence.person is not None and presence.person.via == "token" and not ss.get("lsqa_session_set"):
        # Signed in by the link just now: this browser keeps a session, so a reload or a new tab stays in.
        ss["lsqa_session"] = team.open_session(WORKSPACE, presence.person)
        ss["lsqa_session_set"] = True
        if ss["lsqa_session"]:
            st.html(sign_in.cookie_script(COOKIE, ss["lsqa_session"], team.SESSION_DAYS * 86400),
                    unsafe_allow_javascript=True)
except LsqaError as exc:  # e.g. a settings file that cannot be read: say so instead of a traceback
    st.error(str(exc))
    st.stop()
ss["lsqa_presence"] = presence  # the pages read who acts from here (sign_in.presence_of)
if ss.pop("lsqa_forget_cookie", False):
    st.html(sign_in.cookie_script(COOKIE, None, 0), unsafe_allow_javascript=True)


def _sign_out():
    team.end_session(WORKSPACE, ss.pop("lsqa_session", None))
    for key in ("lsqa_token", "lsqa_session_set"):
        ss.pop(key, None)
    ss["lsqa_signed_out"] = ss["lsqa_forget_cookie"] = True


def _sign_in_typed():
    ss["lsqa_token"] = ss.pop("sign_in_token", "").strip()  # the field forgets it: one place holds a token


def _sign_in_page():
    st.title("Sign in")
    if presence.problem:
        st.error(presence.problem)
    st.markdown("This workspace has people: open your personal sign-in link (an admin makes one with "
                "`lsqa users add NAME --role ROLE`), or paste its token here.")
    st.text_input("Token", type="password", key="sign_in_token", on_change=_sign_in_typed)
    st.button("Sign in", key="sign_in", on_click=_sign_in_typed)


if presence.team:
    st.query_params.pop("annotator", None)  # a typed name acts no more once the workspace has people
    if presence.person is None:  # the only page until somebody signs in: a page of its own, so its
        st.navigation([st.Page(_sign_in_page, title="Sign in")], position="hidden").run()  # widgets keep their ids
        st.stop()
    st.sidebar.markdown(sign_in.signed_in_caption(presence))
    st.sidebar.button("Sign out", on_click=_sign_out, key="sign_out")
else:
    st.sidebar.text_input("Annotator", key="annotator", placeholder="your name",
                          help="Saved with every review and flag. Kept in the URL (?annotator=…).")
    if ss["annotator"].strip():
        st.query_params["annotator"] = ss["annotator"].strip()
    note = sign_in.read_only_note(presence, SERVER_ADDRESS)
    if note:
        st.sidebar.warning(note)

with page_data.kept_open(WORKSPACE):  # one attachment per render, not one per read
    try:
        st.navigation(PAGES).run()
    except LsqaError as exc:  # e.g. a workspace another process holds too long: what to do, not a traceback
        st.error(str(exc))
