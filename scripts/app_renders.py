"""Open a running dashboard the way a browser does and say what app.py drew.

Streamlit's index page and ``/_stcore/health`` answer before and whatever app.py does: only a
session on ``/_stcore/stream`` runs the script. This connects there (the ``streamlit`` websocket
subprotocol, protobuf messages from streamlit.proto), asks for one run of the page, and collects
the elements the run sends until it finishes: headings, text, alerts and any exception app.py or
its page raised.

    python scripts/app_renders.py http://127.0.0.1:8501 --expect "lsqa — long-span question answering"

exits 0 when the run finished without an exception and drew a heading with the expected text,
else prints what it saw and exits 1. scripts/smoke_make_run.sh runs it against `make run`;
tests/dashboard/test_app_serves.py against a server on a free port.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field


@dataclass
class Rendered:
    """What one run of the app sent: element texts by kind, exceptions, and whether it finished."""

    headings: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)      # markdown, alerts, metric labels and values
    exceptions: list[str] = field(default_factory=list)  # "Type: message" of each st.exception element
    finished: bool = False
    page_title: str = ""

    def problems(self, expect: str) -> list[str]:
        """Why this run does not show a working app with a heading containing ``expect`` (empty: it does)."""
        out = []
        if not self.finished:
            out.append("the script run did not finish")
        out.extend(f"app raised {e}" for e in self.exceptions)
        if not any(expect in h for h in self.headings):
            out.append(f"no heading contains {expect!r}; headings: {self.headings}")
        return out


def render(url: str, *, query: str = "", timeout_s: float = 120) -> Rendered:
    """One run of the app at ``url`` (``http://host:port``) for a new session; what it drew."""
    # Streamlit's own message classes: this script speaks its protocol (not lsqa/, so no door is crossed).
    from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: TID251
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: TID251
    from websockets.sync.client import connect

    out = Rendered()
    stream = url.rstrip("/").replace("http://", "ws://", 1).replace("https://", "wss://", 1) + "/_stcore/stream"
    with connect(stream, subprotocols=["streamlit"], open_timeout=timeout_s, max_size=None) as ws:
        ask = BackMsg()
        ask.rerun_script.query_string = query
        ws.send(ask.SerializeToString())
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            msg = ForwardMsg()
            msg.ParseFromString(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            kind = msg.WhichOneof("type")
            if kind == "page_config_changed":
                out.page_title = msg.page_config_changed.title
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                _collect(msg.delta.new_element, out)
            elif kind == "script_finished":
                # FINISHED_SUCCESSFULLY; a run that raised also finishes, its exception drawn as an element.
                out.finished = msg.script_finished == ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY
                break
    return out


def _collect(element, out: Rendered) -> None:
    kind = element.WhichOneof("type")
    body = getattr(element, kind)
    if kind == "exception":
        out.exceptions.append(f"{body.type}: {body.message}")
    elif kind == "heading":
        out.headings.append(body.body)
    elif kind in ("markdown", "alert", "text"):
        out.texts.append(body.body)
    elif kind == "metric":
        out.texts.append(f"{body.label}: {body.body}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the dashboard's base URL, e.g. http://127.0.0.1:8501")
    parser.add_argument("--expect", required=True, help="text of a heading the default page draws")
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args(argv)
    seen = render(args.url, timeout_s=args.timeout)
    problems = seen.problems(args.expect)
    if problems:
        print("app.py did not render:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    print(f"app.py rendered {len(seen.headings)} headings and {len(seen.texts)} texts, first: {seen.headings[0]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
