"""A scriptable OpenAI-compatible chat server on 127.0.0.1 for driving litellm's real HTTP path.

litellm reaches it as ``openai/<name>`` with ``api_base=<server.api_base>``. Each test scripts what
the server does (answer text or a function of the request, latency, N×429 then success, a fixed
HTTP status, a hang longer than the client timeout, garbage bodies, holding requests until the
test releases them) and reads back every request
it received, headers included, plus the most requests it had in flight at once.

Beyond chat completions it speaks what the prompt-caching and batch paths of lsqa need:

* **Prefix caching** (``Script(prefix_cache=True)``): like OpenAI's and vLLM's automatic prefix
  caching, a prompt that begins with words an earlier prompt began with reports them as
  ``usage.prompt_tokens_details.cached_tokens`` (in whole blocks of ``cache_block`` words).
* **Anthropic's Messages API** (``POST .../v1/messages``): caches only up to a content block
  marked ``cache_control``, as Anthropic does; the first such prompt reports
  ``cache_creation_input_tokens``, a repeat ``cache_read_input_tokens``.
* **Files and batches** (``/v1/files``, ``/v1/batches``; see :mod:`tests.support.batch_api`).

Use the ``llm_server`` fixture (import it into a test module) or, for a separate process,
``python -m tests.support.llm_server --latency 0.1`` which prints ``PORT <n>`` and serves until killed.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import pytest


@dataclass
class Recorded:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it was not JSON
    received_at: float

    @property
    def prompt(self) -> str:
        """The concatenated message contents: handy for matching a request to a test's call."""
        try:
            return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))
        except AttributeError:
            return ""


@dataclass
class Script:
    """What the server does. Fields combine: latency applies before any outcome."""

    reply: str | Callable[[dict], str] = "ok"
    latency_s: float = 0.0            # the answer leaves this long after the request arrived
    fail_first: int = 0               # answer the first N requests with fail_status ...
    fail_status: int = 429            # ... then succeed
    status: int | None = None         # answer every request with this status (error body)
    hang_s: float = 0.0               # sleep this long before answering (beyond the client timeout)
    hang_first: int = 0               # with hang_s: only the first N requests hang
    garbage: str | None = None        # "non-json" | "no-choices"
    usage: bool = True                # include a usage block
    usage_block: dict | None = None   # ... this one, as is (negative, absurd or non-numeric counts), instead of the counted one
    hold_after: int = 0               # requests from this index on wait for ``release()`` (0: none wait)
    error_body: dict = field(default_factory=lambda: {"error": {"message": "scripted failure", "type": "server_error"}})
    prefix_cache: bool = False        # report a prompt's start seen before as cached tokens (OpenAI/vLLM style)
    cache_block: int = 16             # ... counted in whole blocks of this many words
    batch_hold: bool = False          # batches stay in_progress until ``release()`` (see tests.support.batch_api)
    upload_hold: bool = False         # file uploads wait for ``release()`` (a slow upload of a big batch)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client reuses connections as with a real API
    disable_nagle_algorithm = True  # headers and body go out as separate writes: avoid the 40 ms delayed-ACK stall
    server: "_Server"

    def log_message(self, *args):  # silence the per-request stderr line
        pass

    def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        try:
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def do_GET(self):  # noqa: N802 - http.server naming
        owner: FakeLLMServer = self.server.owner
        if "/batches" in self.path or "/files" in self.path:
            owner._record(Recorded(self.path, dict(self.headers.items()), None, time.monotonic()))
            try:
                self._send(*owner.batches.get(self.path))
            finally:
                owner._leave()
        elif self.path.rstrip("/").endswith("/stats"):  # for a server in another process (the benchmark)
            with owner._lock:
                stats = {"requests": len(owner.requests), "max_in_flight": owner.max_in_flight}
                answer_s = sorted(at - owner.requests[i].received_at for i, _, at in owner.completed)
            if answer_s:  # how long requests spent in the server, arrival to answer sent
                stats["answer_ms_median"] = 1000 * answer_s[len(answer_s) // 2]
                stats["answer_ms_max"] = 1000 * answer_s[-1]
            self._send(200, json.dumps(stats).encode())
        else:
            self._send(200, b'{"object": "list", "data": []}')

    def do_POST(self):  # noqa: N802
        arrived = time.monotonic()  # the latency counts from here: parsing and recording are part of it
        owner: FakeLLMServer = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length)
        if self.path.split("?")[0].endswith("/files"):  # a multipart upload: kept as bytes
            index = owner._record(Recorded(self.path, dict(self.headers.items()), None, arrived))
            try:
                owner._hold_upload()
                self._send(*owner.batches.upload(self.headers.get("Content-Type", ""), data))
            finally:
                owner._leave()
            return
        raw = data.decode("utf-8", "replace")
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = raw
        index = owner._record(Recorded(self.path, dict(self.headers.items()), body, arrived))
        if "/batches" in self.path:
            try:
                self._send(*owner.batches.post(self.path, body if isinstance(body, dict) else {}))
            finally:
                owner._leave()
            return
        try:
            status, payload, ctype = owner._respond(index, body, arrived, anthropic=self.path.split("?")[0].endswith("/messages"))
            self._send(status, payload, ctype)
            owner._completed(index, status)
        finally:
            owner._leave()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    owner: "FakeLLMServer"


