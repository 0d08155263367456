"""Decoding ``application/vnd.kubernetes.protobuf`` request bodies into JSON objects.

Since client-go 1.32 the typed clients send built-in kinds as protobuf, so ``kubectl
create namespace``, ``create deployment``, ``create configmap``, ``drain`` (evictions)
and the like POST protobuf, not JSON, and a 415 makes them fail. This module reads the
wire format (``k8s\\0`` + ``runtime.Unknown`` envelope + the object's message) for the
kinds and fields those commands send, using a field table written from the field numbers
of ``k8s.io/api`` (which never change). JSON conventions are restored: zero values of
non-pointer fields are dropped (gogo-protobuf writes them; Go's JSON omits them),
``Time`` becomes RFC 3339, ``IntOrString`` and ``Quantity`` become their JSON forms.

A field outside the table that carries data raises 415 with a hint to use JSON
(``kubectl apply -f``): nothing is silently dropped. Responses are always JSON, which
every client accepts (they send ``Accept: application/vnd.kubernetes.protobuf,
application/json``).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.protobuf.core import CORE_V1

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"

# message -> field number -> (json name, type, flags); types: s string, i int, b bool,
# y bytes, t Time, mt MicroTime, q Quantity, x IntOrString, j FieldsV1 (JSON in its bytes
# field 1), "m:Name" message, "ms"/"mq"/"my" maps of string / Quantity / bytes values;
# flags: r repeated, p pointer (zero values are kept), n embedded (members in the parent)
F = tuple[str, str, str]
SCHEMA: dict[str, dict[int, F]] = {
    "ObjectMeta": {1: ("name", "s", ""), 2: ("generateName", "s", ""), 3: ("namespace", "s", ""),
                   4: ("selfLink", "s", ""), 5: ("uid", "s", ""), 6: ("resourceVersion", "s", ""),
                   7: ("generation", "i", ""), 8: ("creationTimestamp", "t", ""), 9: ("deletionTimestamp", "t", ""),
                   10: ("deletionGracePeriodSeconds", "i", "p"), 11: ("labels", "ms", ""),
                   12: ("annotations", "ms", ""), 13: ("ownerReferences", "m:OwnerReference", "r"),
                   14: ("finalizers", "s", "r"), 17: ("managedFields", "m:ManagedFieldsEntry", "r")},
    # apimachinery meta/v1 generated.proto; fieldsV1 is FieldsV1 {bytes Raw = 1}: the JSON of the set
    "ManagedFieldsEntry": {1: ("manager", "s", ""), 2: ("operation", "s", ""), 3: ("apiVersion", "s", ""),
                           4: ("time", "t", ""), 6: ("fieldsType", "s", ""), 7: ("fieldsV1", "j", ""),
                           8: ("subresource", "s", "")},
    "OwnerReference": {1: ("kind", "s", ""), 3: ("name", "s", ""), 4: ("uid", "s", ""), 5: ("apiVersion", "s", ""),
                       6: ("controller", "b", "p"), 7: ("blockOwnerDeletion", "b", "p")},
    "LabelSelector": {1: ("matchLabels", "ms", ""), 2: ("matchExpressions", "m:LabelSelectorRequirement", "r")},
    "LabelSelectorRequirement": {1: ("key", "s", ""), 2: ("operator", "s", ""), 3: ("values", "s", "r")},
    "DeleteOptions": {1: ("gracePeriodSeconds", "i", "p"), 2: ("preconditions", "m:Preconditions", ""),
                      3: ("orphanDependents", "b", "p"), 4: ("propagationPolicy", "s", "p"), 5: ("dryRun", "s", "r")},
    "Preconditions": {1: ("uid", "s", "p"), 2: ("resourceVersion", "s", "p")},
    "Namespace": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:NamespaceSpec", ""),
                  3: ("status", "m:NamespaceStatus", "")},
    "NamespaceSpec": {1: ("finalizers", "s", "r")},
    "NamespaceStatus": {1: ("phase", "s", "")},
    "PodTemplateSpec": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:PodSpec", "")},
    "PodSpec": {2: ("containers", "m:Container", "r"), 20: ("initContainers", "m:Container", "r"),
                3: ("restartPolicy", "s", ""), 4: ("terminationGracePeriodSeconds", "i", "p"),
                5: ("activeDeadlineSeconds", "i", "p"), 6: ("dnsPolicy", "s", ""), 7: ("nodeSelector", "ms", ""),
                8: ("serviceAccountName", "s", ""), 9: ("serviceAccount", "s", ""),
                21: ("automountServiceAccountToken", "b", "p"), 10: ("nodeName", "s", ""),
                11: ("hostNetwork", "b", ""), 12: ("hostPID", "b", ""), 13: ("hostIPC", "b", ""),
                15: ("imagePullSecrets", "m:LocalObjectReference", "r"), 16: ("hostname", "s", ""),
                17: ("subdomain", "s", ""), 19: ("schedulerName", "s", ""), 22: ("tolerations", "m:Toleration", "r"),
                24: ("priorityClassName", "s", ""), 25: ("priority", "i", "p"), 30: ("enableServiceLinks", "b", "p"),
                31: ("preemptionPolicy", "s", "p"), 32: ("overhead", "mq", ""),
                38: ("schedulingGates", "m:PodSchedulingGate", "r"), 40: ("resources", "m:ResourceRequirements", "")},
    "Container": {1: ("name", "s", ""), 2: ("image", "s", ""), 3: ("command", "s", "r"), 4: ("args", "s", "r"),
                  5: ("workingDir", "s", ""), 6: ("ports", "m:ContainerPort", "r"), 7: ("env", "m:EnvVar", "r"),
                  8: ("resources", "m:ResourceRequirements", ""), 9: ("volumeMounts", "m:VolumeMount", "r"),
                  13: ("terminationMessagePath", "s", ""), 20: ("terminationMessagePolicy", "s", ""),
                  14: ("imagePullPolicy", "s", ""), 16: ("stdin", "b", ""), 17: ("stdinOnce", "b", ""),
                  18: ("tty", "b", ""), 24: ("restartPolicy", "s", "p")},
    "ContainerPort": {1: ("name", "s", ""), 2: ("hostPort", "i", ""), 3: ("containerPort", "i", ""),
                      4: ("protocol", "s", ""), 5: ("hostIP", "s", "")},
    "ResourceRequirements": {1: ("limits", "mq", ""), 2: ("requests", "mq", "")},
    "EnvVar": {1: ("name", "s", ""), 2: ("value", "s", "")},
    "VolumeMount": {1: ("name", "s", ""), 2: ("readOnly", "b", ""), 3: ("mountPath", "s", ""),
                    4: ("subPath", "s", "")},
    "Toleration": {1: ("key", "s", ""), 2: ("operator", "s", ""), 3: ("value", "s", ""), 4: ("effect", "s", ""),
                   5: ("tolerationSeconds", "i", "p")},
    "LocalObjectReference": {1: ("name", "s", "")},
    "PodSchedulingGate": {1: ("name", "s", "")},
    "ObjectReference": {1: ("kind", "s", ""), 2: ("namespace", "s", ""), 3: ("name", "s", ""), 4: ("uid", "s", ""),
                        5: ("apiVersion", "s", ""), 6: ("resourceVersion", "s", ""), 7: ("fieldPath", "s", "")},
    "Binding": {1: ("metadata", "m:ObjectMeta", ""), 2: ("target", "m:ObjectReference", "")},
    "ConfigMap": {1: ("metadata", "m:ObjectMeta", ""), 2: ("data", "ms", ""), 3: ("binaryData", "my", ""),
                  4: ("immutable", "b", "p")},
    "Service": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:ServiceSpec", ""), 3: ("status", "skip", "")},
    "ServiceSpec": {1: ("ports", "m:ServicePort", "r"), 2: ("selector", "ms", ""), 3: ("clusterIP", "s", ""),
                    18: ("clusterIPs", "s", "r"), 4: ("type", "s", ""), 5: ("externalIPs", "s", "r"),
                    7: ("sessionAffinity", "s", ""), 10: ("externalName", "s", "")},
    "ServicePort": {1: ("name", "s", ""), 2: ("protocol", "s", ""), 3: ("port", "i", ""),
                    4: ("targetPort", "x", ""), 5: ("nodePort", "i", "")},
    "Pod": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:PodSpec", ""), 3: ("status", "skip", "")},
    "Deployment": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:DeploymentSpec", ""), 3: ("status", "skip", "")},
    "DeploymentSpec": {1: ("replicas", "i", "p"), 2: ("selector", "m:LabelSelector", ""),
                       3: ("template", "m:PodTemplateSpec", ""), 4: ("strategy", "m:DeploymentStrategy", ""),
                       5: ("minReadySeconds", "i", ""), 6: ("revisionHistoryLimit", "i", "p"),
                       7: ("paused", "b", ""), 9: ("progressDeadlineSeconds", "i", "p")},
    "DeploymentStrategy": {1: ("type", "s", ""), 2: ("rollingUpdate", "m:RollingUpdateDeployment", "")},
    "RollingUpdateDeployment": {1: ("maxUnavailable", "x", "p"), 2: ("maxSurge", "x", "p")},
    "ReplicaSet": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:ReplicaSetSpec", ""), 3: ("status", "skip", "")},
    "ReplicaSetSpec": {1: ("replicas", "i", "p"), 4: ("minReadySeconds", "i", ""),
                       2: ("selector", "m:LabelSelector", ""), 3: ("template", "m:PodTemplateSpec", "")},
    "Eviction": {1: ("metadata", "m:ObjectMeta", ""), 2: ("deleteOptions", "m:DeleteOptions", "")},
    "PodDisruptionBudget": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:PodDisruptionBudgetSpec", ""),
                            3: ("status", "skip", "")},
    "PodDisruptionBudgetSpec": {1: ("minAvailable", "x", "p"), 2: ("selector", "m:LabelSelector", ""),
                                3: ("maxUnavailable", "x", "p"), 4: ("unhealthyPodEvictionPolicy", "s", "p")},
    "PriorityClass": {1: ("metadata", "m:ObjectMeta", ""), 2: ("value", "i", ""), 3: ("globalDefault", "b", ""),
                      4: ("description", "s", ""), 5: ("preemptionPolicy", "s", "p")},
    "Lease": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:LeaseSpec", "")},
    "LeaseSpec": {1: ("holderIdentity", "s", "p"), 2: ("leaseDurationSeconds", "i", "p"), 3: ("acquireTime", "mt", "p"),
                  4: ("renewTime", "mt", "p"), 5: ("leaseTransitions", "i", "p")},  # MicroTime, as upstream
    "Scale": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:ScaleSpec", ""), 3: ("status", "skip", "")},
    "ScaleSpec": {1: ("replicas", "i", "")},
    # secrets, service accounts, TokenRequest, DaemonSets, CronJobs (kubectl create ... sends these)
    "Secret": {1: ("metadata", "m:ObjectMeta", ""), 2: ("data", "my", ""), 3: ("type", "s", ""),
               4: ("stringData", "ms", ""), 5: ("immutable", "b", "p")},
    "ServiceAccount": {1: ("metadata", "m:ObjectMeta", ""), 2: ("secrets", "m:ObjectReference", "r"),
                       3: ("imagePullSecrets", "m:LocalObjectReference", "r"),
                       4: ("automountServiceAccountToken", "b", "p")},
    "TokenRequest": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:TokenRequestSpec", ""),
                     3: ("status", "skip", "")},
    "TokenRequestSpec": {1: ("audiences", "s", "r"), 4: ("expirationSeconds", "i", "p"),
                         3: ("boundObjectRef", "m:BoundObjectReference", "")},
    "BoundObjectReference": {1: ("kind", "s", ""), 2: ("apiVersion", "s", ""), 3: ("name", "s", ""),
                             4: ("uid", "s", "")},
    "DaemonSet": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:DaemonSetSpec", ""), 3: ("status", "skip", "")},
    "DaemonSetSpec": {1: ("selector", "m:LabelSelector", ""), 2: ("template", "m:PodTemplateSpec", ""),
                      3: ("updateStrategy", "m:DaemonSetUpdateStrategy", ""), 4: ("minReadySeconds", "i", ""),
                      6: ("revisionHistoryLimit", "i", "p")},
    "DaemonSetUpdateStrategy": {1: ("type", "s", ""), 2: ("rollingUpdate", "m:RollingUpdateDaemonSet", "")},
    "RollingUpdateDaemonSet": {1: ("maxUnavailable", "x", "p"), 2: ("maxSurge", "x", "p")},
    "CronJob": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:CronJobSpec", ""), 3: ("status", "skip", "")},
    "CronJobSpec": {1: ("schedule", "s", ""), 8: ("timeZone", "s", "p"), 2: ("startingDeadlineSeconds", "i", "p"),
                    3: ("concurrencyPolicy", "s", ""), 4: ("suspend", "b", "p"),
                    5: ("jobTemplate", "m:JobTemplateSpec", ""), 6: ("successfulJobsHistoryLimit", "i", "p"),
                    7: ("failedJobsHistoryLimit", "i", "p")},
    "Job": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:JobSpec", ""), 3: ("status", "skip", "")},
    "JobTemplateSpec": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:JobSpec", "")},
    "JobSpec": {1: ("parallelism", "i", "p"), 2: ("completions", "i", "p"), 3: ("activeDeadlineSeconds", "i", "p"),
                7: ("backoffLimit", "i", "p"), 4: ("selector", "m:LabelSelector", ""), 5: ("manualSelector", "b", "p"),
                6: ("template", "m:PodTemplateSpec", ""), 8: ("ttlSecondsAfterFinished", "i", "p"),
                9: ("completionMode", "s", "p"), 10: ("suspend", "b", "p")},
    # authorization.k8s.io/v1: the self reviews kubectl auth can-i sends
    "SelfSubjectAccessReview": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:SelfSubjectAccessReviewSpec", ""),
                                3: ("status", "skip", "")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "m:ResourceAttributes", ""),
                                    2: ("nonResourceAttributes", "m:NonResourceAttributes", "")},
    "ResourceAttributes": {1: ("namespace", "s", ""), 2: ("verb", "s", ""), 3: ("group", "s", ""),
                           4: ("version", "s", ""), 5: ("resource", "s", ""), 6: ("subresource", "s", ""),
                           7: ("name", "s", "")},
    "NonResourceAttributes": {1: ("path", "s", ""), 2: ("verb", "s", "")},
    "SelfSubjectRulesReview": {1: ("metadata", "m:ObjectMeta", ""), 2: ("spec", "m:SelfSubjectRulesReviewSpec", ""),
                               3: ("status", "skip", "")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "s", "")},
    # events: core/v1 (kubectl, client-go's record package, leader election) and events.k8s.io/v1
    # (the scheduler's event broadcaster); the two kinds share a name: keyed by apiVersion
    "v1/Event": {1: ("metadata", "m:ObjectMeta", ""), 2: ("involvedObject", "m:ObjectReference", ""),
                 3: ("reason", "s", ""), 4: ("message", "s", ""), 5: ("source", "m:EventSource", ""),
                 6: ("firstTimestamp", "t", ""), 7: ("lastTimestamp", "t", ""), 8: ("count", "i", ""),
                 9: ("type", "s", ""), 10: ("eventTime", "mt", ""), 11: ("series", "m:CoreEventSeries", ""),
                 12: ("action", "s", ""), 13: ("related", "m:ObjectReference", ""),
                 14: ("reportingComponent", "s", ""), 15: ("reportingInstance", "s", "")},
    "EventSource": {1: ("component", "s", ""), 2: ("host", "s", "")},
    "CoreEventSeries": {1: ("count", "i", ""), 2: ("lastObservedTime", "mt", "")},
    "events.k8s.io/v1/Event": {1: ("metadata", "m:ObjectMeta", ""), 2: ("eventTime", "mt", ""),
                               3: ("series", "m:EventSeries", ""), 4: ("reportingController", "s", ""),
                               5: ("reportingInstance", "s", ""), 6: ("action", "s", ""), 7: ("reason", "s", ""),
                               8: ("regarding", "m:ObjectReference", ""), 9: ("related", "m:ObjectReference", ""),
                               10: ("note", "s", ""), 11: ("type", "s", ""),
                               12: ("deprecatedSource", "m:EventSource", ""),
                               13: ("deprecatedFirstTimestamp", "t", ""), 14: ("deprecatedLastTimestamp", "t", ""),
                               15: ("deprecatedCount", "i", "")},
    "EventSeries": {1: ("count", "i", ""), 2: ("lastObservedTime", "mt", "")},
    # rbac.authorization.k8s.io/v1: kubectl create role/clusterrole/rolebinding/clusterrolebinding
    "Role": {1: ("metadata", "m:ObjectMeta", ""), 2: ("rules", "m:PolicyRule", "r")},
    "ClusterRole": {1: ("metadata", "m:ObjectMeta", ""), 2: ("rules", "m:PolicyRule", "r"),
                    3: ("aggregationRule", "m:AggregationRule", "")},
    "AggregationRule": {1: ("clusterRoleSelectors", "m:LabelSelector", "r")},
    "PolicyRule": {1: ("verbs", "s", "r"), 2: ("apiGroups", "s", "r"), 3: ("resources", "s", "r"),
                   4: ("resourceNames", "s", "r"), 5: ("nonResourceURLs", "s", "r")},
    "RoleBinding": {1: ("metadata", "m:ObjectMeta", ""), 2: ("subjects", "m:Subject", "r"),
                    3: ("roleRef", "m:RoleRef", "")},
    "ClusterRoleBinding": {1: ("metadata", "m:ObjectMeta", ""), 2: ("subjects", "m:Subject", "r"),
                           3: ("roleRef", "m:RoleRef", "")},
    "Subject": {1: ("kind", "s", ""), 2: ("apiGroup", "s", ""), 3: ("name", "s", ""), 4: ("namespace", "s", "")},
    "RoleRef": {1: ("apiGroup", "s", ""), 2: ("kind", "s", ""), 3: ("name", "s", "")},
}
SCHEMA.update(CORE_V1)  # Pod and Node whole (status, volumes, probes, affinity ...), lists, Status


def _unsupported(message: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType", f"{message}; send this object as JSON instead "
                    "(for example with kubectl apply -f)")


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf):
            raise _unsupported("truncated protobuf varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise _unsupported("malformed protobuf varint")


def fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of every field of one message."""
    out: list[tuple[int, int, Any]] = []
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
            out.append((num, wt, v))
        elif wt == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise _unsupported("truncated protobuf field")
            out.append((num, wt, buf[i:i + n]))
            i += n
        elif wt in (1, 5):
            n = 8 if wt == 1 else 4
            out.append((num, wt, int.from_bytes(buf[i:i + n], "little")))
            i += n
        else:
            raise _unsupported(f"protobuf wire type {wt} is not supported")
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _time(buf: bytes, micro: bool = False) -> str | None:
    """``Time`` (RFC 3339, seconds) or ``MicroTime`` (six fractional digits), both
    ``{seconds = 1, nanos = 2}`` on the wire."""
    f = {n: v for n, _, v in fields(buf)}
    secs = _signed(f.get(1, 0))
    if not secs and not f.get(2):
        return None
    when = dt.datetime.fromtimestamp(secs, dt.timezone.utc)
    if micro:
        return when.strftime("%Y-%m-%dT%H:%M:%S") + f".{int(f.get(2, 0)) // 1000:06d}Z"
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _intorstr(buf: bytes) -> int | str:
    f = {n: v for n, _, v in fields(buf)}
    if f.get(1, 0) == 1:
        return bytes(f.get(3, b"")).decode()
    return _signed(f.get(2, 0))


