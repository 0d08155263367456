"""Secrets, ServiceAccounts and their TokenRequest, DaemonSet and CronJob defaulting, and
what pods answer without a runtime (log, exec, attach, portforward), over the in-process
registry on a fake clock.

Upstream facts checked: ``stringData`` merged into ``data`` and never stored, ``type``
defaulting to ``Opaque`` and immutable, ``immutable: true`` secrets (``pkg/apis/core/validation``
``ValidateSecret``/``ValidateSecretUpdate``); a TokenRequest's 10-minute minimum and the
``system:serviceaccount:<ns>:<name>`` subject (``pkg/registry/core/serviceaccount/storage/token.go``);
DaemonSet ``updateStrategy`` defaults (``SetDefaults_DaemonSet``); CronJob defaults
(``SetDefaults_CronJob``); the kubelet's "a container name must be specified" message."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from kubesched.server.apiserver.http import podio
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.printers.tables import to_table
from kubesched.server.apiserver.registry.tokens import TokenIssuer

from kubesched.testing.clock import T0, ManualClock as Clock


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def test_secret_string_data_type_and_immutability(reg: Registry) -> None:
    s = reg.create("secrets", "default", {"metadata": {"name": "s"}, "data": {"a": b64("1"), "b": b64("2")},
                                          "stringData": {"b": "two", "c": "3"}})
    assert s["type"] == "Opaque" and "stringData" not in s
    assert s["data"] == {"a": b64("1"), "b": b64("two"), "c": b64("3")}
    s["type"] = "example.com/other"
    with pytest.raises(ApiError) as err:
        reg.update("secrets", "default", "s", s)
    assert err.value.code == 422 and "type" in err.value.message and "field is immutable" in err.value.message
    reg.create("secrets", "default", {"metadata": {"name": "frozen"}, "immutable": True, "data": {"k": b64("v")}})
    cur = reg.get("secrets", "default", "frozen")
    cur["data"]["k"] = b64("w")
    with pytest.raises(ApiError) as err:
        reg.update("secrets", "default", "frozen", cur)
    assert "field is immutable when `immutable` is set" in err.value.message


@pytest.mark.parametrize(("body", "field"), [
    ({"data": {"bad key": b64("x")}}, "data[bad key]"),
    ({"data": {"k": "not base64!"}}, "data[k]"),
    ({"type": "kubernetes.io/tls", "data": {"tls.crt": b64("c")}}, "data[tls.key]"),
    ({"type": "kubernetes.io/service-account-token"}, "metadata.annotations[kubernetes.io/service-account.name]"),
], ids=["key", "base64", "tls-key", "sa-token-annotation"])
def test_secret_validation_names_the_field(reg: Registry, body: dict[str, Any], field: str) -> None:
    with pytest.raises(ApiError) as err:
        reg.create("secrets", "default", {"metadata": {"name": "x"}, **body})
    assert err.value.code == 422
    assert field in json.dumps(err.value.status())


def test_token_request(reg: Registry, clock: Clock) -> None:
    sa = reg.create("serviceaccounts", "default", {"metadata": {"name": "robot"}})
    issuer = TokenIssuer(clock=clock)
    out = issuer.request(reg, "default", "robot", {"kind": "TokenRequest", "spec": {"expirationSeconds": 600}})
    assert out["kind"] == "TokenRequest" and out["status"]["expirationTimestamp"] == "2027-01-15T08:10:00Z"
    claims = issuer.decode(out["status"]["token"])
    assert claims is not None and claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["kubernetes.io"]["serviceaccount"] == {"name": "robot", "uid": sa["metadata"]["uid"]}
    assert claims["aud"] == ["https://kubernetes.default.svc.cluster.local"]  # the API audiences by default
    assert TokenIssuer(clock=clock).decode(out["status"]["token"]) is None  # another key: refused
    tampered = out["status"]["token"][:-2] + ("AA" if not out["status"]["token"].endswith("AA") else "BB")
    assert issuer.decode(tampered) is None
    with pytest.raises(ApiError) as err:
        issuer.request(reg, "default", "robot", {"spec": {"expirationSeconds": 599}})
    assert err.value.code == 422 and "less than 10 minutes" in err.value.message
    with pytest.raises(ApiError) as err:
        issuer.request(reg, "default", "nobody", {})
    assert err.value.code == 404


def test_daemonset_and_cronjob_defaults(reg: Registry) -> None:
    tmpl = {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    ds = reg.create("daemonsets.apps", "default", {"metadata": {"name": "d"},
                                                   "spec": {"selector": {"matchLabels": {"app": "d"}},
                                                            "template": tmpl}})
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                            "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert "replicas" not in ds["spec"] and ds["spec"]["revisionHistoryLimit"] == 10
    cj = reg.create("cronjobs.batch", "default", {"metadata": {"name": "c"}, "spec": {
        "schedule": "@daily", "jobTemplate": {"spec": {"template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}}})
    spec = cj["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    with pytest.raises(ApiError) as err:
        reg.create("cronjobs.batch", "default", {"metadata": {"name": "x"}, "spec": {
            "schedule": "@daily", "jobTemplate": {"spec": {"template": {
                "spec": {"containers": [{"name": "c", "image": "i"}]}}}}}})
    assert "spec.jobTemplate.spec.template.spec.restartPolicy" in err.value.message  # Always is not allowed


def _running_pod(reg: Registry, name: str, containers: list[str]) -> None:
    reg.create("pods", "default", {"metadata": {"name": name}, "spec": {
        "nodeName": "node-1", "containers": [{"name": c, "image": f"{c}:1"} for c in containers]}})
    cur = reg.get("pods", "default", name)
    cur["status"] = {"phase": "Running", "startTime": "2027-01-15T08:00:00Z", "containerStatuses": [
        {"name": c, "image": f"{c}:1", "restartCount": 0, "state": {"running": {"startedAt": "2027-01-15T08:00:01Z"}},
         "lastState": {}} for c in containers]}
    reg.update("pods", "default", name, cur, subresource="status")


def test_logs_and_streams(reg: Registry) -> None:
    _running_pod(reg, "one", ["web"])
    text = podio.logs(reg, "default", "one", {"timestamps": "true"})
    assert text.splitlines() == [
        "2027-01-15T08:00:00Z kubesched: simulated container 'web' on node node-1 (no container runtime)",
        "2027-01-15T08:00:00Z kubesched: pulled image 'web:1'",
        "2027-01-15T08:00:01Z kubesched: started container 'web'"]
    assert podio.logs(reg, "default", "one", {"tailLines": "1"}) == "kubesched: started container 'web'\n"
    _running_pod(reg, "two", ["a", "b"])
    with pytest.raises(ApiError) as err:
        podio.logs(reg, "default", "two", {})
    assert err.value.code == 400 and err.value.message == \
        "a container name must be specified for pod two, choose one of: [a b]"
    with pytest.raises(ApiError) as err:
        podio.logs(reg, "default", "one", {"previous": "true"})
    assert 'previous terminated container "web" in pod "one" not found' in err.value.message
    with pytest.raises(ApiError) as err:
        podio.logs(reg, "default", "missing", {})
    assert err.value.code == 404
    for sub in podio.STREAMING:
        e = podio.no_runtime(sub, "one")
        assert e.code == 400 and e.message.startswith("kubesched simulates nodes: no container runtime")


def test_a_gated_pod_is_created_with_the_scheduling_gated_condition(reg: Registry) -> None:
    """``applySchedulingGatedCondition`` in ``pkg/registry/core/pod/strategy.go``."""
    gated = reg.create("pods", "default", {"metadata": {"name": "g"}, "spec": {
        "schedulingGates": [{"name": "example.com/wait"}], "containers": [{"name": "c", "image": "i"}]}})
    assert gated["status"]["conditions"] == [{
        "type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates",
        "lastProbeTime": None, "lastTransitionTime": "2027-01-15T08:00:00Z"}]
    plain = reg.create("pods", "default", {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "i"}]}})
    assert "conditions" not in plain["status"]


def test_kubectl_get_columns(reg: Registry) -> None:
    """Columns of ``printSecret``, ``printServiceAccount``, ``printDaemonSet`` and ``printCronJob``
    (``pkg/printers/internalversion/printers.go``)."""
    s = reg.create("secrets", "default", {"metadata": {"name": "s"}, "stringData": {"a": "1", "b": "2"}})
    table = to_table(reg.resource("secrets"), [s], T0 + 30)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Type", "Data", "Age"]
    assert table["rows"][0]["cells"] == ["s", "Opaque", 2, "30s"]
    cj = reg.create("cronjobs.batch", "default", {"metadata": {"name": "c"}, "spec": {
        "schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}})
    table = to_table(reg.resource("cronjobs.batch"), [cj], T0 + 60)
    assert [c["name"] for c in table["columnDefinitions"]][:7] == [
        "Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age"]
    assert table["rows"][0]["cells"][:7] == ["c", "*/5 * * * *", "<none>", False, 0, "<none>", "60s"]
    ds = reg.create("daemonsets.apps", "default", {"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}}, "spec": {
            "nodeSelector": {"disk": "ssd"}, "containers": [{"name": "c", "image": "i"}]}}}})
    table = to_table(reg.resource("daemonsets.apps"), [ds], T0 + 5)
    assert table["rows"][0]["cells"] == ["d", 0, 0, 0, 0, 0, "disk=ssd", "5s", "c", "i", "app=d"]
