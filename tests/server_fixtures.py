"""Real servers for tests: ``datae serve`` in a process of its own, and a TCP proxy that
cuts or stalls a connection after a number of bytes (a dropped connection, or a server
killed in the middle of a transfer).

Each server runs ``--workers`` :data:`WORKERS` processes unless a test names its own
count: 1 by default, ``DATAE_TEST_SERVE_WORKERS=2`` for every server of a run (``make
test-workers`` runs the suites over HTTP that way: pushes, updates and merge requests
racing each other across processes)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORKERS = int(os.environ.get("DATAE_TEST_SERVE_WORKERS", "1"))
"""The worker processes of every server a test starts without naming a count."""


def serve_with_token(store: Path, directory: Path, *args: str, workers: int | None = None) -> "Server":
    """A server on ``store`` that wants the token :func:`write_token` puts in
    ``directory``; the token is ``server.token``."""
    token_file, token = write_token(directory)
    running = Server(store, "--token-file", str(token_file), *args, workers=workers)
    running.token = token
    return running


class Server:
    """``datae --repo STORE serve --port 0 --workers N ARGS...`` (N: ``workers``, else
    :data:`WORKERS`); ``url`` once it listens (a restart listens on the same port)."""

    def __init__(self, store: Path, *args: str, workers: int | None = None) -> None:
        self.store, self.args = store, args
        self.workers = WORKERS if workers is None else workers
        self.log = store.parent / f"serve-{store.name}.log"
        self.port = 0
        self.start()

    def start(self) -> None:
        self.log_file = open(self.log, "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "datae", "--repo", str(self.store), "serve", "--port", str(self.port),
                                         "--workers", str(self.workers), *self.args], stdout=subprocess.PIPE,
                                        stderr=self.log_file, cwd=ROOT)
        line = self.process.stdout.readline().decode()
        if "http://" not in line:
            self.stop()
            raise RuntimeError(f"datae serve did not start: {line!r} {self.log.read_text()}")
        self.url = line.split()[2]
        self.host, self.port = self.url.removeprefix("http://").rsplit(":", 1)
        self.port = int(self.port)
        _wait_listening(self.host, self.port)

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> tuple[int, dict, bytes]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def json(self, method: str, path: str, payload: Any = None, headers: dict | None = None) -> tuple[int, Any]:
        body = None if payload is None else json.dumps(payload).encode()
        status, _, data = self.request(method, path, body, {"Content-Type": "application/json", **(headers or {})})
        return status, json.loads(data)

    def worker_pids(self) -> list[int]:
        """The worker processes serving (none for one worker: the server serves itself)."""
        return [pid for pid in children(self.process.pid) if b"spawn_main" in _cmdline(pid)]

    def serving_pid(self, connection: http.client.HTTPConnection) -> int | None:
        """The worker process that accepted ``connection`` (one a request went over), by
        the inode of its socket on the server's side (Linux: ``/proc``)."""
        client = connection.sock.getsockname()[1]
        inode = None
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == self.port and int(fields[2].rsplit(":", 1)[1], 16) == client:
                    inode = fields[9]
        for pid in self.worker_pids():
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                try:
                    if os.readlink(fd) == f"socket:[{inode}]":
                        return pid
                except OSError:
                    pass
        return None

    def kill(self) -> None:
        """SIGKILL, as a crash: its workers die with it (waited for, so the port is free)."""
        workers = self.worker_pids()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.process.stdout.close()
        self.log_file.close()
        wait_ended(workers)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process.stdout.close()
        if not self.log_file.closed:
            self.log_file.close()


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux: ``/proc``)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is no zombie."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def wait_ended(pids: list[int], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while any(map(running, pids)):
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes {[pid for pid in pids if running(pid)]} still run")
        time.sleep(0.02)


def _wait_listening(host: str, port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {host}:{port}")


class CutProxy:
    """Forwards one connection at a time to ``port``, passing at most ``limit`` bytes in
    direction ``way`` ("down": server to client, "up": client to server); then it either
    drops both sides (``stall=False``) or holds them open, forwarding nothing more, until
    :meth:`release` (``stall=True``). ``passed`` counts the bytes sent that way."""

    def __init__(self, port: int, limit: int, way: str = "down", *, stall: bool = False) -> None:
        self.target, self.limit, self.way, self.stall = port, limit, way, stall
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.passed = 0
        self.reached = threading.Event()
        self._release = threading.Event()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            self._sockets += [client, server]
            up = threading.Thread(target=self._pipe, args=(client, server, self.way == "up"), daemon=True)
            down = threading.Thread(target=self._pipe, args=(server, client, self.way == "down"), daemon=True)
            up.start()
            down.start()

    def _pipe(self, source: socket.socket, sink: socket.socket, counted: bool) -> None:
        try:
            while data := source.recv(65536):
                if counted:
                    room = self.limit - self.passed
                    data = data[:max(room, 0)]
                    self.passed += len(data)
                if data:
                    sink.sendall(data)
                if counted and self.passed >= self.limit:
                    self.reached.set()
                    if self.stall:
                        self._release.wait()
                    break
        except OSError:
            pass
        self._close(source, sink)

    def release(self) -> None:
        self._release.set()

    def _close_all(self) -> None:
        self._close(*self._sockets)

    @staticmethod
    def _close(*sockets: socket.socket) -> None:
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self) -> None:
        self._release.set()
        self.listener.close()
        self._close_all()


def write_token(directory: Path, token: str = "s3cret-token-for-tests") -> tuple[Path, str]:
    path = directory / "token"
    path.write_text(token + "\n")
    os.chmod(path, 0o600)
    return path, token
