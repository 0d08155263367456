"""DynamicResources PreEnqueue, ported from upstream's table
(pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go, TestPlugin:
"claim-template-not-created", "deleted-claim", "wrong-claim"; "claim-missing" is the reason
upstream v1.34.1 gave in ../shared/fidelity-dra, the assume cache's ErrNotFound):
a pod ``default/my-pod`` whose claim ``my-resource`` comes from a template; the generated
claim is ``my-pod-my-resource``. Expected statuses are upstream's (code and message).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.dra import ResourceClaim
from kubesched.api.objects import Pod
from kubesched.cluster.dra import InProcessDra
from kubesched.framework.status import Code
from kubesched.plugins.dynamicresources.plugin import DynamicResources
from kubesched.testing.handle import handle_for

POD_UID = "my-pod-uid"


def _pod(with_status: bool) -> Pod:
    raw: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": "my-pod", "namespace": "default", "uid": POD_UID},
                           "spec": {"containers": [{"name": "c", "image": "i"}],
                                    "resourceClaims": [{"name": "my-resource",
                                                        "resourceClaimTemplateName": "my-template"}]}}
    if with_status:
        raw["status"] = {"resourceClaimStatuses": [{"name": "my-resource",
                                                    "resourceClaimName": "my-pod-my-resource"}]}
    return Pod.from_dict(raw, require_limits=False)


def _claim(owner_uid: str = POD_UID, deleting: bool = False) -> ResourceClaim:
    meta: dict[str, Any] = {"name": "my-pod-my-resource", "namespace": "default", "uid": "claim-uid",
                            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod",
                                                 "uid": owner_uid, "controller": True}]}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return ResourceClaim.from_dict({"metadata": meta, "spec": {"devices": {"requests": [
        {"name": "req-1", "exactly": {"deviceClassName": "class"}}]}}})


@pytest.mark.parametrize(("with_status", "claims", "want"), [
    pytest.param(False, [], (Code.UnschedulableAndUnresolvable,
                             'pod "default/my-pod": ResourceClaim not created yet'), id="claim-template-not-created"),
    pytest.param(True, [_claim(deleting=True)], (Code.UnschedulableAndUnresolvable,
                                                 'resourceclaim "my-pod-my-resource" is being deleted'),
                 id="deleted-claim"),
    pytest.param(True, [_claim(owner_uid=POD_UID + "123")],
                 (Code.UnschedulableAndUnresolvable,
                  "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)"),
                 id="wrong-claim"),
    pytest.param(True, [], (Code.UnschedulableAndUnresolvable,
                            'could not find ResourceClaim "default/my-pod-my-resource"'), id="claim-missing"),
    pytest.param(True, [_claim()], (Code.Success, ""), id="claim-exists"),
])
def test_pre_enqueue(with_status: bool, claims: list[ResourceClaim], want: tuple[Code, str]) -> None:
    dra = InProcessDra()
    dra.load(claims)
    handle = handle_for([], [])
    handle.dra = handle.dra_writer = dra
    st = DynamicResources(None, handle).pre_enqueue(_pod(with_status))
    assert (st.code, st.message) == want
