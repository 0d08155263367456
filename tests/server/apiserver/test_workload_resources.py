"""ReplicationControllers and StatefulSets in the API server: stored, listed, watched by
label, deleted; an RC without a selector defaulted as core/v1 ``SetDefaults_ReplicationController``
does (selector and labels from the template, one replica)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry


TEMPLATE = {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "redis"}]}}


def test_replication_controller_defaults_and_crud(reg: Registry) -> None:
    rc = reg.create("replicationcontrollers", "default",
                    {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "db"},
                     "spec": {"template": TEMPLATE}})
    assert rc["spec"]["selector"] == {"app": "db"} and rc["spec"]["replicas"] == 1
    assert rc["metadata"]["labels"] == {"app": "db"} and rc["metadata"]["generation"] == 1
    assert [o["metadata"]["name"] for o in reg.list("replicationcontrollers", "default", label_selector="app=db")["items"]] == ["db"]
    reg.delete("replicationcontrollers", "default", "db")
    with pytest.raises(ApiError) as info:
        reg.get("replicationcontrollers", "default", "db")
    assert info.value.code == 404


def test_stateful_set_is_stored_as_given(reg: Registry) -> None:
    ss = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "team"},
          "spec": {"serviceName": "web", "replicas": 2, "selector": {"matchLabels": {"app": "db"}},
                   "template": TEMPLATE}}
    got = reg.create("statefulsets.apps", "team", ss)
    assert got["spec"]["selector"] == {"matchLabels": {"app": "db"}} and got["metadata"]["uid"]
    assert reg.get("statefulsets.apps", "team", "web")["spec"]["replicas"] == 2
    assert [o["metadata"]["name"] for o in reg.list("apps/statefulsets", None)["items"]] == ["web"]
