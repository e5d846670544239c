"""Another process without another interpreter start-up, for tests that need "another process" (file
locks held elsewhere, kill -9, a second writer) but not a fresh interpreter.

A server started once per test process (per pytest-xdist worker) imports lsqa and waits on a Unix
socket; each request forks one child, the way multiprocessing's "forkserver" start method does. The
child is a process of its own: its own pid (``kill -9`` works on it), its stdin/stdout/stderr are the
pipes or files the caller passed (sent over the socket as file descriptors), it runs in the cwd, with
the environment and ``sys.argv`` asked for, the code as ``python -c CODE ARGS...`` (or ``python -m
MODULE ARGS...``) would, and ends as an interpreter ends (non-daemon threads joined, atexit handlers
run, its exit status or the signal that killed it reported back). It opens its own DuckDB connections
and takes its own file locks: the server holds none.

What it is not: a fresh interpreter. Modules the server imported are already in ``sys.modules``, so a
test about what start-up imports, or about an installed copy of lsqa (a wheel on another
``PYTHONPATH``), starts a real interpreter (``fresh=True`` or ``subprocess``). Environment variables
that a module the server imported read at import time (e.g. ``LSQA_BATCH_POLL_S``) are recorded; a
request that sets one of them differently gets a fresh interpreter instead, so no child ever runs with
a module-level setting read from another environment."""

from __future__ import annotations

import atexit
import io
import json
import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# What the server imports before it forks: what the tests' children import (the store, the CLI, the
# audit actions, the study pipeline), but not litellm (the costliest import) unless a request asks for it.
PRELOAD = ("lsqa.store", "lsqa.audit", "lsqa.cli", "lsqa.study.pipeline")
# Children that make LLM calls (``lsqa run``, ``llm.complete_many``): litellm imported too, by servers of
# their own started with the children's environment (``start(..., own_env=True)``): litellm is the costliest
# import of a child.
LLM_CLIENTS = (*PRELOAD, "litellm")


# ------------------------------------------------------------------------------------------- server

class _Server:
    """The server's state: the modules it imported, the environment keys they read, its children."""

    def __init__(self, address: str, preload: tuple[str, ...]):
        self.read_at_import: set[str] = set()
        read = self.read_at_import

        class _Recording(type(os.environ)):  # the same mapping, which notes every key read through it
            def __getitem__(self, key):
                read.add(key)
                return super().__getitem__(key)

            def __contains__(self, key):
                read.add(key)
                return super().__contains__(key)

        self.started_env = dict(os.environ)  # before the recording starts: copying reads every key
        os.environ.__class__ = _Recording
        self.load(preload)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(address)
        self.listener.listen(64)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, "accept")
        self.sel.register(sys.stdin, selectors.EVENT_READ, "control")  # EOF: the test process has gone
        self.children: dict[int, tuple[socket.socket, int]] = {}  # pidfd -> (connection, pid)

    @staticmethod
    def load(names) -> None:
        import importlib

        for name in names:
            if name not in sys.modules:
                importlib.import_module(name)

    def serve(self) -> dict:
        """The loop. Returns only in a forked child, with the request that child is to run."""
        print("ready", flush=True)
        while True:
            for key, _ in self.sel.select():
                if key.data == "control":
                    if not os.read(sys.stdin.fileno(), 4096):
                        sys.exit(0)
                elif key.data == "accept":
                    request = self.accept()
                    if request is not None:
                        return request
                else:
                    self.ended(key.fd)

    def accept(self) -> dict | None:
        """Read one request and fork its child; the request in the child, None in the server."""
        import gc

        conn, _ = self.listener.accept()
        msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        request = json.loads(msg)
        refusal = None
        try:
            self.load(request.get("preload", ()))
        except Exception as exc:  # noqa: BLE001 - said to the caller, who fails the test
            refusal = {"error": f"cannot import {request.get('preload')}: {exc!r}"}
        stale = sorted(k for k in self.read_at_import if request["env"].get(k) != self.started_env.get(k))
        if refusal or stale:
            _reply(conn, refusal or {"stale": stale})
            for fd in fds:
                os.close(fd)
            conn.close()
            return None
        sys.stdout.flush()
        sys.stderr.flush()
        gc.freeze()  # the collector in the child leaves the inherited objects' pages alone
        pid = os.fork()
        if pid == 0:
            self.sel.close()
            self.listener.close()
            conn.close()
            for pidfd, (other, _pid) in self.children.items():
                other.close()
                os.close(pidfd)
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            return request
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.children[pidfd] = (conn, pid)
        self.sel.register(pidfd, selectors.EVENT_READ, "child")
        _reply(conn, {"pid": pid})
        return None

    def ended(self, pidfd: int) -> None:
        """A child ended: its exit status (and CPU time) to the caller."""
        self.sel.unregister(pidfd)
        conn, pid = self.children.pop(pidfd)
        os.close(pidfd)
        _, status, usage = os.wait4(pid, 0)
        try:
            _reply(conn, {"returncode": os.waitstatus_to_exitcode(status), "cpu_s": usage.ru_utime + usage.ru_stime})
        except OSError:
            pass  # the caller stopped listening
        conn.close()


