"""Server-side apply against ``kubesched serve`` with the real kubectl and the official client.

Expected behaviour from kube-apiserver v1.34 (apimachinery's field manager and
structured-merge-diff): ``kubectl apply --server-side`` creates (201) and updates, records
``managedFields`` (manager ``kubectl``, operation Apply), refuses a change to a field another
manager owns with 409 "Apply failed with 1 conflict: conflict with ..." and takes it over
with ``--force-conflicts``; a field the manager stops applying is removed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from serve_harness import Server

pytestmark = pytest.mark.slow


def deployment(replicas: int, image: str = "nginx:1.25", labels: dict[str, str] | None = None) -> str:
    meta: dict[str, Any] = {"name": "web", "namespace": "default"}
    if labels:
        meta["labels"] = labels
    return yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {
        "replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
            {"name": "nginx", "image": image, "ports": [{"containerPort": 80}]}]}}}})


def managed(server: Server, kind: str, name: str) -> dict[str, dict[str, Any]]:
    out = server.kubectl("get", kind, name, "-o", "json", "--show-managed-fields").stdout
    return {f'{e["manager"]}/{e["operation"]}': e for e in json.loads(out)["metadata"]["managedFields"]}


def test_server_side_apply_create_update_conflict_force(server: Server, tmp_path: Path) -> None:
    first = server.kubectl("apply", "--server-side", "-f", "-", input=deployment(2, labels={"team": "a"}))
    assert "deployment.apps/web serverside-applied" in first.stdout
    entries = managed(server, "deployment", "web")
    apply_entry = entries["kubectl/Apply"]
    assert apply_entry["apiVersion"] == "apps/v1" and apply_entry["fieldsType"] == "FieldsV1"
    fields = apply_entry["fieldsV1"]
    # hand-derived from the applied manifest: leaves, the container item by its key, the
    # port item by containerPort and the defaulted protocol, the atomic label selector
    assert fields["f:spec"]["f:replicas"] == {}
    assert fields["f:spec"]["f:selector"] == {}
    assert fields["f:metadata"] == {"f:labels": {"f:team": {}}}
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert container == {".": {}, "f:image": {}, "f:name": {},
                         "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}}

    # a second manager (an Update through kubectl scale's patch) takes spec.replicas
    server.kubectl("patch", "deployment", "web", "--type=merge", "-p", '{"spec":{"replicas":5}}',
                   "--field-manager", "scaler")
    assert "f:replicas" not in managed(server, "deployment", "web")["kubectl/Apply"]["fieldsV1"]["f:spec"]

    # re-applying replicas 2 now conflicts with the Update manager
    out = server.kubectl("apply", "--server-side", "-f", "-", input=deployment(2, labels={"team": "a"}),
                         check=False)
    assert out.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas' in out.stderr
    # an apply that leaves replicas to the other manager goes through, and drops the label it no longer applies
    no_replicas = yaml.safe_load(deployment(2))
    del no_replicas["spec"]["replicas"]
    server.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump(no_replicas))
    obj = json.loads(server.kubectl("get", "deployment", "web", "-o", "json").stdout)
    assert obj["spec"]["replicas"] == 5
    assert "team" not in (obj["metadata"].get("labels") or {})

    # --force-conflicts takes replicas over
    server.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=deployment(3))
    obj = json.loads(server.kubectl("get", "deployment", "web", "-o", "json").stdout)
    assert obj["spec"]["replicas"] == 3
    entries = managed(server, "deployment", "web")
    assert entries["kubectl/Apply"]["fieldsV1"]["f:spec"]["f:replicas"] == {}
    assert "f:replicas" not in entries.get("scaler/Update", {}).get("fieldsV1", {}).get("f:spec", {})

    # managedFields are shown by get -o yaml --show-managed-fields (and hidden without it)
    shown = server.kubectl("get", "deployment", "web", "-o", "yaml", "--show-managed-fields").stdout
    assert "managedFields:" in shown and "manager: kubectl" in shown and "operation: Apply" in shown
    assert "managedFields" not in server.kubectl("get", "deployment", "web", "-o", "yaml").stdout


def test_server_side_apply_needs_a_field_manager(server: Server) -> None:
    status, body = server.request("PATCH", "/api/v1/namespaces/default/configmaps/cm-x",
                                  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-x"}},
                                  content_type="application/apply-patch+yaml")
    assert status == 422
    assert body["message"] == ('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                               'is required for apply patch')
    status, body = server.request("PATCH", "/api/v1/namespaces/default/configmaps/cm-x?force=true",
                                  {"data": {"a": "b"}}, content_type="application/merge-patch+json")
    assert status == 422 and "force: Forbidden: may not be specified for non-apply patch" in body["message"]


def test_python_client_server_side_apply(server: Server) -> None:
    from kubernetes import dynamic

    client = dynamic.DynamicClient(server.client())
    api = client.resources.get(api_version="v1", kind="ConfigMap")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa-cm", "namespace": "default"},
            "data": {"a": "1", "b": "2"}}
    created = api.server_side_apply(body=body, field_manager="pyclient")
    assert created.data.a == "1"
    body["data"] = {"a": "10"}
    updated = api.server_side_apply(body=body, field_manager="pyclient")
    # "b" was applied by pyclient only and is applied no more: removed
    assert dict(updated.data) == {"a": "10"}
    entry = [e for e in updated.to_dict()["metadata"]["managedFields"] if e["manager"] == "pyclient"][0]
    assert entry["operation"] == "Apply" and entry["fieldsV1"] == {"f:data": {"f:a": {}}}
