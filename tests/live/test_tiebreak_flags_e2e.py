"""``serve --tie-break name``: where every node scores the same, the pod goes to the lowest
node name, in the scheduler inside serve and in its ``--scheduler-process`` child alike.

Expected placements, computed by hand from upstream's default profile
(pkg/scheduler/apis/config/v1/default_plugins.go; the scorers in
pkg/scheduler/framework/plugins/noderesources/least_allocated.go and
balanced_allocation.go): four identical nodes (8 cpu, 32Gi), pods of 1 cpu / 1Gi created one
at a time. The first pod sees four empty nodes: equal scores, so the lowest name. Each next
pod sees the nodes that hold a pod score lower on LeastAllocated (cpu (8-2)/8*100 = 75 < (8-1)/8*100
= 87 for the emptier node, memory likewise) and on BalancedAllocation (the cpu/memory
fractions 2/8 and 2/32 are further apart, std 0.094, than 1/8 and 1/32, std 0.047), and the
others (no taints, affinity, images, spreading selectors) score alike: so among the empty
nodes, the lowest name again. Pod k lands on the k-th node in name order; a random
tie-break would do that for one draw in 4! = 24.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from live_harness import eventually
from serve_harness import Server

pytestmark = pytest.mark.slow

SCHEDULER_ONLY = ("--no-node-agent", "--no-node-lifecycle", "--no-controllers")


def pod(i: int) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
            "spec": {"containers": [{"name": "c", "image": "registry.example/app:1",
                                     "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}


@pytest.mark.parametrize("mode", [(), ("--scheduler-process",)], ids=["in-process", "scheduler-process"])
def test_tie_break_name_takes_the_lowest_node_name(spawn: Callable[..., Server], mode: tuple[str, ...]) -> None:
    server = spawn(*SCHEDULER_ONLY, *mode, "--nodes", "4", "--tie-break", "name")
    eventually(lambda: any("kubesched scheduler running" in line for line in server.output))
    nodes = sorted(n["metadata"]["name"] for n in json.loads(server.kubectl("get", "nodes", "-o", "json").stdout)["items"])
    assert len(nodes) == 4
    for i in range(4):
        server.kubectl("apply", "-f", "-", input=json.dumps(pod(i)))
        node = eventually(lambda: server.kubectl("get", "pod", f"p{i}", "-o", "jsonpath={.spec.nodeName}").stdout)
        assert node == nodes[i], f"pod p{i}"


def test_bad_tie_break_is_one_line(spawn: Callable[..., Server]) -> None:
    import subprocess
    import sys

    from serve_harness import REPO

    res = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "serve", "--tie-break", "lots"], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "--tie-break: invalid choice: 'lots'" in res.stderr