def _reply(conn: socket.socket, message: dict) -> None:
    conn.sendall(json.dumps(message).encode() + b"\n")


def _run_in_child(request: dict) -> None:
    """Become the process asked for (cwd, environment, argv, its own random state), run the code, and
    end as an interpreter ends: its exit status, non-daemon threads joined, atexit handlers run,
    output flushed. Then ``os._exit``: tearing down the modules inherited from the server would only
    copy their memory pages (as multiprocessing's children end)."""
    import atexit
    import threading
    import types

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()  # as a fresh interpreter: its own entropy, not the server's
    status = 0
    try:
        if "module" in request:
            import runpy

            sys.argv = [request["module"], *request["args"]]
            sys.path[0] = os.getcwd()
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        else:
            sys.argv = ["-c", *request["args"]]
            sys.path[0] = ""
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(request["code"], "<string>", "exec"), main.__dict__)  # noqa: S102 - the test's code
    except SystemExit as exc:
        status = _exit_status(exc.code)
    except BaseException:  # noqa: BLE001 - printed and exit 1, as the interpreter does
        sys.excepthook(*sys.exc_info())
        status = 1
    try:
        threading._shutdown()  # the interpreter's own wait for non-daemon threads at exit
        atexit._run_exitfuncs()
    except SystemExit as exc:
        status = _exit_status(exc.code)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001, S110 - a closed pipe: nothing more to say
                pass
        os._exit(status)


def _exit_status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


# ------------------------------------------------------------------------------------------- client

_servers: dict[tuple[str, ...], dict] = {}  # one server per set of modules it imports first
_server_lock = threading.Lock()


