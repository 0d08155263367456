"""CEL device selectors in upstream's DRA environment (k8s.io/dynamic-resource-allocation/cel):
``device.driver``, ``device.attributes[domain].id`` (an unqualified attribute belongs to
the driver's domain), ``device.capacity[domain].id`` as quantities with the ``quantity``
library's comparisons, ``semver`` versions; a domain the device has nothing in is an empty
map, so a field of it is the runtime error ``no such key``. Expected values are computed by
hand from those semantics.
"""

from __future__ import annotations

import pytest

from kubesched.api.dra import ResourceSlice
from kubesched.plugins.dynamicresources.cel import CelError, compile_selector

SLICE = ResourceSlice.from_dict({"metadata": {"name": "s"}, "spec": {
    "driver": "gpu.example.com", "nodeName": "n", "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
    "devices": [{"name": "gpu-0",
                 "attributes": {"model": {"string": "a100"}, "index": {"int": 3}, "healthy": {"bool": True},
                                "driverVersion": {"version": "1.2.3"},
                                "dra.example.com/pcieRoot": {"string": "pci-0"}},
                 "capacity": {"memory": {"value": "80Gi"}}}]}})
DEVICE = SLICE.devices[0]


@pytest.mark.parametrize(("expr", "want"), [
    ('device.driver == "gpu.example.com"', True),
    ('device.attributes["gpu.example.com"].model == "a100"', True),
    ('device.attributes["gpu.example.com"].index > 2', True),
    ('device.attributes["gpu.example.com"].healthy', True),
    ('device.attributes["dra.example.com"].pcieRoot == "pci-0"', True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0', True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) == 0', True),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("81920Mi"))', False),
    ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("85899345919"))', True),
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
    ('device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.10.0"))', True),
    ('"x.example.com" in device.attributes && device.attributes["x.example.com"].size() == 0', False),
])
def test_selector_values(expr: str, want: bool) -> None:
    assert compile_selector(expr).matches(SLICE.driver, DEVICE) is want


def test_missing_attribute_is_a_runtime_error() -> None:
    with pytest.raises(CelError, match="^no such key: model$"):
        compile_selector('device.attributes["other.example.com"].model == "x"').matches(SLICE.driver, DEVICE)


def test_syntax_error_is_a_compile_error_and_compiles_once() -> None:
    with pytest.raises(CelError):
        compile_selector("device.driver ==")
    assert compile_selector('device.driver != ""') is compile_selector('device.driver != ""')


def test_non_boolean_result_is_an_error() -> None:
    with pytest.raises(CelError, match="bool"):
        compile_selector("device.driver").matches(SLICE.driver, DEVICE)