class FakeLLMServer:
    """The server object a test holds: ``script(...)``, ``requests``, ``max_in_flight``."""

    def __init__(self, script: Script | None = None):
        self._script = script or Script()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._released = threading.Event()
        self.requests: list[Recorded] = []
        self.completed: list[tuple[int, int, float]] = []  # (request index, status, time answered)
        self.in_flight = 0
        self.max_in_flight = 0
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._seen_prompts: list[list[str]] = []   # word lists of earlier prompts (prefix caching)
        self._anthropic_cached: set[tuple[str, ...]] = set()  # prefixes written to the Anthropic-style cache
        from tests.support.batch_api import BatchAPI

        self.batches = BatchAPI(self)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, port: int = 0) -> "FakeLLMServer":
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes hanging handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ---------------------------------------------------------------------------
    def script(self, **fields) -> "FakeLLMServer":
        """Replace the behaviour (unnamed fields take their defaults) and reset the counters."""
        with self._lock:
            self._script = Script(**fields)
            self._released.clear()
            self.requests.clear()
            self.completed.clear()
            self.max_in_flight = 0
            self._seen_prompts.clear()
            self._anthropic_cached.clear()
        return self

    def release(self) -> None:
        """Let the requests held by ``hold_after`` (and any later ones) through."""
        self._released.set()

    def prompts(self) -> list[str]:
        with self._lock:
            return [r.prompt for r in self.requests]

    # -- request handling (called from handler threads) ---------------------------------------
    def _record(self, rec: Recorded) -> int:
        with self._lock:
            self.requests.append(rec)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return len(self.requests) - 1

    def _completed(self, index: int, status: int) -> None:
        with self._lock:
            self.completed.append((index, status, time.monotonic()))

    def _hold_upload(self) -> None:
        if self._script.upload_hold:
            while not (self._released.is_set() or self._stopping.is_set()):
                self._released.wait(0.05)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _respond(self, index: int, body: Any, arrived: float, anthropic: bool = False) -> tuple[int, bytes, str]:
        s = self._script
        if s.latency_s:  # answer ``latency_s`` after the request arrived, as a remote API would
            self._stopping.wait(max(0.0, arrived + s.latency_s - time.monotonic()))
        if s.hold_after and index >= s.hold_after:
            while not (self._released.is_set() or self._stopping.is_set()):
                self._released.wait(0.05)
        if s.hang_s and (not s.hang_first or index < s.hang_first):
            self._stopping.wait(s.hang_s)
        if s.status is not None:
            return s.status, json.dumps(s.error_body).encode(), "application/json"
        if index < s.fail_first:
            return s.fail_status, json.dumps(s.error_body).encode(), "application/json"
        if s.garbage == "non-json":
            return 200, b"<html>502 upstream hiccup</html>", "text/html"
        request = body if isinstance(body, dict) else {}
        if s.garbage == "no-choices":
            return 200, json.dumps({"id": "x", "object": "chat.completion", "model": request.get("model", "")}).encode(), "application/json"
        payload = self._anthropic_message(index, request) if anthropic else self.chat_completion(index, request)
        return 200, json.dumps(payload).encode(), "application/json"

    def chat_completion(self, index: int | str, request: dict) -> dict:
        """The OpenAI chat-completion body answering ``request`` (also used for batch lines)."""
        s = self._script
        text = s.reply(request) if callable(s.reply) else s.reply
        words = _words(request.get("messages", []))
        payload = {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        }
        if s.usage:
            completion_words = len(text.split())
            payload["usage"] = {
                "prompt_tokens": len(words),
                "completion_tokens": completion_words,
                "total_tokens": len(words) + completion_words,
            }
            if s.prefix_cache:
                payload["usage"]["prompt_tokens_details"] = {"cached_tokens": self._cached_prefix(words)}
            if s.usage_block is not None:
                payload["usage"] = dict(s.usage_block)
        return payload

    def _cached_prefix(self, words: list[str]) -> int:
        """Words at the start of ``words`` that an earlier prompt began with, in whole blocks."""
        block = max(1, self._script.cache_block)
        with self._lock:
            best = 0
            for seen in self._seen_prompts:
                n = 0
                for a, b in zip(seen, words, strict=False):
                    if a != b:
                        break
                    n += 1
                best = max(best, n)
            self._seen_prompts.append(words)
        return best // block * block

    def _anthropic_message(self, index: int, request: dict) -> dict:
        """An Anthropic Messages API answer: the prompt up to the last block marked
        ``cache_control`` is written to the cache the first time and read from it after."""
        s = self._script
        text = s.reply(request) if callable(s.reply) else s.reply
        blocks = [{"type": "text", "text": request["system"]}] if isinstance(request.get("system"), str) else list(request.get("system") or [])
        for message in request.get("messages", []):
            content = message.get("content", "")
            blocks.extend([{"type": "text", "text": content}] if isinstance(content, str) else content)
        marked = max((i for i, b in enumerate(blocks) if b.get("cache_control")), default=-1)
        prefix = tuple(" ".join(str(b.get("text", "")) for b in blocks[:marked + 1]).split())
        total = len(" ".join(str(b.get("text", "")) for b in blocks).split())
        read = written = 0
        if prefix:
            with self._lock:
                if prefix in self._anthropic_cached:
                    read = len(prefix)
                else:
                    written = len(prefix)
                    self._anthropic_cached.add(prefix)
        return {
            "id": f"msg_{index}", "type": "message", "role": "assistant", "model": request.get("model", "fake"),
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": total - read - written, "output_tokens": len(text.split()),
                      "cache_creation_input_tokens": written, "cache_read_input_tokens": read},
        }


def _words(messages: list) -> list[str]:
    """A prompt's words (the server's tokens): every text of every message, in order."""
    texts = []
    for m in messages:
        content = m.get("content", "") if isinstance(m, dict) else ""
        if isinstance(content, list):
            texts.extend(str(block.get("text", "")) for block in content if isinstance(block, dict))
        else:
            texts.append(str(content))
    return " ".join(texts).split()


@pytest.fixture
def llm_server():
    """A running FakeLLMServer on an ephemeral 127.0.0.1 port, stopped at teardown."""
    server = FakeLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI-compatible chat API on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--reply", default="", help="fixed answer text; default echoes the last words of the prompt")
    args = parser.parse_args(argv)

    def echo(request: dict) -> str:
        prompt = " ".join(str(m.get("content", "")) for m in request.get("messages", []))
        return args.reply or "echo: " + " ".join(prompt.split()[-8:])

    # Up to 16 handler threads wake from their latency wait at once and each needs the GIL; with the
    # default 5 ms switch interval they would queue behind each other and the server would add its
    # own milliseconds to the latency the benchmark asked for.
    sys.setswitchinterval(0.0005)
    server = FakeLLMServer(Script(reply=echo, latency_s=args.latency)).start(args.port)
    print(f"PORT {server.port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
