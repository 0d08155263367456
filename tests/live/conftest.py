"""Fixtures of the live scheduler's end-to-end tests: ``kubesched serve`` processes (through
tests/server/e2e/serve_harness.py) and LiveSchedulers in this process talking to them over
HTTP."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server" / "e2e"))

from serve_harness import Server, spawner  # noqa: E402

from kubesched.cluster.kube import KubeClient  # noqa: E402
from kubesched.config import load_config  # noqa: E402
from kubesched.framework.registry import Registry  # noqa: E402
from kubesched.live import LiveOptions, LiveScheduler  # noqa: E402
from kubesched.plugins.registry import in_tree_registry  # noqa: E402

FAST_INFORMERS = (0.1, 2.0, 1.0)


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start ``kubesched serve`` processes (``spawn("--nodes", "3")``); stopped at teardown."""
    yield from spawner(tmp_path)


@pytest.fixture
def live() -> Iterator[Callable[..., LiveScheduler]]:
    """``live(server, config=None, registry=None, fence=None)``: a started LiveScheduler for
    ``server``, synced; stopped (and its client closed) at teardown."""
    made: list[tuple[LiveScheduler, KubeClient]] = []

    def make(server: Server, config: dict[str, Any] | None = None, registry: Registry | None = None,
             fence: Callable[[], None] | None = None, **options: Any) -> LiveScheduler:
        registry = registry or in_tree_registry()
        doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
               "clientConnection": {"qps": 500, "burst": 500}, **(config or {})}
        cfg = load_config(doc, registry)
        client = KubeClient.connect(str(server.kubeconfig), qps=cfg.client_connection.qps,
                                    burst=cfg.client_connection.burst)
        options.setdefault("informer_backoff", FAST_INFORMERS)
        sched = LiveScheduler(cfg, client, LiveOptions(**options), registry=registry, fence=fence)
        made.append((sched, client))
        sched.start()
        assert sched.wait_ready(30), "the scheduler's caches did not sync"
        return sched

    yield make
    for sched, client in made:
        sched.stop()
        client.close()
