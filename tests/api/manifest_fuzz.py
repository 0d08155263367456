"""Hypothesis strategies for malformed manifests: valid objects of every decoded kind,
mutated at random paths (a value replaced by one of the wrong type, a huge number, a
non-finite float, deep nesting; a field the schema knows added with a junk value), and
written as YAML, JSON or bytes with junk spliced in. Shared by the ``simulate`` fuzz and
the API-server decoding fuzz."""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml
from hypothesis import strategies as st

from kubesched.api.schema import BOOL, INT32, INT64, INT_OR_STRING, QUANTITY, ListOf, MapOf, Node, Struct
from kubesched.api.schemas import schema_for


def base_objects() -> list[dict[str, Any]]:
    """One valid object of each kind kubesched decodes, using most scheduling fields."""
    sel = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"env": "dev"}},
         "spec": {"finalizers": ["kubernetes"]}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
         "value": 1000, "globalDefault": False, "description": "d", "preemptionPolicy": "PreemptLowerPriority"},
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": "n1", "labels": {"zone": "a", "kubernetes.io/hostname": "n1"}, "annotations": {"x": "y"}},
         "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}], "unschedulable": False},
         "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                    "allocatable": {"cpu": "3900m", "memory": "7Gi", "pods": "110"},
                    "images": [{"names": ["nginx:1"], "sizeBytes": 1000000}],
                    "conditions": [{"type": "Ready", "status": "True"}]}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "web", "namespace": "team", "labels": {"app": "web", "tier": "a", "version": "v1"},
                      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u",
                                           "controller": True}]},
         "spec": {"priorityClassName": "high",
                  "initContainers": [{"name": "init", "image": "busybox", "resources": {"requests": {"cpu": "50m"}}}],
                  "containers": [{"name": "c", "image": "nginx:1", "command": ["run"],
                                  "env": [{"name": "A", "value": "1"}],
                                  "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
                                  "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                                "limits": {"cpu": "200m", "memory": "128Mi"}}}],
                  "nodeSelector": {"zone": "a"},
                  "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                                  {"key": "t", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
                  "affinity": {
                      "nodeAffinity": {
                          "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                              {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
                          "preferredDuringSchedulingIgnoredDuringExecution": [
                              {"weight": 5,
                               "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]},
                      "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                          {"weight": 10, "podAffinityTerm": {"labelSelector": sel, "topologyKey": "zone",
                                                             "namespaces": ["team"]}}]}},
                  "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                 "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": sel,
                                                 "matchLabelKeys": ["version"]}],
                  "volumes": [{"name": "v", "emptyDir": {}}]}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "team"},
         "spec": {"minAvailable": 1, "selector": sel}},
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
         "metadata": {"name": "g", "namespace": "team"},
         "spec": {"minMember": 1, "minResources": {"cpu": "1"}, "scheduleTimeoutSeconds": 10}},
    ]


def _locations(obj: Any, schema: Node | None, out: list[tuple[Any, Any, Node | None]]) -> None:
    """Every (container, key, schema of the value) in ``obj``, plus (dict, new field, schema)
    for each field the schema knows that the dict lacks."""
    if isinstance(obj, dict):
        fields = schema.fields if isinstance(schema, Struct) else {}
        for k, v in obj.items():
            sub = fields.get(k) if fields else (schema.elem if isinstance(schema, MapOf) else None)
            out.append((obj, k, sub))
            _locations(v, sub, out)
        for k, sub in fields.items():
            if k not in obj:
                out.append((obj, k, sub))
    elif isinstance(obj, list):
        elem = schema.elem if isinstance(schema, ListOf) else None
        for i, v in enumerate(obj):
            out.append((obj, i, elem))
            _locations(v, elem, out)


def _nested(depth: int, leaf: Any) -> Any:
    for i in range(depth):
        leaf = [leaf] if i % 2 else {"a": leaf}
    return leaf


JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from([2**31, -(2**31) - 1, 2**63, 10**400, -(10**30)]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["", "1e999", "9" * 400, "1e-999", "0.5", "100m", "Exists", "NoSchedule", "-1", " 1 ",
                     "\x00\x01", "\u2028", "a" * 300, "1Ei", "99999999999999999999Ei", "1e2147483648"]),
    st.lists(st.integers() | st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5) | st.none(), max_size=3),
    st.integers(min_value=1, max_value=60).map(lambda d: _nested(d, 1)),
)


ODD_STRINGS = st.one_of(st.text(max_size=12), st.sampled_from(
    ["", "-", "a/b", "a" * 64, "x" * 254, "In", "NotIn", "Exists", "Gt", "Always", "Never", "NoExecute", "TCP",
     "metadata.name", "100m", "10%", "101%", "-1", "1.5"]))


