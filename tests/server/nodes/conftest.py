"""Fixtures of the simulated-node tests: the in-process cluster harness of
``tests/server/controllers`` and the ``kubesched serve`` harness of ``tests/server/e2e``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for extra in (HERE.parent / "controllers", HERE.parent / "e2e"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from cluster_harness import Cluster  # noqa: E402

from kubesched.server.nodes import NodePool  # noqa: E402


@pytest.fixture
def node_cluster(tmp_path: Path) -> Iterator[Callable[..., Cluster]]:
    """``node_cluster(pools=[...], ...)`` starts an in-process cluster; stopped at teardown."""
    started: list[Cluster] = []

    def make(pools: list[NodePool] | None = None, **kwargs: object) -> Cluster:
        pools = pools or [NodePool(3, capacity={"cpu": "4", "memory": "8Gi", "pods": "110"})]
        c = Cluster(tmp_path / f"data{len(started)}", pools, **kwargs)  # type: ignore[arg-type]
        started.append(c)
        return c

    yield make
    for c in started:
        c.stop()
