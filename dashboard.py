"""lsqa dashboard, served with its sign-in front: ``make run``, or
``streamlit run dashboard.py --server.address 127.0.0.1``.

``app.py`` is the dashboard itself; this file serves it as a Streamlit ``st.App`` (an ASGI app on
Starlette, run by ``streamlit run`` with uvicorn) with the sign-in front in front of it
(``lsqa.dashboard.sign_in_front``): the front exchanges a personal link's token once and keeps the
browser signed in with an ``HttpOnly`` session cookie, which no page script — this dashboard's or
another local app's — can read. Beside it, the Audit desk's door (``lsqa.dashboard.audit_front``): a
decision by key is one small HTTP request, not a Streamlit run. ``streamlit run app.py`` still serves a one-person workspace, or a
team behind a trusted proxy (``identity_header``), but signs nobody in with a link, and its Audit page
only shows (its desk's keys need the door).
"""

import streamlit as st
from starlette.middleware import Middleware

import lsqa  # noqa: F401  (first: the process defaults, offline and one BLAS thread)
from lsqa import store
from lsqa.dashboard.audit_front import AuditDeskFront
from lsqa.dashboard.sign_in_front import SignInFront

# Requests come seconds apart: the workspace stays attached between them, which spares each an ATTACH
# and a checkpoint (a command line that wants the file says so and gets it at once; lsqa.store.db).
SERVED_LINGER_S = 15.0
store.linger(SERVED_LINGER_S)

app = st.App("app.py", middleware=[Middleware(SignInFront), Middleware(AuditDeskFront)])

if __name__ == "__main__":
    app.run()
