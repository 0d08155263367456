"""Protobuf Events as client-go sends them: events.k8s.io/v1 (the scheduler's event
broadcaster) and core/v1 (leader election, client-go's record package), plus RBAC objects
as ``kubectl create role/rolebinding`` sends them. Field numbers are facts from upstream's
``events/v1/generated.proto``, ``core/v1/generated.proto`` and ``rbac/v1/generated.proto``;
MicroTime is ``{seconds = 1, nanos = 2}`` and prints six fractional digits in JSON."""

from __future__ import annotations

from test_protobuf import envelope, f_bytes, f_int, f_str, object_meta

from kubesched.server.apiserver.protobuf import decode as protobuf

# 2024-01-02T03:04:05Z is 1704164645 seconds after the epoch (hand computed:
# 19724 days * 86400 + 3*3600 + 4*60 + 5)
SECS = 1704164645


def micro_time(secs: int, nanos: int) -> bytes:
    return f_int(1, secs) + f_int(2, nanos)


def obj_ref(kind: str, ns: str, name: str, uid: str) -> bytes:
    return f_str(1, kind) + f_str(2, ns) + f_str(3, name) + f_str(4, uid) + f_str(5, "v1") + f_str(6, "") + f_str(7, "")


def test_events_k8s_io_event_as_the_scheduler_sends_it() -> None:
    raw = (f_bytes(1, object_meta("p1.17a")) + f_bytes(2, micro_time(SECS, 123456789))
           + f_str(4, "default-scheduler") + f_str(5, "default-scheduler-host") + f_str(6, "Binding")
           + f_str(7, "Scheduled") + f_bytes(8, obj_ref("Pod", "default", "p1", "u1")) + f_str(10, "Successfully assigned default/p1 to n1")
           + f_str(11, "Normal") + f_bytes(12, f_str(1, "") + f_str(2, "")) + f_bytes(13, b"") + f_bytes(14, b"")
           + f_int(15, 0))
    obj = protobuf.decode(envelope("events.k8s.io/v1", "Event", raw))
    assert obj == {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "p1.17a"},
        "eventTime": "2024-01-02T03:04:05.123456Z", "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-host", "action": "Binding", "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p1", "uid": "u1", "apiVersion": "v1"},
        "note": "Successfully assigned default/p1 to n1", "type": "Normal", "deprecatedSource": {}}


def test_core_event_as_leader_election_sends_it() -> None:
    raw = (f_bytes(1, object_meta("kube-scheduler.1")) + f_bytes(2, obj_ref("Lease", "kube-system", "kube-scheduler", ""))
           + f_str(3, "LeaderElection") + f_str(4, "x became leader") + f_bytes(5, f_str(1, "default-scheduler"))
           + f_bytes(6, micro_time(SECS, 0)) + f_bytes(7, micro_time(SECS, 0)) + f_int(8, 1) + f_str(9, "Normal")
           + f_bytes(10, b"") + f_str(12, "") + f_str(14, "") + f_str(15, ""))
    obj = protobuf.decode(envelope("v1", "Event", raw))
    assert obj["involvedObject"] == {"kind": "Lease", "namespace": "kube-system", "name": "kube-scheduler",
                                     "apiVersion": "v1"}
    assert obj["source"] == {"component": "default-scheduler"}
    assert obj["firstTimestamp"] == obj["lastTimestamp"] == "2024-01-02T03:04:05Z"
    assert (obj["reason"], obj["message"], obj["count"], obj["type"]) == ("LeaderElection", "x became leader", 1,
                                                                          "Normal")
    assert "eventTime" not in obj  # an empty MicroTime is null, omitted as Go's JSON omits it


def test_cluster_role_binding() -> None:
    raw = (f_bytes(1, object_meta("b")) + f_bytes(2, f_str(1, "ServiceAccount") + f_str(2, "") + f_str(3, "sa")
                                                  + f_str(4, "kube-system"))
           + f_bytes(3, f_str(1, "rbac.authorization.k8s.io") + f_str(2, "ClusterRole") + f_str(3, "r")))
    obj = protobuf.decode(envelope("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", raw))
    assert obj["subjects"] == [{"kind": "ServiceAccount", "name": "sa", "namespace": "kube-system"}]
    assert obj["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"}


