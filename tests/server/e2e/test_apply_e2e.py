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


BAD_POD = """apiVersion: v1
kind: Pod
metadata: {name: bad}
spec:
  foo: 1
  containers: [{name: c, image: nginx}]
"""


def test_explain_pods_nodes_deployments(server: Server) -> None:
    out = server.kubectl("explain", "pod.spec.containers").stdout
    assert "KIND:       Pod" in out and "FIELD: containers <[]Container>" in out
    assert "image\t<string>" in out and "resources\t<ResourceRequirements>" in out
    out = server.kubectl("explain", "nodes.spec").stdout
    assert "unschedulable\t<boolean>" in out and "taints\t<[]Taint>" in out
    out = server.kubectl("explain", "deployments.spec.strategy.rollingUpdate").stdout
    assert "GROUP:      apps" in out and "maxSurge\t<" in out and "FIELD: rollingUpdate <RollingUpdateDeployment>" in out


def test_field_validation_strict_warn_ignore(server: Server, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD_POD)
    # kubectl's default is --validate=strict: the server refuses the unknown field
    out = server.kubectl("create", "-f", str(path), check=False)
    assert out.returncode != 0
    assert ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"'
            in out.stderr)
    # warn: created, and kubectl prints the server's Warning header
    out = server.kubectl("create", "-f", str(path), "--validate=warn")
    assert 'Warning: unknown field "spec.foo"' in out.stderr and "pod/bad created" in out.stdout
    server.kubectl("delete", "pod", "bad", "--wait=false")
    # ignore: nothing said
    status, _body = server.request("POST", "/api/v1/namespaces/default/pods?fieldValidation=Ignore",
                                   yaml.safe_load(BAD_POD.replace("name: bad", "name: bad2")))
    assert status == 201
    status, body = server.request("POST", "/api/v1/namespaces/default/pods?fieldValidation=Sloppy",
                                  yaml.safe_load(BAD_POD))
    assert status == 400 and "fieldValidation" in body["message"]


def test_duplicate_field_is_refused_when_strict(server: Server) -> None:
    raw = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","a":"2"}}'
    status, body = server.request("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", raw=raw)
    assert status == 400 and 'json: duplicate field "a"' in body["message"]


def test_kubectl_diff_against_server_side_dry_run(server: Server, tmp_path: Path) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "diffme", "namespace": "default"},
          "data": {"k": "old"}}
    path = tmp_path / "cm.yaml"
    path.write_text(yaml.safe_dump(cm))
    server.kubectl("apply", "--server-side", "-f", str(path))
    cm["data"]["k"] = "new"
    path.write_text(yaml.safe_dump(cm))
    out = server.kubectl("diff", "--server-side", "-f", str(path), check=False)
    assert out.returncode == 1, out.stderr  # 1: differences found
    assert "-  k: old" in out.stdout and "+  k: new" in out.stdout
    # the dry run changed nothing
    got = json.loads(server.kubectl("get", "configmap", "diffme", "-o", "json").stdout)
    assert got["data"] == {"k": "old"}
