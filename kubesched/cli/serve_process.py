"""``kubesched serve --scheduler-process``: the scheduler inside serve, in a child process.

Why: ``serve`` is one Python process by default, so the API server, the store, the
controllers, the simulated kubelets and the scheduler share one GIL, and on a machine
with more than one core the scheduler's CPU time is taken from the API server's. The
scheduler talks to the server over HTTP anyway (through the kubeconfig the server
wrote), so it can run as its own process against the server's URL, as ARCHITECTURE.md
allows ("each part can also run as its own process"), with the same client code and the
same decisions.

:class:`SchedulerProcess` is the server :class:`~kubesched.server.apiserver.server.Component`
that starts and stops the child; :func:`main` is the child (``python -m
kubesched.cli.serve_process``). The child reads its stdin until end of file: when the
parent dies (even by SIGKILL) the pipe closes and the child stops, so no orphan keeps
binding pods. SIGTERM stops it gracefully, as ``kubesched run``: bindings in flight
finish or are released. Unlike the in-process scheduler, its metrics are not on the
server's ``/metrics``.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from kubesched.api.errors import KubeschedError

log = logging.getLogger(__name__)

GC_GEN0_THRESHOLD = 20_000  # allocations between young collections (Python's default: 700)
STOP_TIMEOUT = 30.0  # seconds the child has to stop after SIGTERM before it is killed


class SchedulerProcess:
    """Runs ``python -m kubesched.cli.serve_process`` beside the server."""

    name = "scheduler-process"

    def __init__(self, kubeconfig: Path, config: str | None, verbose: int = 0, *,
                 kubernetes_version: str = "", feature_gates: str = "",
                 extra_args: list[str] | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.config = config
        self.verbose = verbose
        self.kubernetes_version = kubernetes_version  # "": the server's, from its /version
        self.feature_gates = feature_gates
        self.extra_args = extra_args or []  # the tie-break flags
        self._proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "kubesched.cli.serve_process", "--kubeconfig", str(self.kubeconfig)]
        if self.config:
            cmd += ["--config", self.config]
        if self.kubernetes_version:
            cmd += ["--kubernetes-version", self.kubernetes_version]
        if self.feature_gates:
            cmd += ["--feature-gates", self.feature_gates]
        return cmd + self.extra_args + ["-v"] * self.verbose

    def start(self, server: Any) -> None:
        # stdout and stderr are the server's: the child prints its own "running" line
        self._proc = subprocess.Popen(self.command(), stdin=subprocess.PIPE)
        stopping = getattr(getattr(server, "state", None), "stopping", None)
        if stopping is not None:  # as the in-process scheduler: stop as soon as the server begins to
            threading.Thread(target=self._stop_with, args=(stopping,), name="scheduler-process-stop",
                             daemon=True).start()  # (its bindings in flight still get answers)

    def _stop_with(self, stopping: threading.Event) -> None:
        proc = self._proc
        while proc is not None and proc.poll() is None:
            if stopping.wait(0.5):
                proc.send_signal(signal.SIGTERM)
                return

    def stop(self) -> None:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            log.error("the scheduler process did not stop in %.0fs: killed", STOP_TIMEOUT)
            proc.kill()
            proc.wait()
        if proc.stdin is not None:
            proc.stdin.close()


def _watch_parent(stop: threading.Event) -> None:
    """Set ``stop`` when stdin reaches end of file (the parent closed it or died)."""
    try:
        while os.read(0, 4096):  # the raw descriptor: no buffer lock held at interpreter exit
            pass
    except OSError:
        pass
    stop.set()


def main(argv: list[str] | None = None) -> int:
    from kubesched.cli import tiebreak, versionargs
    from kubesched.cli.serve_scheduler import build_scheduler, load_scheduler_config
    from kubesched.live import LiveOptions

    p = argparse.ArgumentParser(prog="kubesched-serve-scheduler", description=__doc__.split("\n\n")[0])
    p.add_argument("--kubeconfig", required=True, type=Path)
    p.add_argument("--config")
    p.add_argument("-v", "--verbose", action="count", default=0)
    versionargs.add_arguments(p)
    tiebreak.add_flags(p)
    args = p.parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    stop = threading.Event()  # set by the parent-watch thread
    signalled: list[int] = []

    def on_term(signum: int, frame: FrameType | None) -> None:
        # no lock here (Event.set takes one): CPython runs this between two bytecodes of
        # the main thread, which may hold that very lock inside stop.wait(); the loop
        # below sees the signal within its half-second wait
        signalled.append(signum)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    threading.Thread(target=_watch_parent, args=(stop,), name="parent-watch", daemon=True).start()
    try:
        fts = versionargs.features(args)
        component = build_scheduler(args.config, load_scheduler_config(args.config), args.kubeconfig,
                                    LiveOptions(features=fts, **tiebreak.options(args)))
    except KubeschedError as exc:
        print(f"kubesched: error: {exc}", file=sys.stderr)
        return 2
    component.start(None)
    frozen = False
    try:
        while not signalled and not stop.wait(0.5):
            if not frozen and component.live.wait_ready(0):
                # the synced caches (every node, every pod) live as long as the process:
                # out of the cyclic collector's reach, and young collections less often
                gc.freeze()
                gc.set_threshold(GC_GEN0_THRESHOLD, 20, 20)
                frozen = True
    finally:
        component.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
