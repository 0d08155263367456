"""``kubectl explain`` and ``fieldValidation=Strict`` for the kinds described from the compact
tables (typedefs/upstream_*.py), against a real ``kubesched serve`` and the real kubectl.
The fields each explain must list are upstream's (k8s.io/api v0.34 types: StatefulSetSpec,
PodDisruptionBudgetSpec, ServicePort, PolicyRule, CronJobSpec, ...); the Strict message is
kube-apiserver's (``strict decoding error: unknown field ...``)."""

from __future__ import annotations

import json

import pytest
from serve_harness import Server

pytestmark = pytest.mark.slow

EXPLAIN = [
    ("statefulset.spec", ["volumeClaimTemplates", "serviceName", "podManagementPolicy", "updateStrategy"]),
    ("daemonset.spec.updateStrategy.rollingUpdate", ["maxSurge", "maxUnavailable"]),
    ("pdb.spec", ["minAvailable", "maxUnavailable", "selector", "unhealthyPodEvictionPolicy"]),
    ("service.spec.ports", ["port", "targetPort", "nodePort", "protocol"]),
    ("clusterrole", ["aggregationRule", "rules"]),
    ("rolebinding.roleRef", ["apiGroup", "kind", "name"]),
    ("cronjob.spec", ["schedule", "jobTemplate", "concurrencyPolicy", "timeZone"]),
    ("storageclass", ["provisioner", "volumeBindingMode", "allowedTopologies"]),
    ("pod.spec.affinity.nodeAffinity", ["requiredDuringSchedulingIgnoredDuringExecution"]),
    ("node.status", ["allocatable", "capacity", "conditions", "nodeInfo"]),
    ("replicationcontroller.spec", ["replicas", "selector", "template"]),
    ("controllerrevision", ["data", "revision"]),
]


@pytest.mark.parametrize(("path", "fields"), EXPLAIN, ids=[p for p, _ in EXPLAIN])
def test_kubectl_explain_lists_upstream_fields(server: Server, path: str, fields: list[str]) -> None:
    out = server.kubectl("explain", path)
    for field in fields:
        assert f"  {field}\t" in out.stdout, f"{field} missing from explain {path}:\n{out.stdout}"


def test_strict_field_validation_in_described_kinds(server: Server) -> None:
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "strict-pdb"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}, "maxUnavalable": 1}}
    out = server.kubectl("create", "-f", "-", input=json.dumps(pdb), check=False)
    assert out.returncode != 0
    assert 'strict decoding error: unknown field "spec.maxUnavalable"' in out.stderr
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "strict-role"},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceName": ["x"]}]}
    out = server.kubectl("create", "-f", "-", input=json.dumps(role), check=False)
    assert 'unknown field "rules[0].resourceName"' in out.stderr
    out = server.kubectl("create", "--validate=warn", "-f", "-", input=json.dumps(role))
    assert 'Warning: unknown field "rules[0].resourceName"' in out.stderr


def test_openapi_v2_has_definitions(server: Server) -> None:
    status, doc = server.request("GET", "/openapi/v2")
    assert status == 200 and doc["swagger"] == "2.0"
    sts = doc["definitions"]["io.k8s.api.apps.v1.StatefulSet"]
    assert sts["x-kubernetes-group-version-kind"] == [{"group": "apps", "version": "v1", "kind": "StatefulSet"}]
    # a described reference is allOf [$ref], as upstream writes it, with the v2 path
    assert sts["properties"]["spec"]["allOf"] == [{"$ref": "#/definitions/io.k8s.api.apps.v1.StatefulSetSpec"}]
    ports = doc["definitions"]["io.k8s.api.core.v1.ServiceSpec"]["properties"]["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["port", "protocol"]
    assert "/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/{name}" in doc["paths"]
