"""The simulated DRA driver's node-pool syntax (``dra:``) and the ResourceSlice it
publishes per node, in the shape of resource.k8s.io/v1 (``ResourceSliceSpec``: driver,
pool {name, generation, resourceSliceCount}, nodeName, devices with typed attributes and
capacity values)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kubesched.api.dra import ResourceSlice
from kubesched.api.errors import KubeschedError
from kubesched.server.nodes.dradriver import slice_object
from kubesched.server.nodes.pools import load_pool_file, pool_node


def test_pool_dra_becomes_one_slice_per_node_and_driver(tmp_path: Path) -> None:
    f = tmp_path / "pools.yaml"
    f.write_text("""
- count: 2
  namePrefix: gpu
  dra:
  - driver: gpu.example.com
    devices: 2
    attributes: {model: A100, cuda: true, sm: 80}
    capacity: {memory: 80Gi}
  - {driver: nic.example.com, devices: 1, deviceNamePrefix: eth}
""")
    (pool,) = load_pool_file(f)
    node = pool_node(pool, "gpu-02", 1, 2, 0.0)
    node["metadata"]["uid"] = "u2"
    gpu, nic = (slice_object(d, node) for d in pool.dra)
    assert gpu == {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "gpu-02-gpu.example.com", "ownerReferences": [
            {"apiVersion": "v1", "kind": "Node", "name": "gpu-02", "uid": "u2"}]},
        "spec": {"driver": "gpu.example.com", "nodeName": "gpu-02",
                 "pool": {"name": "gpu-02", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}, "model": {"string": "A100"},
                                                                 "cuda": {"bool": True}, "sm": {"int": 80}},
                              "capacity": {"memory": {"value": "80Gi"}}} for i in range(2)]}}
    assert [d["name"] for d in nic["spec"]["devices"]] == ["eth-0"] and "capacity" not in nic["spec"]["devices"][0]
    parsed = ResourceSlice.from_dict(gpu)  # what the scheduler reads: names qualified by the driver
    assert parsed.devices[1].attributes["gpu.example.com/index"] == ("int", 1)


@pytest.mark.parametrize(("doc", "message"), [
    ("- {count: 1, dra: x}", "pools.yaml: pools[0].dra: must be a list"),
    ("- {count: 1, dra: [{devices: 8}]}", "pools[0].dra[0].driver: Required value"),
    ("- {count: 1, dra: [{driver: g.example.com}]}", "pools[0].dra[0].devices: must be an integer from 1 to 128"),
    ("- {count: 1, dra: [{driver: g.example.com, devices: 0}]}", "dra[0].devices: must be an integer from 1"),
    ("- {count: 1, dra: [{driver: g.example.com, devices: 2, colour: red}]}", "dra[0]: unknown field(s) colour"),
    ("- {count: 1, dra: [{driver: g.example.com, devices: 2, attributes: {model: [a]}}]}",
     "dra[0].attributes.model: must be a string, an integer or a boolean"),
    ("- {count: 1, dra: [{driver: g.example.com, devices: 2, capacity: {memory: lots}}]}", "dra[0].capacity.memory"),
    ("- {count: 1, dra: [{driver: g.example.com, devices: 1}, {driver: g.example.com, devices: 1}]}",
     'dra[1].driver: Duplicate value: "g.example.com"'),
    ("- {count: 1, dra: [{driver: Not_A_Domain, devices: 1}]}", "pools[0].dra[0]: spec.driver"),
], ids=["not-list", "no-driver", "no-devices", "zero-devices", "unknown-field", "bad-attribute", "bad-capacity",
        "duplicate-driver", "bad-driver-name"])
def test_bad_dra_pools_are_one_line_naming_file_pool_and_field(tmp_path: Path, doc: str, message: str) -> None:
    f = tmp_path / "pools.yaml"
    f.write_text(doc)
    with pytest.raises(KubeschedError, match=re.escape(message)) as ei:
        load_pool_file(f)
    assert "\n" not in str(ei.value)