def test_role_rules_keep_the_core_group() -> None:
    rule = f_str(1, "get") + f_str(1, "list") + f_str(2, "") + f_str(3, "pods")
    obj = protobuf.decode(envelope("rbac.authorization.k8s.io/v1", "Role", f_bytes(1, object_meta("r")) + f_bytes(2, rule)))
    assert obj["rules"] == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]


def test_lease_encodes_to_the_bytes_client_go_reads() -> None:
    """coordination/v1 generated.proto: Lease{metadata = 1, spec = 2}, LeaseSpec{holderIdentity = 1,
    leaseDurationSeconds = 2, acquireTime = 3 (MicroTime), renewTime = 4, leaseTransitions = 5};
    ObjectMeta{name = 1, namespace = 3, resourceVersion = 6}."""
    from kubesched.server.apiserver.protobuf import encode as protobuf_encode

    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "kube-scheduler", "namespace": "kube-system", "resourceVersion": "7"},
             "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15,
                      "renewTime": "2024-01-02T03:04:05.500000Z", "leaseTransitions": 2}}
    meta = f_str(1, "kube-scheduler") + f_str(3, "kube-system") + f_str(6, "7")
    spec = f_str(1, "a") + f_int(2, 15) + f_bytes(4, micro_time(SECS, 500_000_000)) + f_int(5, 2)
    type_meta = f_str(1, "coordination.k8s.io/v1") + f_str(2, "Lease")
    expected = protobuf.MAGIC + f_bytes(1, type_meta) + f_bytes(2, f_bytes(1, meta) + f_bytes(2, spec))
    assert protobuf_encode.encode(lease) == expected
    assert protobuf.decode(expected) == lease


def test_list_and_what_cannot_be_encoded() -> None:
    import pytest

    from kubesched.server.apiserver.protobuf import encode as protobuf_encode

    lst = {"apiVersion": "v1", "kind": "BindingList", "metadata": {"resourceVersion": "9", "continue": "c"},
           "items": [{"metadata": {"name": "b"}, "target": {"kind": "Node", "name": "n1"}}]}
    item = f_bytes(1, f_str(1, "b")) + f_bytes(2, f_str(1, "Node") + f_str(3, "n1"))
    raw = f_bytes(1, f_str(2, "9") + f_str(3, "c")) + f_bytes(2, item)
    assert protobuf_encode.encode(lst) == protobuf.MAGIC + f_bytes(1, f_str(1, "v1") + f_str(2, "BindingList")) + f_bytes(2, raw)
    # a member outside a Deployment's status table, a Widget has none: JSON is answered instead
    for obj in ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                 "status": {"replicas": 1, "unknownField": 1}},
                {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "n"}},
                {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
                 "spec": {"unknownField": 1}}):
        with pytest.raises(protobuf_encode.CannotEncode):
            protobuf_encode.encode(obj)


def test_managed_fields_round_trip_as_fieldsv1_bytes() -> None:
    """ObjectMeta.managedFields (field 17) as apimachinery's meta/v1 generated.proto has it:
    ManagedFieldsEntry {manager 1, operation 2, apiVersion 3, time 4, fieldsType 6,
    fieldsV1 7, subresource 8} and FieldsV1 {bytes Raw = 1} holding the set's JSON. Objects
    written through server-side apply carry managedFields, so without this a Lease could not
    be answered in protobuf. Bytes built by hand: tag = field << 3 | wire type 2."""
    from kubesched.server.apiserver.protobuf import decode as protobuf
    from kubesched.server.apiserver.protobuf.encode import encode_message

    raw = b'{"f:x":{}}'  # compact JSON, 10 bytes
    entry = (b"\x0a\x01m" + b"\x12\x05Apply" + b"\x32\x08FieldsV1"
             + b"\x3a\x0c" + b"\x0a\x0a" + raw)
    assert len(entry) == 0x22
    want = b"\x0a\x01a" + b"\x8a\x01\x22" + entry  # field 17: varint tag 17<<3|2 = 138 = 0x8a 0x01
    meta = {"name": "a", "managedFields": [{"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1",
                                            "fieldsV1": {"f:x": {}}}]}
    assert encode_message("ObjectMeta", meta) == want
    assert protobuf.decode_message("ObjectMeta", want) == meta
