"""resource.k8s.io/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "DeviceClass": "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @resource:DeviceClassSpec",
    "ResourceSlice": "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @resource:ResourceSliceSpec",
    "ResourceClaim": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @resource:ResourceClaimSpec; "
        "status @resource:ResourceClaimStatus"),
    "ResourceClaimTemplate": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @resource:ResourceClaimTemplateSpec"),
    "DeviceClassSpec": (
        "selectors [atomic]@resource:DeviceSelector; config [atomic]@resource:DeviceClassConfiguration; "
        "extendedResourceName s"),
    "ResourceSliceSpec": (
        "driver! s; pool! @resource:ResourcePool; nodeName s; nodeSelector @core:NodeSelector; allNodes b; "
        "devices [atomic]@resource:Device; perDeviceNodeSelection b; sharedCounters [atomic]@resource:CounterSet"),
    "ResourceClaimSpec": "devices @resource:DeviceClaim",
    "ResourceClaimStatus": (
        "allocation @resource:AllocationResult; reservedFor [map=uid]@resource:ResourceClaimConsumerReference; "
        "devices [map=driver,device,pool,shareID]@resource:AllocatedDeviceStatus"),
    "ResourceClaimTemplateSpec": "metadata @meta:ObjectMeta; spec! @resource:ResourceClaimSpec",
    "DeviceSelector": "cel @resource:CELDeviceSelector",
    "DeviceClassConfiguration": "opaque @resource:OpaqueDeviceConfiguration",
    "ResourcePool": "name! s; generation! i64; resourceSliceCount! i64",
    "Device": (
        "name! s; attributes {}@resource:DeviceAttribute; capacity {}@resource:DeviceCapacity; "
        "consumesCounters [atomic]@resource:DeviceCounterConsumption; nodeName s; nodeSelector @core:NodeSelector; "
        "allNodes b; taints [atomic]@resource:DeviceTaint; bindsToNode b; bindingConditions [atomic]s; "
        "bindingFailureConditions [atomic]s; allowMultipleAllocations b"),
    "CounterSet": "name! s; counters! {}@resource:Counter",
    "DeviceClaim": (
        "requests [atomic]@resource:DeviceRequest; constraints [atomic]@resource:DeviceConstraint; "
        "config [atomic]@resource:DeviceClaimConfiguration"),
    "AllocationResult": (
        "devices @resource:DeviceAllocationResult; nodeSelector @core:NodeSelector; allocationTimestamp t"),
    "ResourceClaimConsumerReference": "apiGroup s; resource! s; name! s; uid! s",
    "AllocatedDeviceStatus": (
        "driver! s; pool! s; device! s; shareID s; conditions [map=type]@meta:Condition; data any; "
        "networkData @resource:NetworkDeviceData"),
    "CELDeviceSelector": "expression! s",
    "OpaqueDeviceConfiguration": "driver! s; parameters! any",
    "DeviceAttribute": "int i64; bool b; string s; version s",
    "DeviceCapacity": "value! q; requestPolicy @resource:CapacityRequestPolicy",
    "DeviceCounterConsumption": "counterSet! s; counters! {}@resource:Counter",
    "DeviceTaint": "key! s; value s; effect! s; timeAdded t",
    "Counter": "value! q",
    "DeviceRequest": "name! s; exactly @resource:ExactDeviceRequest; firstAvailable [atomic]@resource:DeviceSubRequest",
    "DeviceConstraint": "requests [atomic]s; matchAttribute s; distinctAttribute s",
    "DeviceClaimConfiguration": "requests [atomic]s; opaque @resource:OpaqueDeviceConfiguration",
    "DeviceAllocationResult": (
        "results [atomic]@resource:DeviceRequestAllocationResult; "
        "config [atomic]@resource:DeviceAllocationConfiguration"),
    "NetworkDeviceData": "interfaceName s; ips [atomic]s; hardwareAddress s",
    "CapacityRequestPolicy": "default q; validValues [atomic]q; validRange @resource:CapacityRequestPolicyRange",
    "ExactDeviceRequest": (
        "deviceClassName! s; selectors [atomic]@resource:DeviceSelector; allocationMode s; count i64; adminAccess b; "
        "tolerations [atomic]@resource:DeviceToleration; capacity @resource:CapacityRequirements"),
    "DeviceSubRequest": (
        "name! s; deviceClassName! s; selectors [atomic]@resource:DeviceSelector; allocationMode s; count i64; "
        "tolerations [atomic]@resource:DeviceToleration; capacity @resource:CapacityRequirements"),
    "DeviceRequestAllocationResult": (
        "request! s; driver! s; pool! s; device! s; adminAccess b; tolerations [atomic]@resource:DeviceToleration; "
        "bindingConditions [atomic]s; bindingFailureConditions [atomic]s; shareID s; consumedCapacity {}q"),
    "DeviceAllocationConfiguration": "source! s; requests [atomic]s; opaque @resource:OpaqueDeviceConfiguration",
    "CapacityRequestPolicyRange": "min! q; max q; step q",
    "DeviceToleration": "key s; operator s; value s; effect s; tolerationSeconds i64",
    "CapacityRequirements": "requests {}q",
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