def typed_junk(schema: Node | None, depth: int = 0) -> st.SearchStrategy[Any]:
    """A value of the right JSON type for ``schema`` that validation may still refuse."""
    if schema is None:
        return JUNK
    if schema is BOOL:
        return st.booleans()
    if schema is INT32:
        return st.integers(min_value=-(2**31), max_value=2**31 - 1) | st.sampled_from([0, -1, 1, 101, 65536])
    if schema is INT64:
        return st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.sampled_from([0, -1, 1])
    if schema is QUANTITY:
        return st.from_regex(r"[+-]?[0-9]{0,20}(\.[0-9]{0,12})?([eE][+-]?[0-9]{1,4}|[numkMGTPE]i?)?", fullmatch=True)
    if schema is INT_OR_STRING:
        return st.integers(min_value=-(2**31), max_value=2**31 - 1) | ODD_STRINGS
    if depth > 3:
        return st.none()
    if isinstance(schema, Struct):
        if not schema.fields:
            return st.just({})
        return st.dictionaries(st.sampled_from(sorted(schema.fields)), st.none(), max_size=2).flatmap(
            lambda d: st.fixed_dictionaries({k: typed_junk(schema.fields[k], depth + 1) | st.none() for k in d}))
    if isinstance(schema, ListOf):
        return st.lists(typed_junk(schema.elem, depth + 1) | st.none(), max_size=3)
    if isinstance(schema, MapOf):
        return st.dictionaries(ODD_STRINGS, typed_junk(schema.elem, depth + 1), max_size=2)
    return ODD_STRINGS


@st.composite
def mutated_docs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """The base objects with 1-3 random mutations."""
    docs = copy.deepcopy(base_objects())
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        doc = draw(st.sampled_from(docs))
        spots: list[tuple[Any, Any, Node | None]] = []
        kind = doc.get("kind")
        _locations(doc, schema_for(kind) if isinstance(kind, str) else None, spots)
        container, key, schema = draw(st.sampled_from(spots))
        if key in ("kind", "apiVersion") and container is doc and draw(st.booleans()):
            continue  # mostly keep the kind: a wrong kind stops decoding early
        # mostly a value of the right type, to get past decoding into defaulting and validation
        container[key] = draw(typed_junk(schema) if draw(st.integers(0, 3)) else JUNK)
    return docs


# YAML-only node kinds and tags (kubectl converts or refuses them), broken syntax, aliases.
YAML_NODES = [
    "&a [*a]", "&a {x: *a}", "!!binary aGk=", "!!binary '%%%'", "!!set {a, b}", '!!int "x"', '!!bool "x"',
    '!!float "1e400"', "1.0e+400", ".inf", "-.inf", ".nan", "!!omap [{a: 1}]", "!!pairs [{a: 1}]", "0x1F", "0o17",
    "~", "yes", '"\\u2028"', "!foo bar", "*undefined", "[", "{a: [1, {b: 2}]}", "!!timestamp 2001-12-14",
    "!!python/object:os.system {}", "&b [1, 2]", "? [a]\n  : b", "<<: {a: 1}", "!!str 5", "!!null x", "'\t'",
]


def _yaml_node_swap(text: str, at: int, node: str) -> str:
    """Replace one ``key: value`` line's value with ``node``."""
    lines = text.split("\n")
    spots = [i for i, line in enumerate(lines) if ": " in line]
    if not spots:
        return text
    i = spots[at % len(spots)]
    key = lines[i].split(": ", 1)[0]
    lines[i] = f"{key}: {node}"
    return "\n".join(lines)


@st.composite
def manifest_files(draw: st.DrawFn) -> tuple[str, bytes]:
    """(suffix, content): YAML or JSON of mutated objects, sometimes with junk bytes spliced in."""
    docs = draw(mutated_docs())
    fmt = draw(st.sampled_from(["yaml", "json", "json-list"]))
    if fmt == "yaml":
        try:
            text = yaml.safe_dump_all(docs, sort_keys=False)
        except (ValueError, OverflowError):
            text = ""  # a value PyYAML cannot write: an empty manifest
        suffix = ".yaml"
    else:
        try:
            body: Any = docs[draw(st.integers(min_value=0, max_value=len(docs) - 1))] if fmt == "json" else \
                {"apiVersion": "v1", "kind": "List", "items": docs}
            text = json.dumps(body)
        except ValueError:  # an int too long to print
            text = "{}"
        suffix = ".json"
    if suffix == ".yaml" and draw(st.integers(min_value=0, max_value=3)) == 0:
        text = _yaml_node_swap(text, draw(st.integers(min_value=0, max_value=10**6)), draw(st.sampled_from(YAML_NODES)))
    data = text.encode()
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        junk = draw(st.binary(min_size=1, max_size=16))
        at = draw(st.integers(min_value=0, max_value=len(data)))
        data = data[:at] + junk + data[at:]
    return suffix, data
