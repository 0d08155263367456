"""Why no allocation exists on a node: kubesched's addition to upstream's "cannot allocate
all claims", for ``--explain``. Computed only for rejected nodes when a diagnosis is asked.
"""

from __future__ import annotations

from kubesched.api.dra import ALL, ExactRequest, ResourceClaim
from kubesched.api.objects import Node
from kubesched.plugins.dynamicresources.allocator import Allocator, selectors_match
from kubesched.plugins.dynamicresources.devicefeatures import excluded, tainted
from kubesched.plugins.dynamicresources.pools import Candidate


def explain_failure(alloc: Allocator, node: Node) -> str:
    """Why no allocation exists on ``node``: the first request that cannot be met alone, or
    the constraints (beyond upstream's "cannot allocate all claims")."""
    _, cands = alloc.index.node(node)
    for claim in alloc.claims:
        for r in claim.spec.requests:
            subs = (r.exactly,) if r.exactly is not None else r.first_available
            why = [_request_shortfall(alloc, claim, s, cands) for s in subs if s is not None]
            if all(why):
                return f"claim {claim.key}: " + "; ".join(w for w in why if w)
        if claim.spec.constraints:
            attrs = ", ".join(c.match_attribute for c in claim.spec.constraints)
            return f"claim {claim.key}: constraint matchAttribute {attrs} unmet by the free devices"
    if alloc.sharing.any:
        return "the claims together need more devices, shared counters or device capacity than are free"
    return "the claims together need more devices than are free"


def _request_shortfall(alloc: Allocator, claim: ResourceClaim, req: ExactRequest,
                       cands: list[Candidate]) -> str:
    cls = alloc.classes(req.device_class_name)
    of_class = [c for c in cands if cls is not None and selectors_match(f"class {cls.name}", cls.selectors, c)]
    name = f"request {req.name}"
    if not of_class:
        return f"{name}: no device of class {req.device_class_name} on the node"
    matching = [c for c in of_class if selectors_match(f"claim {claim.key}", req.selectors, c)]
    if not matching:
        return f"{name}: selector false for all {len(of_class)} device(s) of class {req.device_class_name}"
    free = [c for c in matching if c.id not in alloc.in_use]
    need = len(matching) if req.allocation_mode == ALL else req.count
    if len(free) < need:
        return f"{name}: devices in use ({len(matching) - len(free)} of {len(matching)} matching, {need} needed)"
    usable = [c for c in free if not excluded(alloc.features, c.device) and not tainted(alloc.features, req, c.device)]
    if len(usable) < need:
        return (f"{name}: {len(free) - len(usable)} of {len(free)} free matching device(s) tainted without "
                f"toleration or waiting for binding conditions the scheduler may not use, {need} needed")
    return ""
