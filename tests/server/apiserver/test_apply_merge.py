"""Server-side apply semantics, ported from structured-merge-diff's own test tables
(``merge/leaf_test.go`` and ``merge/set_test.go``: the same operations, the same expected
object and managed sets), plus hand-computed cases for associative lists and the
``fieldsV1`` encoding."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.server.apiserver.apply import apply_to, track_update
from kubesched.server.apiserver.apply.fieldpath import from_fields_v1, path_string, to_fields_v1
from kubesched.server.apiserver.apply.managed import decode
from kubesched.server.apiserver.apply.schema import atomic_map, list_kind
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.typedefs import definition_for

WHAT = ("configmaps", "", "x")
POD_DEF = definition_for("", "v1", "Pod")


class Sim:
    """Runs Apply / Update operations like structured-merge-diff's test fixture does; ``root``: the
    definition of the kind ("" : none, the name tables decide)."""

    def __init__(self, root: str = "") -> None:
        self.live: dict[str, Any] | None = None
        self.clock = 0
        self.root = root

    def _now(self) -> str:
        self.clock += 1
        return f"2026-01-01T00:00:{self.clock:02d}Z"

    def apply(self, manager: str, obj: dict[str, Any], force: bool = False, version: str = "v1") -> None:
        self.live = apply_to(self.live, copy.deepcopy(obj), manager, force, version, "", False, self._now(), WHAT,
                             self.root)

    def update(self, manager: str, obj: dict[str, Any], version: str = "v1") -> None:
        new = copy.deepcopy(obj)
        new.setdefault("metadata", {})
        track_update(self.live, new, manager, version, "", False, self._now(), self.root)
        self.live = new

    def object(self) -> dict[str, Any]:
        out = copy.deepcopy(self.live or {})
        meta = out.get("metadata") or {}
        meta.pop("managedFields", None)
        if not meta:
            out.pop("metadata", None)
        return out

    def managed(self) -> dict[str, tuple[set[tuple[str, ...]], str]]:
        return {e.manager: (e.fields, e.api_version) for e in decode(self.live)}


def P(*e: str) -> tuple[str, ...]:
    return tuple(e)


# -- merge/leaf_test.go: TestUpdateLeaf ------------------------------------------------------
def test_leaf_apply_twice() -> None:
    s = Sim()
    s.apply("default", {"numeric": 1, "string": "string"})
    s.apply("default", {"numeric": 2, "string": "string", "bool": False})
    assert s.object() == {"numeric": 2, "string": "string", "bool": False}
    assert s.managed() == {"default": ({P("f:numeric"), P("f:string"), P("f:bool")}, "v1")}


def test_leaf_apply_twice_different_versions() -> None:
    s = Sim()
    s.apply("default", {"numeric": 1, "string": "string"})
    s.apply("default", {"numeric": 2, "string": "string", "bool": False}, version="v2")
    assert s.managed() == {"default": ({P("f:numeric"), P("f:string"), P("f:bool")}, "v2")}


def test_leaf_apply_update_apply_no_conflict() -> None:
    s = Sim()
    s.apply("default", {"numeric": 1, "string": "string"})
    s.update("controller", {"numeric": 1, "string": "string", "bool": True})
    s.apply("default", {"numeric": 2, "string": "string"})
    assert s.object() == {"numeric": 2, "string": "string", "bool": True}
    assert s.managed() == {"default": ({P("f:numeric"), P("f:string")}, "v1"),
                           "controller": ({P("f:bool")}, "v1")}


def test_leaf_apply_update_apply_with_conflict_then_force() -> None:
    s = Sim()
    s.apply("default", {"numeric": 1, "string": "string"})
    s.update("controller", {"numeric": 1, "string": "controller string", "bool": True})
    with pytest.raises(ApiError) as err:
        s.apply("default", {"numeric": 2, "string": "user string"})
    assert err.value.code == 409
    assert err.value.message == 'Apply failed with 1 conflict: conflict with "controller" using v1: .string'
    assert s.object() == {"numeric": 1, "string": "controller string", "bool": True}
    s.apply("default", {"numeric": 2, "string": "user string"}, force=True)
    assert s.object() == {"numeric": 2, "string": "user string", "bool": True}
    assert s.managed() == {"default": ({P("f:numeric"), P("f:string")}, "v1"),
                           "controller": ({P("f:bool")}, "v1")}


def test_leaf_apply_twice_remove() -> None:
    s = Sim()
    s.apply("default", {"numeric": 1, "string": "string", "bool": False})
    s.apply("default", {"string": "new string"})
    assert s.object() == {"string": "new string"}
    assert s.managed() == {"default": ({P("f:string")}, "v1")}


def test_leaf_update_apply_omits() -> None:
    s = Sim()
    s.apply("default", {"numeric": 2})
    s.update("controller", {"numeric": 1})
    s.apply("default", {})
    assert s.object() == {"numeric": 1}
    assert s.managed() == {"controller": ({P("f:numeric")}, "v1")}


def test_leaf_update_remove_empty_set() -> None:
    s = Sim()
    s.apply("default", {"string": "string"})
    s.update("controller", {"string": "new string"})
    assert s.object() == {"string": "new string"}
    assert s.managed() == {"controller": ({P("f:string")}, "v1")}


def test_leaf_apply_remove_empty_set() -> None:
    s = Sim()
    s.apply("default", {"string": "string"})
    s.apply("default", {})
    assert s.object() == {}
    assert s.managed() == {}


# -- merge/set_test.go: TestUpdateSet (a set list: metadata.finalizers) -----------------------
def fin(*items: str) -> dict[str, Any]:
    return {"metadata": {"finalizers": list(items)}}


def V(item: str) -> tuple[str, ...]:
    return ("f:metadata", "f:finalizers", f'v:"{item}"')


def test_set_apply_twice() -> None:
    s = Sim()
    s.apply("default", fin("a", "c"))
    s.apply("default", fin("a", "b", "c", "d"))
    assert s.object() == fin("a", "b", "c", "d")
    assert s.managed() == {"default": ({V("a"), V("b"), V("c"), V("d")}, "v1")}


def test_set_apply_update_apply_no_overlap() -> None:
    s = Sim()
    s.apply("default", fin("a", "c"))
    s.update("controller", fin("a", "b", "c", "d"))
    s.apply("default", fin("a", "aprime", "c", "cprime"))
    assert s.object() == fin("a", "aprime", "b", "c", "cprime", "d")
    assert s.managed() == {"default": ({V("a"), V("aprime"), V("c"), V("cprime")}, "v1"),
                           "controller": ({V("b"), V("d")}, "v1")}


def test_set_apply_update_apply_with_overlap() -> None:
    s = Sim()
    s.apply("default", fin("a", "c"))
    s.update("controller", fin("a", "b", "c", "d"))
    s.apply("default", fin("a", "b", "c"))
    assert s.object() == fin("a", "b", "c", "d")
    assert s.managed() == {"default": ({V("a"), V("b"), V("c")}, "v1"),
                           "controller": ({V("b"), V("d")}, "v1")}


def test_set_apply_twice_reorder() -> None:
    s = Sim()
    s.apply("default", fin("a", "b", "c", "d"))
    s.apply("default", fin("a", "d", "c", "b"))
    assert s.object() == fin("a", "d", "c", "b")


def test_set_apply_update_apply_reorder() -> None:
    s = Sim()
    s.apply("default", fin("a", "b", "c", "d"))
    s.update("controller", fin("a", "d", "c", "b"))
    s.apply("default", fin("a", "b", "c", "d"))
    assert s.object() == fin("a", "b", "c", "d")
    assert s.managed() == {"default": ({V("a"), V("b"), V("c"), V("d")}, "v1")}


# -- associative lists (hand-computed) ------------------------------------------------------
def pod(*containers: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"containers": list(containers)}}


@pytest.mark.parametrize("root", ["", POD_DEF])
def test_containers_merge_by_name_and_ports_by_port_and_defaulted_protocol(root: str) -> None:
    s = Sim(root)
    # the stored object, as a create by "kubectl-create" left it (protocol defaulted)
    s.update("kubectl-create", pod({"name": "a", "image": "x:1", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                                   {"name": "b", "image": "y:1"}))
    # the applier names container a and its port 80 without a protocol: the same items
    s.apply("me", pod({"name": "a", "image": "x:1", "ports": [{"containerPort": 80}]}))
    assert s.object() == pod({"name": "a", "image": "x:1", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                             {"name": "b", "image": "y:1"})
    a = ("f:spec", "f:containers", 'k:{"name":"a"}')
    port = a + ("f:ports", 'k:{"containerPort":80,"protocol":"TCP"}')
    assert s.managed()["me"][0] == {a, a + ("f:name",), a + ("f:image",), port, port + ("f:containerPort",)}
    # changing b's image (owned by kubectl-create) conflicts; the path names the item by its key
    with pytest.raises(ApiError) as err:
        s.apply("me", pod({"name": "a", "image": "x:1"}, {"name": "b", "image": "y:2"}))
    assert err.value.message == ('Apply failed with 1 conflict: conflict with "kubectl-create" using v1: '
                                 '.spec.containers[name="b"].image')


def test_two_conflicts_are_listed_by_manager() -> None:
    s = Sim()
    s.update("m1", {"spec": {"a": 1}})
    s.update("m2", {"spec": {"a": 1, "b": 1}})
    with pytest.raises(ApiError) as err:
        s.apply("me", {"spec": {"a": 2, "b": 2}})
    assert err.value.message == ('Apply failed with 2 conflicts: conflicts with "m1" using v1:\n- .spec.a\n'
                                 'conflicts with "m2" using v1:\n- .spec.b')
    assert [c["field"] for c in err.value.details["causes"]] == [".spec.a", ".spec.b"]  # type: ignore[index]


def test_removed_item_stays_while_another_manager_owns_a_field_of_it() -> None:
    s = Sim()
    s.apply("me", pod({"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}))
    s.update("other", pod({"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1", "tty": True}))
    s.apply("me", pod({"name": "a", "image": "x:1"}))
    # b's name and image were only "me"'s; b's tty is "other"'s, so item b stays (with tty)
    assert s.object()["spec"]["containers"] == [{"name": "a", "image": "x:1"}, {"name": "b", "tty": True}]


def test_atomic_selector_and_tolerations_are_one_field() -> None:
    s = Sim(definition_for("apps", "v1", "Deployment"))
    s.apply("me", {"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"spec": {
        "tolerations": [{"key": "k"}], "containers": [{"name": "c"}]}}}})
    tmpl = ("f:spec", "f:template", "f:spec")
    assert s.managed()["me"][0] == {P("f:spec", "f:selector"), tmpl + ("f:tolerations",),
                                    tmpl + ("f:containers", 'k:{"name":"c"}'),
                                    tmpl + ("f:containers", 'k:{"name":"c"}', "f:name")}


def test_described_kinds_take_list_semantics_from_the_type_descriptions() -> None:
    """The facts of the published OpenAPI (k8s.io/api v1.34 struct tags), read through typedefs."""
    assert list_kind((POD_DEF, "spec", "containers")) == ("map", ("name",))
    assert list_kind((POD_DEF, "spec", "containers", "ports")) == ("map", ("containerPort", "protocol"))
    assert list_kind((POD_DEF, "spec", "topologySpreadConstraints")) == \
        ("map", ("topologyKey", "whenUnsatisfiable"))
    assert list_kind((POD_DEF, "spec", "tolerations")) == ("atomic", ())
    assert list_kind((POD_DEF, "metadata", "finalizers")) == ("set", ())
    assert list_kind((POD_DEF, "spec", "containers", "command")) == ("atomic", ())
    assert atomic_map((POD_DEF, "spec", "topologySpreadConstraints", "labelSelector"))
    assert not atomic_map((POD_DEF, "spec", "containers", "resources"))


def test_fields_v1_encoding() -> None:
    fields = {P("f:metadata", "f:labels", "f:app"), P("f:spec", "f:containers", 'k:{"name":"a"}'),
              P("f:spec", "f:containers", 'k:{"name":"a"}', "f:image")}
    encoded = to_fields_v1(fields)
    assert encoded == {"f:metadata": {"f:labels": {"f:app": {}}},
                       "f:spec": {"f:containers": {'k:{"name":"a"}': {".": {}, "f:image": {}}}}}
    assert from_fields_v1(encoded) == fields
    assert path_string(P("f:metadata", "f:finalizers", 'v:"x"')) == '.metadata.finalizers[="x"]'
    assert path_string(P("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}')) == \
        '.spec.ports[port=80,protocol="TCP"]'


def test_repeated_apply_keeps_the_time() -> None:
    s = Sim()
    s.apply("me", {"spec": {"a": 1}})
    first = (s.live or {})["metadata"]["managedFields"][0]["time"]
    s.apply("me", {"spec": {"a": 1}})
    assert (s.live or {})["metadata"]["managedFields"][0]["time"] == first


def test_unattributed_writes_carry_the_entries_over() -> None:
    s = Sim()
    s.update("kubectl-create", {"spec": {"a": 1}})
    before = copy.deepcopy((s.live or {})["metadata"]["managedFields"])
    new = {"metadata": {}, "spec": {"a": 1, "b": 2}}
    track_update(s.live, new, None, "v1", "", False, "2026-01-02T00:00:00Z")
    assert new["metadata"]["managedFields"] == before
