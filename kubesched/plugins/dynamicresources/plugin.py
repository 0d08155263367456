"""DynamicResources: pods with ResourceClaims (upstream ``plugins/dynamicresources``, v1.34).

Extension points, as upstream's plugin has them in the default profile (no Score):

- PreEnqueue: every claim of the pod must exist (``could not find ResourceClaim "ns/name"``),
  not be being deleted, and a claim from a template must be owned by the pod.
- PreFilter: the pod's claims (Skip without any); an allocated claim that cannot be
  reserved any more is "resourceclaim in use"; every request of a claim still to allocate
  must name an existing DeviceClass (``request R: device class C does not exist``); the
  devices in use (all allocated claims plus in-flight allocations) are fixed for the cycle.
- Filter: an allocated claim's ``nodeSelector`` must match the node ("resourceclaim not
  available on the node"); the structured allocator must find devices for every other
  claim ("cannot allocate all claims"); the allocation found is kept for Reserve.
- PostFilter: deallocates one allocated, unreserved claim that was unavailable, else
  "still not schedulable" ("no new claims to deallocate" when the pod has no claims).
- Reserve/Unreserve: the allocation is put in flight (no other pod can get its devices) and
  taken back; PreBind writes finalizer, ``status.allocation`` and ``status.reservedFor``.

Device taints, DeviceTaintRules and binding conditions (gates DRADeviceTaints,
DRADeviceTaintRules, DRADeviceBindingConditions; on from 1.36) are in
:mod:`.devicefeatures`, :mod:`.taintrules` and :mod:`.binding`; with the gates off none of
their code runs.

With DRAPartitionableDevices and DRAConsumableCapacity (on from 1.36; :mod:`.sharing`) the
allocator also accounts shared counters and device capacity, and a shareable device's
result carries a share ID and the capacity it consumes.

With DRAExtendedResource, extended resources a DeviceClass maps add one more claim, last,
that the scheduler builds per node and creates in PreBind (:mod:`.extended`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kubesched.api.dra import FINALIZER, ResourceClaim
from kubesched.api.drabinding import BindingFailed, format_time
from kubesched.api.objects import Node, Pod
from kubesched.framework.cycle_state import CycleState, StateKey
from kubesched.framework.dra import DraLister, DraWriteError
from kubesched.framework.dra_extended import GATE as DRA_EXTENDED_RESOURCE, mapped_requests, resolver_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from kubesched.framework.features import features_of
from kubesched.framework.interface import PostFilterResult, PreFilterResult
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.status import SKIP, SUCCESS, Code, Status, error, unresolvable
from kubesched.framework.types import NodeInfo
from kubesched.plugins import names
from kubesched.plugins.dynamicresources import binding
from kubesched.plugins.dynamicresources.allocator import AllocationError, Allocator, allocation_result, index_gather
from kubesched.plugins.dynamicresources.claims import ClaimLookupError, allocated_devices, claim_hint, resolve_claims
from kubesched.plugins.dynamicresources.devicefeatures import DeviceFeatures, extend_result
from kubesched.plugins.dynamicresources.explain import explain_failure
from kubesched.plugins.dynamicresources.extended import (
    NodeClaim, claim_to_create, filter_extended, find_extended_claim, is_special, pod_status, special_claim,
)
from kubesched.plugins.dynamicresources.pools import Candidate, DeviceID, SliceIndex
from kubesched.plugins.dynamicresources.taintrules import TaintedSlices
from kubesched.plugins.dynamicresources.sharing import AllocatedState, Sharing, allocated_state, share_ids

Picks = list[list[tuple[str, Candidate]]]  # per claim to allocate: (request, device) chosen


@dataclass(slots=True)
class _State:
    claims: list[ResourceClaim] = field(default_factory=list)
    allocator: Allocator | None = None
    node_allocations: dict[str, tuple[Node, Picks]] = field(default_factory=dict)
    unavailable: set[int] = field(default_factory=set)
    allocations: dict[int, dict[str, Any]] = field(default_factory=dict)  # claim index -> Reserve's
    extended: int | None = None  # index of the claim for extended resources (the last one)
    node_extended: dict[str, NodeClaim] = field(default_factory=dict)  # node -> Filter's claim for it
    temp_uid: str = ""  # the in-memory claim's uid (its allocation in flight until PreBind)

    def clone(self) -> "_State":
        return self  # as upstream: the state is shared by clones (Filter writes under a lock)


STATE: StateKey[_State] = StateKey("DynamicResources")


class DynamicResources:
    name = names.DYNAMIC_RESOURCES

    parse_args = staticmethod(binding.parse_args)

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        self.dra_extended = features_of(handle).enabled(DRA_EXTENDED_RESOURCE)
        self._in_use: tuple[int, int, set[DeviceID]] | None = None
        self._index: SliceIndex | None = None
        fts = features_of(handle)
        self.devices = DeviceFeatures.of(fts)
        self.binding_timeout = binding.check_args(
            args if isinstance(args, binding.DynamicResourcesArgs) else binding.DynamicResourcesArgs(),
            self.devices.binding, fts.enabled("DRASchedulerFilterTimeout"))
        self._tainted = TaintedSlices()
        self.sharing = Sharing.of(features_of(handle))  # DRAPartitionableDevices, DRAConsumableCapacity
        self._shared: tuple[tuple[int, int], AllocatedState] | None = None

    @property
    def lister(self) -> DraLister:
        return self.handle.dra  # type: ignore[no-any-return]

    def has_extended(self, pod: Pod) -> bool:
        """The gate is on and a DeviceClass maps one of the pod's requests."""
        return self.dra_extended and bool(mapped_requests(pod.requests, resolver_of(self.lister)))

    # -- PreEnqueue --------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.raw.get("spec", {}).get("resourceClaims"):
            return SUCCESS
        try:
            resolve_claims(pod, self.lister)
        except ClaimLookupError as exc:
            return unresolvable(str(exc))
        return SUCCESS

    # -- PreFilter -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status]:
        s = _State()
        state.write(STATE, s)
        extended = self.has_extended(pod)
        if not pod.raw.get("spec", {}).get("resourceClaims") and not extended:
            return None, SKIP
        try:
            claims = resolve_claims(pod, self.lister)
        except ClaimLookupError as exc:
            return None, unresolvable(str(exc))
        if extended:
            s.extended = len(claims)
            claims.append(find_extended_claim(pod, self.lister.resource_claims()) or special_claim(pod))
            s.temp_uid = claims[-1].uid
        if not claims:
            return None, SKIP
        to_allocate = []
        for i, claim in enumerate(claims):
            if claim.allocation is not None:
                if not claim.can_be_reserved() and not claim.reserved_for_pod(pod.uid):
                    return None, unresolvable("resourceclaim in use")
                continue
            to_allocate.append(claim)
            if claim.uid in self.lister.in_flight:  # another pod's allocation of it is in flight
                return None, unresolvable(f"resource claim {claim.key} is in the process of being allocated")
            if i == s.extended:
                continue  # no requests yet (or a stale claim Filter rejects)
            for r in claim.spec.requests:
                for req in ((r.exactly,) if r.exactly is not None else r.first_available):
                    if req is not None and self.lister.device_class(req.device_class_name) is None:
                        return None, unresolvable(f"request {req.name}: device class "
                                                  f"{req.device_class_name} does not exist")
        if to_allocate:
            slices = self.lister.resource_slices()
            if self.devices.taint_rules:
                slices = self._tainted.get(slices, self.lister.device_taint_rules(), self.lister.device_class,
                                           self.lister.generation)
            if self._index is None or self._index.slices is not slices:
                self._index = SliceIndex(slices, index_gather(self.sharing))
            in_use, shared = self._allocated_state()
            s.allocator = Allocator(to_allocate, in_use, self.lister.device_class, self._index, self.devices,
                                    self.sharing, shared)
        s.claims = claims
        return None, SUCCESS

    def _allocated_state(self) -> tuple[set[DeviceID], AllocatedState | None]:
        """The devices in use, and with DRAConsumableCapacity the shared allocations too."""
        if not self.sharing.consumable:
            return self._allocated(), None
        key = (self.lister.generation, len(self.lister.in_flight))
        if self._shared is None or self._shared[0] != key or self.lister.in_flight:
            self._shared = (key, allocated_state(self.lister, True))
        return self._shared[1].exclusive, self._shared[1]

    def _allocated(self) -> set[DeviceID]:
        key = (self.lister.generation, len(self.lister.in_flight))
        if self._in_use is None or self._in_use[:2] != key or self.lister.in_flight:
            self._in_use = (*key, allocated_devices(self.lister))
        return self._in_use[2]

    # -- Filter ----------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = state.get(STATE)
        if s is None or not s.claims:
            return SUCCESS
        node = node_info.node
        if node is None:
            return error("node not found")
        allocator = s.allocator
        node_claim: NodeClaim | None = None
        if s.extended is not None:
            node_claim, st = filter_extended(s.claims[s.extended], pod, node_info, resolver_of(self.lister),
                                             no_user_claim=s.extended == 0)
            if st is not None:
                return st
            if node_claim is None and s.extended == 0:
                return SUCCESS  # all served by device plugins here: nothing for DRA
            if node_claim is not None and allocator is not None:
                ext = s.claims[s.extended]
                allocator = Allocator([node_claim.claim if c is ext else c for c in allocator.claims],
                                      allocator.in_use, allocator.classes, allocator.index, allocator.features,
                                      allocator.sharing, allocator.state)
        unavailable = [i for i, c in enumerate(s.claims)
                       if c.node_selector is not None and not c.node_selector.matches(node.labels, node.name)]
        if self.devices.binding:
            now = self.handle.now()
            unavailable += [i for i, c in enumerate(s.claims) if i not in unavailable and c.allocation is not None
                            and binding.unavailable_after_binding_failure(c, self.binding_timeout, now)]
        picks: Picks | None = None
        if allocator is not None:
            try:
                picks = allocator.allocate(node)
            except AllocationError as exc:
                return error(str(exc))
            if picks is None:
                st = unresolvable("cannot allocate all claims")
                try:
                    detail = explain_failure(allocator, node)
                except AllocationError as exc:
                    detail = str(exc)
                return Status(st.code, st.reasons, detail=detail)
        if unavailable:
            s.unavailable.update(unavailable)
            return unresolvable("resourceclaim not available on the node")
        if picks is not None:
            s.node_allocations[node.name] = (node, picks)
            if node_claim is not None:
                s.node_extended[node.name] = node_claim
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, idx: np.ndarray) -> Any:
        """The batch form: the per-node Filter for each row (the allocator is per node); an
        Error on any node is returned as the Status of the whole batch (upstream aborts)."""
        s = state.get(STATE)
        if s is None or not s.claims:
            return np.ones(idx.size, dtype=bool)
        fast = self._filter_simple(s, table, idx)
        if fast is not None:
            return fast
        out = np.zeros(idx.size, dtype=bool)
        for j, i in enumerate(idx.tolist()):
            st = self.filter(state, pod, table.infos[i])
            if st.code == Code.Error:
                return Status(Code.Error, st.reasons, self.name)
            out[j] = st.success
        return out

    @staticmethod
    def _filter_simple(s: _State, table: NodeTable, idx: np.ndarray) -> np.ndarray | None:
        """One claim, one ExactCount request, nothing allocated yet: a node passes when it has
        ``count`` selectable devices not in use (what the search finds, without running it).
        None: not that shape, or a selector failed (the per-node form then gives the error)."""
        a = s.allocator
        req = a.simple_request() if a is not None and len(s.claims) == 1 and s.extended is None else None
        if a is None or req is None or not a.index.node_local_only:
            return None
        in_use, need = a.in_use, req.count
        out = np.zeros(idx.size, dtype=bool)
        names, infos = table.names, table.infos
        try:
            memo, fill = a.selectable_ids()
            for j, i in enumerate(idx.tolist()):
                ids = memo.get(names[i])
                if ids is None:
                    node = infos[i].node
                    if node is None:
                        return None
                    ids = fill(node)
                free = 0
                for d in ids:
                    if d not in in_use:
                        free += 1
                        if free == need:
                            out[j] = True
                            break
        except AllocationError:
            return None
        return out

    # -- PostFilter ------------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod,
                    filtered: Mapping[str, Status]) -> tuple[PostFilterResult | None, Status]:
        s = state.get(STATE)
        if s is None:
            # an earlier PreFilter plugin stopped the cycle before ours wrote its state: upstream's
            # getStateData fails and the PostFilter phase ends with that error (no preemption)
            return None, error("not found")
        if not s.claims:
            return None, Status(Code.Unschedulable, ("no new claims to deallocate",))
        for i in sorted(s.unavailable):
            claim = s.claims[i]
            if i == s.extended:
                continue  # a claim of an earlier cycle is deleted below
            if not claim.reserved_for or (len(claim.reserved_for) == 1 and claim.reserved_for[0].uid == pod.uid):
                raw = copy.deepcopy(claim.raw)
                status = raw.setdefault("status", {})
                status.pop("allocation", None)
                status.pop("reservedFor", None)
                if self.devices.binding:
                    status.pop("devices", None)
                try:
                    self.handle.dra_writer.update_claim(raw)
                except DraWriteError as exc:
                    return None, error(str(exc))
                return None, Status(Code.Unschedulable, ("deallocation of ResourceClaim completed",))
        if s.extended is not None and not is_special(s.claims[s.extended]):
            ext = s.claims[s.extended]
            try:
                self._extended_writer().delete_claim(ext.namespace, ext.name)
            except DraWriteError as exc:
                return None, error(str(exc))
            return None, Status(Code.Unschedulable, ("deletion of ResourceClaim completed",))
        return None, Status(Code.Unschedulable, ("still not schedulable",))

    def _extended_writer(self) -> Any:
        """The writer's ExtendedClaimWriter side (kubesched.framework.dra_extended)."""
        w = self.handle.dra_writer
        if not hasattr(w, "create_claim"):
            raise DraWriteError("this cluster cannot create ResourceClaims for extended resources")
        return w

    # -- Reserve / Unreserve ---------------------------------------------------------------------
    @staticmethod
    def _owner(s: _State, i: int, node_name: str) -> ResourceClaim:
        """The claim the i-th allocation is for (the node's own claim for extended resources)."""
        node_claim = s.node_extended.get(node_name) if i == s.extended else None
        return node_claim.claim if node_claim is not None else s.claims[i]

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        s = state.get(STATE)
        if s is None or not s.claims or s.allocator is None:
            return SUCCESS
        found = s.node_allocations.get(node_name)
        ni = self.handle.snapshot.get(node_name) if found is None else None
        if found is None and ni is not None and ni.node is not None:
            # the batch form's shortcut (_filter_simple) keeps no allocation: find it now,
            # from the same state the filter saw
            try:
                picks = s.allocator.allocate(ni.node)
            except AllocationError as exc:
                return error(str(exc))
            if picks is not None:
                found = (ni.node, picks)
        todo = [i for i, c in enumerate(s.claims) if c.allocation is None]
        if found is None:
            if todo == [s.extended]:
                return SUCCESS  # only extended resources, all served by device plugins on this node
            return error("claim allocation not found for node")
        if len(todo) != len(found[1]):
            return error(f"internal error, have {len(found[1])} allocations, {len(todo)} claims to allocate")
        node_claim = s.node_extended.get(node_name)
        owners = [self._owner(s, i, node_name) for i in todo]
        allocations = [extend_result(self.devices,
                                     allocation_result(p, found[0], owner, self.sharing, share_ids(owner.uid)),
                                     owner, p, found[0]) for owner, p in zip(owners, found[1])]
        for i, alloc in zip(todo, allocations):
            claim = s.claims[i]
            if i == s.extended:
                if node_claim is None:
                    continue  # served by device plugins on this node: nothing to allocate
                claim = node_claim.claim
            s.allocations[i] = alloc
            raw = copy.deepcopy(claim.raw)
            if FINALIZER not in raw.setdefault("metadata", {}).setdefault("finalizers", []):
                raw["metadata"]["finalizers"].append(FINALIZER)
            raw.setdefault("status", {})["allocation"] = alloc
            self.lister.in_flight[claim.uid] = ResourceClaim.from_dict(raw)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.get(STATE)
        if s is None:
            return
        for i, c in enumerate(s.claims):
            self.lister.in_flight.pop(c.uid, None)
            if i == s.extended:
                self._unreserve_extended(s, c)
                continue
            current = self.lister.resource_claim(c.namespace, c.name)
            if current is not None and current.allocation is not None and current.reserved_for_pod(pod.uid):
                raw = copy.deepcopy(current.raw)
                raw["status"]["reservedFor"] = [r for r in raw["status"].get("reservedFor") or []
                                                if r.get("uid") != pod.uid]
                try:
                    self.handle.dra_writer.update_claim(raw)
                except DraWriteError:
                    pass  # upstream logs it; the next attempt retries

    def _unreserve_extended(self, s: _State, claim: ResourceClaim) -> None:
        """``unreserveExtendedResourceClaim``: out of flight; deleted if PreBind created it."""
        self.lister.in_flight.pop(s.temp_uid, None)
        if is_special(claim):
            return
        try:
            self._extended_writer().delete_claim(claim.namespace, claim.name)
        except DraWriteError:
            pass  # upstream logs it; PostFilter of the next attempt deletes it

    # -- PreBind -----------------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream ``PreBindPreFlight`` (1.35): PreBind has work only for a pod with claims."""
        s = state.get(STATE)
        return SKIP if s is None or not s.claims else SUCCESS

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        s = state.get(STATE)
        if s is None or not s.claims:
            return SKIP
        for i, claim in enumerate(s.claims):
            if claim.reserved_for_pod(pod.uid):
                continue
            try:
                if i == s.extended:
                    if s.allocations.get(i) is None and not claim.spec.requests:
                        continue  # served by device plugins: no claim to create
                    s.claims[i] = self._bind_extended(s, i, pod, node_name)
                else:
                    s.claims[i] = self._bind_claim(claim, s.allocations.get(i), pod)
            except DraWriteError as exc:
                return error(str(exc))
            finally:
                self.lister.in_flight.pop(claim.uid, None)
        if self.devices.binding and binding.has_binding_conditions(s.claims):
            return self._wait_for_binding_conditions(s, pod, node_name)
        return SUCCESS

    def _wait_for_binding_conditions(self, s: _State, pod: Pod, node_name: str) -> Status:
        """Upstream PreBind's wait: until the driver set every binding condition, a failure
        condition is True, or the binding timeout passes."""
        self.handle.sink.record_event(pod, "Normal", "BindingConditionsPending",
                                      f"waiting for binding conditions for device on node {node_name}")

        def current(c: ResourceClaim) -> ResourceClaim | None:
            return self.lister.resource_claim(c.namespace, c.name)

        try:
            ready = self.handle.dra_writer.wait_for(
                lambda: binding.pod_ready(s.claims, current, self.binding_timeout, self.handle.now),
                self.binding_timeout, binding.POLL_INTERVAL)
        except (BindingFailed, RuntimeError) as exc:
            return error(str(exc))
        return SUCCESS if ready else error("device binding timeout")

    def _bind_extended(self, s: _State, i: int, pod: Pod, node_name: str) -> ResourceClaim:
        """Create the claim Filter built for the node (if still in memory), allocate and
        reserve it, and record it in the pod's ``status.extendedResourceClaimStatus``."""
        claim = s.claims[i]
        node_claim = s.node_extended.get(node_name)
        writer = self._extended_writer()
        if is_special(claim):
            if node_claim is None:
                raise DraWriteError(f"extended resource claim not found for node {node_name}")
            # the devices stay in flight (under the in-memory claim's uid) until the
            # allocation is written: PreBind's loop takes them out of flight after this
            claim = writer.create_claim(claim_to_create(node_claim.claim))
            s.claims[i] = claim  # Unreserve deletes it if binding fails from here on
        claim = self._bind_claim(claim, s.allocations.get(i), pod)
        mappings = node_claim.mappings if node_claim is not None else ()
        if not mappings:
            raise DraWriteError(f"nil or empty request mappings, no update of pod {pod.namespace}/{pod.name} "
                                "ExtendedResourceClaimStatus")
        writer.set_extended_resource_claim_status(pod, pod_status(claim.name, mappings))
        return claim

    def _bind_claim(self, claim: ResourceClaim, allocation: dict[str, Any] | None, pod: Pod) -> ResourceClaim:
        """Upstream ``bindClaim``: finalizer and allocation (if the scheduler allocated), reservedFor."""
        current = self.lister.resource_claim(claim.namespace, claim.name)
        if current is None:
            raise DraWriteError(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        at = format_time(binding.wall_time(self.handle.now())) if self.devices.binding else None
        written: ResourceClaim = self.handle.dra_writer.update_claim(
            binding.bound_claim(current, claim.key, allocation, pod, at))
        return written

    # -- QueueingHints -------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(Resource.ResourceClaim, ActionType.Add | ActionType.Update),
                                 claim_hint),
            ClusterEventWithHint(ClusterEvent(Resource.ResourceSlice, ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(Resource.DeviceClass, ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(Resource.Pod, ActionType.UpdatePodGeneratedResourceClaim)),
            ClusterEventWithHint(ClusterEvent(Resource.Node, ActionType.Add | ActionType.UpdateNodeLabel
                                              | ActionType.UpdateNodeTaint
                                              | (ActionType.UpdateNodeAllocatable if self.dra_extended
                                                 else ActionType(0)))),
        ]

