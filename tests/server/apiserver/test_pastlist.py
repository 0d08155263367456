"""Paginated lists are one snapshot: every page after the first is served as of the first
page's revision, and ``resourceVersionMatch=Exact`` lists as of the revision asked for.

Upstream facts (``k8s.io/apiserver/pkg/storage/etcd3/store.go`` GetList, and the API
concepts page "Retrieving large results sets in chunks"): continue pages carry the first
page's resourceVersion and show the collection as it was then; a continue token whose
revision was compacted is 410 Expired ("The provided continue parameter is too old to
display a consistent list result..."). Expected contents below are written out by hand
from the changes each test makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.store import Store


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    store = Store(tmp_path / "db")
    r = Registry(store)
    r.bootstrap()
    yield r
    store.close()


def _pod(name: str, app: str = "a") -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}


def _names(lst: dict[str, Any]) -> list[str]:
    return [o["metadata"]["name"] for o in lst["items"]]


def _rest(reg: Registry, first: dict[str, Any], limit: int, **kw: Any) -> tuple[list[str], set[str]]:
    names, rvs = [], set()
    token = first["metadata"].get("continue")
    while token:
        page = reg.list("pods", "default", limit=limit, continue_=token, **kw)
        names += _names(page)
        rvs.add(page["metadata"]["resourceVersion"])
        token = page["metadata"].get("continue")
    return names, rvs


def test_continue_pages_show_the_first_pages_snapshot(reg: Registry) -> None:
    for n in ("p1", "p2", "p3", "p4", "p5", "p6"):
        reg.create("pods", "default", _pod(n))
    first = reg.list("pods", "default", limit=2)
    assert _names(first) == ["p1", "p2"]
    rv = first["metadata"]["resourceVersion"]
    # after the first page: p4 deleted, p3 relabelled, p35 and p0 added
    reg.delete("pods", "default", "p4", {"gracePeriodSeconds": 0})
    p3 = reg.get("pods", "default", "p3")
    p3["metadata"]["labels"] = {"app": "changed"}
    reg.update("pods", "default", "p3", p3)
    reg.create("pods", "default", _pod("p35"))
    reg.create("pods", "default", _pod("p0"))
    names, rvs = _rest(reg, first, 2)
    assert names == ["p3", "p4", "p5", "p6"]  # as at rv: p4 still there, p35 not yet
    assert rvs == {rv}
    # the p3 served is the one of the snapshot (label a), not the relabelled one
    page = reg.list("pods", "default", limit=2, continue_=first["metadata"]["continue"])
    assert page["items"][0]["metadata"]["labels"] == {"app": "a"}
    # a new list sees the present
    assert _names(reg.list("pods", "default")) == ["p0", "p1", "p2", "p3", "p35", "p5", "p6"]


def test_selector_applies_to_the_snapshot(reg: Registry) -> None:
    for n in ("p1", "p2", "p3", "p4"):
        reg.create("pods", "default", _pod(n))
    first = reg.list("pods", "default", limit=1, label_selector="app=a")
    p2 = reg.get("pods", "default", "p2")
    p2["metadata"]["labels"] = {"app": "b"}
    reg.update("pods", "default", "p2", p2)
    names, _ = _rest(reg, first, 1, label_selector="app=a")
    assert names == ["p2", "p3", "p4"]  # p2 matched at the snapshot


def test_many_changes_between_pages_still_fill_the_page(reg: Registry) -> None:
    for i in range(10):
        reg.create("pods", "default", _pod(f"p{i}"))
    first = reg.list("pods", "default", limit=3)
    for i in range(3, 8):  # p3..p7 deleted: the current store has only p8, p9 after p2
        reg.delete("pods", "default", f"p{i}", {"gracePeriodSeconds": 0})
    page = reg.list("pods", "default", limit=3, continue_=first["metadata"]["continue"])
    assert _names(page) == ["p3", "p4", "p5"]
    names, _ = _rest(reg, first, 3)
    assert names == [f"p{i}" for i in range(3, 10)]


def test_compacted_continue_is_410(reg: Registry) -> None:
    for n in ("p1", "p2", "p3"):
        reg.create("pods", "default", _pod(n))
    first = reg.list("pods", "default", limit=1)
    reg.create("pods", "default", _pod("p4"))
    reg.store.compact(keep=0)
    with pytest.raises(ApiError) as err:
        reg.list("pods", "default", limit=1, continue_=first["metadata"]["continue"])
    assert err.value.code == 410 and err.value.reason == "Expired"
    assert "continue parameter is too old" in err.value.message


def test_exact_resource_version(reg: Registry) -> None:
    reg.create("pods", "default", _pod("p1"))
    rv = int(reg.list("pods", "default")["metadata"]["resourceVersion"])
    reg.create("pods", "default", _pod("p2"))
    reg.delete("pods", "default", "p1", {"gracePeriodSeconds": 0})
    exact = reg.list("pods", "default", at_rv=rv)
    assert _names(exact) == ["p1"] and exact["metadata"]["resourceVersion"] == str(rv)
    assert _names(reg.list("pods", "default")) == ["p2"]
    reg.store.compact(keep=0)
    with pytest.raises(ApiError) as err:
        reg.list("pods", "default", at_rv=rv)
    assert err.value.code == 410
