"""What ``kubectl`` could not send, and YAML it converts: how manifests read (decode.py).

kubectl reads YAML with sigs.k8s.io/yaml (go-yaml v2, then ``json.Marshal``) and JSON
into float64/int64 unstructured values: ``.inf``/``.nan`` cannot be marshalled to JSON, a
JSON number out of float64's range fails to unmarshal (``json: cannot unmarshal number
1e999 into Go value of type float64``), a YAML float literal out of range fails
``strconv.ParseFloat`` and stays a string, ``!!binary`` decodes to its text and ``!!set``
is a map of nulls; an alias that contains itself or expands past a million nodes is
refused (go-yaml: "excessive aliasing"). Every refusal is one line naming the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.api.decode import load_manifests
from kubesched.api.errors import DecodeError

NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: %s, pods: '10'}}\n"


def _load(tmp_path: Path, name: str, text: str) -> tuple[str, object]:
    path = tmp_path / name
    path.write_text(text)
    try:
        return str(path), load_manifests([str(path)])
    except DecodeError as exc:
        return str(path), exc


@pytest.mark.parametrize("name,text,expected", [
    ("inf.yaml", NODE % ".inf", "invalid YAML at line 4, column 26: .inf is not a JSON number (JSON has no "
                                "Infinity or NaN)"),
    ("nan.yaml", NODE % ".NaN", "invalid YAML at line 4, column 26: .NaN is not a JSON number (JSON has no "
                                 "Infinity or NaN)"),
    ("big.json", '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": '
                 '{"cpu": 1e999}}}', "invalid JSON: json: cannot unmarshal number 1e999 into Go value of type float64"),
    ("nan.json", '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": NaN}',
     "invalid JSON: NaN is not a JSON number"),
    ("deep.json", '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": '
                  + "[" * 5000 + "]" * 5000 + "}", "invalid JSON: nested too deeply"),
    ("deep.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: " + "[" * 3000 + "]" * 3000 + "\n",
     "invalid YAML"),
    ("ctl.yaml", 'apiVersion: v1\nkind: Namespace\nmetadata: {name: "a\\r\\nb"}\n',
     'Namespace a\\r\\nb: metadata.name: Invalid value: "a\\r\\nb": a lowercase RFC 1123 label must consist of'),
    ("ports.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, ports: 80}]\n",
     "Pod default/p: spec.containers[0].ports: json: cannot unmarshal number into Go struct field "
     "Container.spec.containers.ports of type []v1.ContainerPort"),
    ("badns.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: [a]}\nspec: {containers: [{name: c}]}\n",
     "document 1: metadata.namespace: json: cannot unmarshal array into Go struct field "
     "ObjectMeta.metadata.namespace of type string"),
    ("int.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {priority: !!int x}\n",
     "invalid YAML at line 4, column 18: cannot read 'x' as !!int"),
    ("self.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: &s {containers: [{name: c}], x: *s}\n",
     "document 1: invalid YAML: an alias refers to a node that contains it"),
    ("laughs.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: &a [x, x, x, x, x, x, x, x]\n"
     + "".join(f"  b{i}: &b{i} [{', '.join(['*' + ('a' if i == 0 else f'b{i - 1}')] * 8)}]\n" for i in range(8)),
     "document 1: invalid YAML: document contains excessive aliasing"),
], ids=lambda v: v if isinstance(v, str) and v.endswith((".yaml", ".json")) else None)
def test_refused_in_one_line(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path, result = _load(tmp_path, name, text)
    assert isinstance(result, DecodeError)
    line = str(result)
    assert "\n" not in line and "\r" not in line
    assert line.startswith(f"{path}: {expected}")


def test_yaml_values_read_as_kubectl_converts_them(tmp_path: Path) -> None:
    text = (NODE % "1.0e+999") + "---\n" + (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: !!binary d2Vi, labels: !!set {a, b}}\n"
        "spec: {containers: [{name: c}]}\n")
    _, m = _load(tmp_path, "kubectl.yaml", text)
    assert not isinstance(m, DecodeError), m
    node, pod = m.nodes[0], m.pods[0]  # type: ignore[attr-defined]
    assert node.raw["status"]["capacity"]["cpu"] == "1e999"  # the string, parsed as a quantity
    assert node.allocatable["cpu"] == 2**63 - 1  # milli-value saturated (quantity.py)
    assert (pod.name, pod.labels) == ("web", {"a": "", "b": ""})


def test_integral_floats_are_sent_as_integers(tmp_path: Path) -> None:
    """kubectl marshals a float64 10 as ``10`` (Go's strconv 'f' form below 1e21), which
    decodes into an int32 field; 1.5 does not."""
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, ports: "
           "[{containerPort: 80.0}]}]\n  priority: %s\n")
    _, m = _load(tmp_path, "ok.yaml", pod % "0.0")
    assert not isinstance(m, DecodeError), m
    assert m.pods[0].containers[0].ports[0].container_port == 80  # type: ignore[attr-defined]
    path, err = _load(tmp_path, "bad.yaml", pod % "1.5")
    assert str(err) == (f"{path}: Pod default/p: spec.priority: json: cannot unmarshal number 1.5 into Go struct "
                        "field PodSpec.spec.priority of type int32")
    _, m = _load(tmp_path, "ok.json", '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, '
                                      '"status": {"images": [{"names": ["a"], "sizeBytes": 1.0e3}]}}')
    assert not isinstance(m, DecodeError), m
    assert m.nodes[0].images[0].size_bytes == 1000  # type: ignore[attr-defined]
