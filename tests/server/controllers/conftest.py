"""Fixtures of the controller tests: in-process clusters (:mod:`cluster_harness`) and, for
the end-to-end tests, the ``kubesched serve`` harness of ``tests/server/e2e``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for extra in (HERE, HERE.parent / "e2e"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from cluster_harness import Cluster  # noqa: E402

from kubesched.server.nodes import NodePool  # noqa: E402


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Callable[..., Cluster]]:
    """``cluster(nodes=3, ...)`` starts an in-process cluster; all stopped at teardown."""
    started: list[Cluster] = []

    def make(nodes: int = 3, **kwargs: object) -> Cluster:
        pools = [NodePool(nodes, capacity={"cpu": "4", "memory": "8Gi", "pods": "110"})]
        c = Cluster(tmp_path / f"data{len(started)}", pools, **kwargs)  # type: ignore[arg-type]
        started.append(c)
        return c

    yield make
    for c in started:
        c.stop()
