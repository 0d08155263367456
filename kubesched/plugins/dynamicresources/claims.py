"""The pod's ResourceClaims and the devices already taken (upstream ``foreachPodResourceClaim``,
``podResourceClaims`` and the DRA manager's ``ListAllAllocatedDevices``).

Why this exists: PreEnqueue and PreFilter both resolve the pod's claims with the same
checks and upstream's messages: the claim of a template must be in
``status.resourceClaimStatuses`` (``pod "ns/name": ResourceClaim not created yet``), exist
(the assume cache's ``could not find ResourceClaim "ns/name"``), not be being deleted, and
be owned by the pod.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.dra import ResourceClaim
from kubesched.api.podclaims import pod_claim_statuses, pod_claims
from kubesched.api.objects import Pod
from kubesched.framework.events import QueueingHint
from kubesched.framework.dra import DraLister
from kubesched.plugins.dynamicresources.pools import DeviceID


class ClaimLookupError(Exception):
    """A claim of the pod cannot be used (missing, being deleted, not the pod's)."""


def resolve_claims(pod: Pod, lister: DraLister) -> list[ResourceClaim]:
    """Upstream ``podResourceClaims``: the pod's claims in spec order; raises ClaimLookupError."""
    statuses = pod_claim_statuses(pod.raw)
    out = []
    for pc in pod_claims(pod.raw):
        name = pc.claim_name
        if not name:
            if pc.name not in statuses:
                raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
            name = statuses[pc.name]
            if not name:
                continue  # the claim is not needed (resourceClaimName unset in the status)
        claim = lister.resource_claim(pod.namespace, name)
        if claim is None:
            raise ClaimLookupError(f'could not find ResourceClaim "{pod.namespace}/{name}"')
        if claim.deleting:
            raise ClaimLookupError(f'resourceclaim "{name}" is being deleted')
        if pc.template_name and claim.owner_uid != pod.uid:
            raise ClaimLookupError(f"ResourceClaim {pod.namespace}/{name} was not created for pod "
                                   f"{pod.namespace}/{pod.name} (pod is not owner)")
        out.append(claim)
    return out


def allocated_devices(lister: DraLister) -> set[DeviceID]:
    """Upstream ``ListAllAllocatedDevices``: devices of allocated claims and of in-flight ones."""
    out: set[DeviceID] = set()
    for c in lister.resource_claims():
        out.update(c.allocated_devices)
    for c in lister.in_flight.values():
        out.update(c.allocated_devices)
    return out


def claim_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """Upstream ``isSchedulableAfterClaimChange``: only a claim of this pod matters; a
    new claim or one that got deallocated may help, an unchanged one not."""
    claim = new if isinstance(new, ResourceClaim) else None
    if claim is None or claim.namespace != pod.namespace:
        return QueueingHint.QueueSkip
    statuses = pod_claim_statuses(pod.raw)
    wanted = {pc.claim_name or statuses.get(pc.name, "") for pc in pod_claims(pod.raw)}
    if claim.name not in wanted:
        return QueueingHint.QueueSkip
    if isinstance(old, ResourceClaim) and old.allocation is None and claim.allocation is not None:
        return QueueingHint.QueueSkip  # allocated for some other pod: does not help this one
    return QueueingHint.Queue