def _map_entry(buf: bytes, vtype: str) -> tuple[str, Any]:
    f = {n: v for n, _, v in fields(buf)}
    key = bytes(f.get(1, b"")).decode()
    raw = bytes(f.get(2, b""))
    if vtype == "mq":
        return key, bytes({n: v for n, _, v in fields(raw)}.get(1, b"")).decode()
    if vtype == "my":
        return key, base64.b64encode(raw).decode()
    return key, raw.decode()


def _scalar(t: str, wt: int, v: Any, where: str) -> Any:
    if t == "s":
        return bytes(v).decode()
    if t == "i":
        return _signed(v)
    if t == "b":
        return bool(v)
    if t == "t":
        return _time(bytes(v))
    if t == "mt":
        return _time(bytes(v), micro=True)
    if t == "x":
        return _intorstr(bytes(v))
    if t == "q":  # Quantity {string string = 1}
        return bytes({n: val for n, _, val in fields(bytes(v))}.get(1, b"")).decode()
    if t == "y":
        return base64.b64encode(bytes(v)).decode()
    if t == "j":  # FieldsV1: field 1 holds the raw JSON
        raw = bytes({n: val for n, _, val in fields(bytes(v))}.get(1, b""))
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            raise ApiError(400, "BadRequest", f"{where}: fieldsV1 is not JSON") from None
    if t.startswith("m:"):
        return decode_message(t[2:], bytes(v), where)
    raise AssertionError(t)