def _address(base: tuple[str, ...] = PRELOAD, env: dict[str, str] | None = None, index: int = 0) -> str:
    """The socket of the running server that imported ``base``, starting it on first use (once per
    test process and set) with this process's environment; with ``env``: the ``index``-th server of
    that set started with an environment of its own, started now with ``env`` if there is none."""
    key = base if env is None else (base, index)
    with _server_lock:
        server = _servers.get(key)
        if server is None or server["pid"] != os.getpid() or server["proc"].poll() is not None:
            folder = tempfile.mkdtemp(prefix="lsqa-forkserver-")
            address = os.path.join(folder, "s")
            env = os.environ if env is None else env
            env = {**env, "PYTHONPATH": os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH")) if p)}
            proc = subprocess.Popen([sys.executable, __file__, address, *base], cwd=PROJECT_ROOT, env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            ready = proc.stdout.readline()
            if ready.strip() != "ready":
                raise RuntimeError(f"the fork server did not start (exit {proc.wait()})")
            server = _servers[key] = {"pid": os.getpid(), "proc": proc, "address": address}
            atexit.register(_stop, proc, folder)
        return server["address"]


def _stop(proc: subprocess.Popen, folder: str) -> None:
    """End the server and remove its socket's folder: a test run leaves nothing in the temporary folder."""
    proc.stdin.close()  # the server exits on EOF
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(folder, ignore_errors=True)


class ForkedProcess:
    """The part of ``subprocess.Popen`` the tests use, for a child of the fork server."""

    def __init__(self, conn: socket.socket, pid: int, stdin, stdout, stderr, args):
        self._conn, self._buffer = conn, b""
        self.pid, self.returncode, self.args = pid, None, args
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr

    def _status(self, timeout: float | None) -> int | None:
        if self.returncode is not None:
            return self.returncode
        self._conn.settimeout(timeout)
        try:
            while b"\n" not in self._buffer:
                chunk = self._conn.recv(4096)
                if not chunk:
                    raise RuntimeError(f"the fork server went away while child {self.pid} ran")
                self._buffer += chunk
        except (TimeoutError, BlockingIOError):
            return None
        ended = json.loads(self._buffer.split(b"\n", 1)[0])
        self.returncode, self.cpu_s = ended["returncode"], ended["cpu_s"]
        self._conn.close()
        return self.returncode

    def poll(self) -> int | None:
        return self._status(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._status(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        import signal

        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        import signal

        self.send_signal(signal.SIGTERM)

    def communicate(self, input=None, timeout: float | None = None):  # noqa: A002 - Popen's name
        """Write ``input``, read stdout and stderr to their ends, wait: as ``Popen.communicate``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.stdin is not None:
            if input:
                self.stdin.write(input)
            self.stdin.close()
        streams = [s for s in (self.stdout, self.stderr) if s is not None]
        chunks: dict = {id(s): [] for s in streams}
        with selectors.DefaultSelector() as sel:
            for s in streams:
                sel.register(s.fileno(), selectors.EVENT_READ, s)
            while sel.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout)
                for key, _ in sel.select(left):
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        chunks[id(key.data)].append(data)
                    else:
                        sel.unregister(key.fd)
        outs = []
        for s in (self.stdout, self.stderr):
            if s is None:
                outs.append(None)
                continue
            raw = b"".join(chunks[id(s)])
            outs.append(raw.decode() if isinstance(s, io.TextIOBase) else raw)
            s.close()
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return tuple(outs)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for s in (self.stdin, self.stdout, self.stderr):
            if s is not None:
                s.close()
        self.wait()


def _child_ends(stdin, stdout, stderr) -> tuple[list[int], list[int | None], list[int]]:
    """The descriptors to send for the child's 0, 1, 2 (``ends``: those made here, closed once sent)
    and the caller's ends of the pipes (``mine``)."""
    ends, mine, send = [], [None, None, None], []
    for i, (how, inherit) in enumerate(((stdin, 0), (stdout, 1), (stderr, 2))):
        if how == subprocess.PIPE:
            r, w = os.pipe()
            child, mine[i] = (r, w) if i == 0 else (w, r)
            ends.append(child)
            send.append(child)
        elif how == subprocess.STDOUT and i == 2:  # stderr into the same pipe or file as stdout
            send.append(send[1])
        elif how == subprocess.DEVNULL:
            fd = os.open(os.devnull, os.O_RDWR)
            ends.append(fd)
            send.append(fd)
        else:
            send.append(inherit if how is None else how.fileno())
    return ends, mine, send


def start(code: str | None = None, *args, module: str | None = None, cwd=PROJECT_ROOT, env=None,
          stdin=None, stdout=None, stderr=None, text: bool = False, preload: tuple[str, ...] = (),
          base: tuple[str, ...] = PRELOAD, own_env: bool = False, fresh: bool = False):
    """Like ``subprocess.Popen([sys.executable, "-c", code, *args], ...)`` (or ``-m module``), the
    child forked from the pre-imported server. ``stdin``/``stdout``/``stderr``: None (inherit),
    ``subprocess.PIPE``, ``subprocess.DEVNULL`` or an open file. ``preload``: modules the server
    imports once before it forks (e.g. ``("litellm",)`` for children that make LLM calls). ``base``:
    the modules a server of its own imports at its start, for children that must not see another
    family's preloads (a Streamlit server: tests/support/streamlit_server.py; ``LLM_CLIENTS``).
    ``own_env``: the child is forked from a server of ``base`` started with ``env`` (or one started
    with an environment its modules read the same), so a variable read at import (``LSQA_BATCH_POLL_S``)
    set for the child does not cost a new interpreter each time. ``fresh``, or (without ``own_env``)
    an environment a pre-imported module read differently, gives a real new interpreter."""
    args = [str(a) for a in args]
    argv = [sys.executable, *(["-m", module] if module else ["-c", code]), *args]
    env = dict(os.environ if env is None else env)
    if fresh:
        return subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr, text=text)
    request = {"cwd": str(cwd), "env": env, "args": args, "preload": list(preload),
               **({"module": module} if module else {"code": code})}
    for index in range(4 if own_env else 1):  # own_env: the servers of base in turn, a new one if none fits
        ends, mine, send = _child_ends(stdin, stdout, stderr)
        try:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            conn.connect(_address(tuple(base), env, index) if own_env else _address(tuple(base)))
            socket.send_fds(conn, [json.dumps(request).encode()], send)
            line = b""
            while not line.endswith(b"\n"):
                chunk = conn.recv(4096)
                if not chunk:
                    raise RuntimeError("the fork server closed the connection")
                line += chunk
        finally:
            for fd in ends:
                os.close(fd)
        first, rest = line.split(b"\n", 1)
        answer = json.loads(first)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        if "stale" not in answer:
            break
        for fd in mine:  # set differently from what a pre-imported module read
            if fd is not None:
                os.close(fd)
        conn.close()
    else:  # no server read the environment as this child would: a real interpreter
        return subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr, text=text)
    streams = []
    for i, fd in enumerate(mine):
        if fd is None:
            streams.append(None)
        elif i == 0:
            streams.append(os.fdopen(fd, "w" if text else "wb"))
        else:
            streams.append(os.fdopen(fd, "r" if text else "rb"))
    proc = ForkedProcess(conn, answer["pid"], *streams, args=argv)
    proc._buffer = rest
    return proc


def llm_client(argv: list, env: dict | None = None, text: bool = False, cwd=PROJECT_ROOT):
    """``subprocess.Popen(argv, cwd=cwd, env=env, stdout=PIPE, stderr=PIPE, text=text)`` for ``argv`` =
    [python, "-c", CODE, *args], a child that makes LLM calls (``lsqa run``, ``llm.complete_many``): forked
    from a server that imported lsqa and litellm (``LLM_CLIENTS``, one per environment its modules read),
    not a new interpreter that imports them again."""
    assert list(argv[:2]) == [sys.executable, "-c"], argv
    return start(argv[2], *argv[3:], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text,
                 base=LLM_CLIENTS, own_env=True)


def run(code: str | None = None, *args, timeout: float | None = None, capture_output: bool = False,
        text: bool = False, input=None, **kwargs) -> subprocess.CompletedProcess:  # noqa: A002
    """Like ``subprocess.run`` for ``start``: on a timeout the child is killed and
    ``subprocess.TimeoutExpired`` raised."""
    if capture_output:
        kwargs.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    proc = start(code, *args, text=text, **kwargs)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


if __name__ == "__main__":
    sys.path[0] = ""  # as for ``python -c`` in the project root, not this script's folder
    _run_in_child(_Server(sys.argv[1], tuple(sys.argv[2:])).serve())
