"""The UI's views over a scheduler's state at the size issue 17 names (5,000 nodes and
20,000 pods): every list is filtered and paged on the server, so a page holds only the
rows asked for, whatever the cluster's size. Real Cache and SchedulingQueue; the two
informers are stood in by a dict (their ``values``/``get`` is all the views read)."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.cache.cache import Cache
from kubesched.queue.scheduling_queue import SchedulingQueue
from kubesched.testing.wrappers import make_node, make_pod
from kubesched.ui.views import MAX_LIMIT, QUEUE_MEMBERS, BadRequest, Page, Views

pytestmark = pytest.mark.slow  # building 25,000 objects takes seconds

NODES, BOUND, PENDING = 5000, 19000, 1000
WHY = "0/5000 nodes are available: 5000 Insufficient cpu."


class Objects:
    """What the views read of an informer."""

    def __init__(self, objs: list[Any], key: Any) -> None:
        self.by_key = {key(o): o for o in objs}

    def values(self) -> list[Any]:
        return list(self.by_key.values())

    def get(self, key: str) -> Any:
        return self.by_key.get(key)

    def get_namespaced(self, ns: str, name: str) -> Any:
        return self.by_key.get(f"{ns}/{name}" if ns else name)

    def __len__(self) -> int:
        return len(self.by_key)


@pytest.fixture(scope="module")
def big() -> Views:
    return build_views()


def build_views() -> Views:
    """Views over 5,000 nodes, 19,000 bound pods and 1,000 pending ones in the queue."""
    nodes = [make_node().name(f"node-{i:05d}").label("zone", f"zone-{i % 3}")
             .allocatable(cpu="4", memory="8Gi", pods="110").obj() for i in range(1, NODES + 1)]
    # pod j on node (j % 5000) + 1: nodes 1..4000 get four pods, 4001..5000 three
    bound = [make_pod().name(f"run-{j:05d}").namespace(f"ns-{j % 20}").uid(f"b{j}").req(cpu="100m", memory="64Mi")
             .node(f"node-{j % NODES + 1:05d}").obj() for j in range(BOUND)]
    pending = [make_pod().name(f"wait-{j:04d}").namespace("batch").uid(f"p{j}").req(cpu="64")
               .set("status.conditions", [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                           "message": WHY}]).obj() for j in range(PENDING)]
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in bound:
        cache.add_pod(p)
    queue = SchedulingQueue(lambda q: (q.pod.namespace, q.pod.name), lambda: 0.0)
    for p in pending:
        queue.add(p)
    live = SimpleNamespace(nodes=Objects(nodes, lambda n: n.name), pods=Objects(bound + pending, lambda p: p.key),
                           cache=cache, queue=queue, sched=SimpleNamespace(lock=threading.RLock()))
    return Views(lambda: live)  # type: ignore[arg-type, return-value]


def test_a_page_of_nodes_holds_only_the_rows_asked_for(big: Views) -> None:
    page = big.nodes(Page(offset=4990, limit=60, q=""))
    assert page["total"] == NODES and page["all"] == NODES
    assert [n["name"] for n in page["items"]] == [f"node-{i:05d}" for i in range(4991, 5001)]
    first = big.nodes(Page(offset=0, limit=1, q=""))["items"][0]
    # node-00001 holds pods 0, 5000, 10000, 15000: 4 x 100m cpu, 4 x 64Mi
    assert first["resources"] == [{"name": "cpu", "allocatable": 4000, "requested": 400},
                                  {"name": "memory", "allocatable": 8 * 2**30, "requested": 4 * 64 * 2**20},
                                  {"name": "pods", "allocatable": 110, "requested": 4}]
    last = big.nodes(Page(offset=NODES - 1, limit=1, q=""))["items"][0]
    assert last["pods"] == 3


def test_nodes_are_filtered_by_name_or_label_on_the_server(big: Views) -> None:
    # zone-1: i % 3 == 1 for i in 1..5000, i.e. 1, 4, ..., 4999: (4999 - 1) / 3 + 1 = 1667
    page = big.nodes(Page(offset=0, limit=3, q="zone=zone-1"))
    assert page["total"] == 1667 and [n["name"] for n in page["items"]] == ["node-00001", "node-00004", "node-00007"]
    assert big.nodes(Page(offset=0, limit=100, q="node-0499"))["total"] == 10  # node-04990 .. node-04999


def test_pods_and_pending_pods_are_paged_with_their_why(big: Views) -> None:
    page = big.pods(Page(offset=0, limit=50, q=""))
    assert page["total"] == BOUND + PENDING and len(page["items"]) == 50
    pending = big.pods(Page(offset=990, limit=50, q=""), pending=True)
    assert pending["total"] == PENDING
    assert [p["name"] for p in pending["items"]] == [f"wait-{j:04d}" for j in range(990, 1000)]
    assert {p["why"] for p in pending["items"]} == {WHY}
    on_node = big.pods(Page(offset=0, limit=10, q=""), node="node-05000")
    # pods 4999, 9999, 14999 (19999 is past BOUND)
    assert [p["name"] for p in on_node["items"]] == ["run-04999", "run-09999", "run-14999"]


def test_the_queue_counts_everything_and_lists_a_bounded_number(big: Views) -> None:
    q = big.queue()
    assert q["counts"] == {"active": PENDING, "backoff": 0, "unschedulable": 0, "gated": 0}
    assert len(q["pods"]["active"]) == QUEUE_MEMBERS and q["pods"]["active"][0]["name"] == "wait-0000"


@pytest.mark.parametrize("params, message", [
    ({"limit": "ten"}, "query parameter limit: 'ten' is not an integer"),
    ({"offset": "-1"}, "query parameter offset: must not be negative"),
], ids=["not-a-number", "negative"])
def test_bad_paging_parameters_are_named(params: dict[str, str], message: str) -> None:
    with pytest.raises(BadRequest) as exc:
        Page.parse(params)
    assert str(exc.value) == message


def test_a_page_is_capped() -> None:
    assert Page.parse({"limit": "100000"}).limit == MAX_LIMIT
