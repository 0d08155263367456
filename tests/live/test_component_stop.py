"""Stopping serve's scheduler component while its caches cannot sync
(kubesched/live/component.py, ``SchedulerComponent._wait_ready``).

A CI run under load caught this: serve was stopped right after it started (the snapshot
e2e test's "unreachable server" case). The component had seen ``/readyz`` answer and started
the scheduler, but the server, already shutting down, answered no list, so the caches never
synced; the component's thread sat in ``wait_ready(start_timeout)`` (60 s) and ``stop()``,
which joins that thread, kept serve from exiting for longer than the harness' 20 s.

Here an HTTP server answers ``/readyz`` and refuses everything else (503), so the informers
never sync; ``stop()`` must return promptly (well inside the 60 s start timeout), and so
must the component once the server begins to shut down. Real LiveScheduler and KubeClient,
real HTTP server (the standard library's) on a free port, in this process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest

from kubesched.cluster.kube import KubeClient
from kubesched.config import load_config
from kubesched.live import LiveOptions, LiveScheduler, SchedulerComponent
from kubesched.plugins.registry import in_tree_registry


class OnlyReady(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        status = 200 if self.path == "/readyz" else 503
        body = b"ok" if status == 200 else b'{"kind":"Status","code":503}'
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[Path]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), OnlyReady)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    path = tmp_path / "kubeconfig"
    path.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: "http://127.0.0.1:{httpd.server_address[1]}"}}
users:
- name: u
  user: {{}}
contexts:
- name: c
  context: {{cluster: c, user: u}}
current-context: c
""")
    yield path
    httpd.shutdown()
    httpd.server_close()


def component(kubeconfig: Path) -> tuple[SchedulerComponent, list[LiveScheduler]]:
    client = KubeClient.connect(str(kubeconfig))
    live = LiveScheduler(load_config(None, in_tree_registry()), client, LiveOptions(informer_backoff=(0.1, 2.0, 1.0)))
    ready: list[LiveScheduler] = []
    return SchedulerComponent(live, on_ready=ready.append, start_timeout=60.0), ready


def started(c: SchedulerComponent) -> None:
    """Wait until the component has started the scheduler (its informers now failing)."""
    for _ in range(200):
        if c._started:
            return
        threading.Event().wait(0.05)
    raise AssertionError("the component never started the scheduler")


def test_stop_does_not_wait_for_caches_that_cannot_sync(kubeconfig: Path) -> None:
    c, ready = component(kubeconfig)
    c.start(None)
    started(c)
    stopper = threading.Thread(target=c.stop, daemon=True)
    stopper.start()
    stopper.join(15)  # the old code waited out the 60 s start timeout (its join gave up at 30 s)
    assert not stopper.is_alive(), "stop() waited for caches that could not sync"
    assert c._thread is not None and not c._thread.is_alive()
    assert ready == []  # never ready, never reported ready


def test_a_server_that_begins_to_stop_ends_the_wait_too(kubeconfig: Path) -> None:
    c, ready = component(kubeconfig)
    stopping = threading.Event()
    c.start(SimpleNamespace(state=SimpleNamespace(stopping=stopping)))
    started(c)
    stopping.set()
    assert c._thread is not None
    c._thread.join(15)
    assert not c._thread.is_alive(), "the component kept waiting after the server began to stop"
    assert ready == [] and c._stopped  # it shut the scheduler down itself
    c.stop()
