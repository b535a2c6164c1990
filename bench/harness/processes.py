"""The children of a run: every process is recorded when started and stopped by its pid in
`stop_all()`, whatever happens (failure, Ctrl-C), so that no server outlives the run. Also the
two waits every start needs: a free loopback port and a readiness poll."""

import http.client
import os
import signal
import socket
import subprocess
import time

from .settings import log


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout, what, process=None, interval=0.05):
    """Polls `predicate()` until it holds; raises when `timeout` seconds pass or `process` exits
    first. Connection errors count as "not yet"."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what}: process exited with {process.returncode}")
        try:
            if predicate():
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(interval)
    raise RuntimeError(f"{what}: not ready within {timeout} s")


class Processes:
    """Every child of the run, by name, with its output in `WORK/NAME.log`."""

    def __init__(self, work):
        self.work = work
        self.children = []  # (name, Popen)

    def start(self, name, argv, env=None, log_name=None):
        """Starts `argv` in the work directory, stdin closed, stdout and stderr appended to the
        log; returns the Popen."""
        log_path = os.path.join(self.work, (log_name or name) + ".log")
        log_file = open(log_path, "ab")
        process = subprocess.Popen(argv, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, cwd=self.work)
        log_file.close()
        self.children.append((name, process))
        log(f"started {name} (pid {process.pid})")
        return process

    def stop(self, process, timeout=30):
        """SIGTERM, wait, SIGKILL. Returns (exit code, seconds until it exited)."""
        started = time.monotonic()
        if process.poll() is None:
            try:
                process.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.children = [(n, p) for (n, p) in self.children if p is not process]
        return process.returncode, time.monotonic() - started

    def stop_all(self):
        """Stops every child still recorded, the last started first."""
        for name, process in reversed(list(self.children)):
            code, _ = self.stop(process, timeout=15)
            log(f"stopped {name} (pid {process.pid}, exit {code})")