def decode_message(name: str, buf: bytes, where: str = "") -> dict[str, Any]:
    schema = SCHEMA[name]
    out: dict[str, Any] = {}
    for num, wt, v in fields(buf):
        spec = schema.get(num)
        path = f"{where}.{spec[0]}" if spec and where else (spec[0] if spec else f"{where}#{num}")
        if spec is None:
            if (wt == 2 and len(v) == 0) or (wt == 0 and v == 0):
                continue  # an empty non-pointer field gogo-protobuf always writes
            raise _unsupported(f"protobuf field {num} of {name} ({where or 'object'}) is not supported")
        key, t, flags = spec
        if t == "skip":
            continue
        if t in ("ms", "mq", "my"):
            k, val = _map_entry(bytes(v), t)
            out.setdefault(key, {})[k] = val
            continue
        value = _scalar(t, wt, v, path)
        if "n" in flags and isinstance(value, dict):
            out.update(value)
        elif "r" in flags:
            out.setdefault(key, []).append(value)
        elif "p" in flags or value not in ("", 0, False, None):
            out[key] = value
    return out


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object (``k8s\\0`` envelope)."""
    if not body.startswith(MAGIC):
        raise _unsupported("protobuf body without the k8s envelope")
    env = {n: v for n, _, v in fields(body[len(MAGIC):])}
    tm = {n: bytes(v).decode() for n, _, v in fields(bytes(env.get(1, b"")))}
    api_version, kind = tm.get(1, ""), tm.get(2, "")
    message = f"{api_version}/{kind}" if f"{api_version}/{kind}" in SCHEMA else kind
    if message not in SCHEMA or message == "Event":
        raise _unsupported(f"protobuf encoding of kind {kind!r} is not supported")
    if env.get(3):
        raise _unsupported("protobuf content encodings are not supported")
    obj = decode_message(message, bytes(env.get(2, b"")))
    return {"apiVersion": api_version, "kind": kind, **obj}
