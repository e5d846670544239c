"""lsqa dashboard, served with its sign-in front: ``make run``, or
``streamlit run dashboard.py --server.address 127.0.0.1``.

``app.py`` is the dashboard itself; this file serves it as a Streamlit ``st.App`` (an ASGI app on
Starlette, run by ``streamlit run`` with uvicorn) with the sign-in front in front of it
(``lsqa.dashboard.sign_in_front``): the front exchanges a personal link's token once and keeps the
browser signed in with an ``HttpOnly`` session cookie, which no page script — this dashboard's or
another local app's — can read. ``streamlit run app.py`` still serves a one-person workspace, or a
team behind a trusted proxy (``identity_header``), but signs nobody in with a link.
"""

import streamlit as st
from starlette.middleware import Middleware

import lsqa  # noqa: F401  (first: the process defaults, offline and one BLAS thread)
from lsqa.dashboard.sign_in_front import SignInFront

app = st.App("app.py", middleware=[Middleware(SignInFront)])

if __name__ == "__main__":
    app.run()
