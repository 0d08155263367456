"""The 400 for a wrongly typed field this server reads names the field by its full path,
as kube-apiserver's JSON decoding does (``json: cannot unmarshal <type> into Go struct
field <Kind>.<path> of type <Go type>``); the path is built only when there is an error."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.apiserver.strategies import shapes
from kubesched.server.apiserver.errors import ApiError

PREFIX = "json: cannot unmarshal "


def message(kind: str, obj: dict[str, Any]) -> str:
    with pytest.raises(ApiError) as info:
        shapes.check(kind, "v1", obj)
    assert info.value.code == 400
    return str(info.value.status()["message"])


@pytest.mark.parametrize("kind,obj,tail", [
    ("Pod", {"status": {"conditions": [{"type": "Ready"}, {"type": 5}]}},
     "number into Go struct field Pod.status.conditions[1].type of type string"),
    ("Pod", {"metadata": {"labels": {"app": True}}},
     "bool into Go struct field Pod.metadata.labels.app of type string"),
    ("Node", {"status": {"capacity": {"cpu": 4}}},
     "number into Go struct field Node.status.capacity.cpu of type string"),
    ("Service", {"spec": {"ports": [{"port": 80}, {"port": "x"}]}},
     "string into Go struct field Service.spec.ports[1].port of type int64"),
    ("Pod", {"metadata": {"ownerReferences": [{"name": "a"}, {"name": "b", "controller": "yes"}]}},
     "string into Go struct field Pod.metadata.ownerReferences[1].controller of type bool"),
    ("Lease", {"spec": []}, "array into Go struct field Lease.spec of type object"),
])
def test_the_error_names_the_full_path(kind: str, obj: dict[str, Any], tail: str) -> None:
    assert message(kind, obj) == f'{kind} in version "v1" cannot be handled as a {kind}: {PREFIX}{tail}'


def test_well_typed_and_null_fields_pass() -> None:
    shapes.check("Pod", "v1", {"metadata": {"labels": {"a": "b"}, "ownerReferences": None},
                               "status": {"conditions": [{"type": "Ready", "status": "True"}], "podIP": None}})
