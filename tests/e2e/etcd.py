"""A real etcd (Debian's etcd-server) on loopback for the cluster tests: free client and
peer ports, its data in the test's temporary directory, stopped at the end."""
import pathlib
import socket
import subprocess
import time
import urllib.request

import pytest

from require import require_tool


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EtcdServer:
    def __init__(self, workdir: pathlib.Path):
        self.binary = require_tool("etcd", package="etcd-server")
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port, self.peer_port = _free_port(), _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self, timeout=30):
        peer = f"http://127.0.0.1:{self.peer_port}"
        self.log = open(self.workdir / "etcd.log", "wb")
        self.proc = subprocess.Popen(
            [self.binary, "--name", "e2e", "--data-dir", str(self.workdir / "data"),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", f"e2e={peer}"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"etcd exited with {self.proc.returncode}:\n{self.logs()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as r:
                    if b'"health":"true"' in r.read():
                        return self
            except OSError:
                pass
            time.sleep(0.05)
        pytest.fail(f"etcd did not answer on {self.url} within {timeout}s:\n{self.logs()}")

    def logs(self):
        return (self.workdir / "etcd.log").read_text(errors="replace")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self.log.close()


@pytest.fixture
def etcd(tmp_path):
    server = EtcdServer(tmp_path / "etcd").start()
    yield server
    server.stop()
