"""resource.k8s.io/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "DeviceClass": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec! @resource:DeviceClassSpec 2",
    "ResourceSlice": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec! @resource:ResourceSliceSpec 2",
    "ResourceClaim": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec! @resource:ResourceClaimSpec 2; "
        "status @resource:ResourceClaimStatus 3"),
    "ResourceClaimTemplate": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec! @resource:ResourceClaimTemplateSpec 2"),
    "DeviceClassSpec": (
        "selectors [atomic]@resource:DeviceSelector 1; config [atomic]@resource:DeviceClassConfiguration 2; "
        "extendedResourceName s 4p"),
    "ResourceSliceSpec": (
        "driver! s 1; pool! @resource:ResourcePool 2; nodeName s 3p; nodeSelector @core:NodeSelector 4p; "
        "allNodes b 5p; devices [atomic]@resource:Device 6; perDeviceNodeSelection b 7p; "
        "sharedCounters [atomic]@resource:CounterSet 8"),
    "ResourceClaimSpec": "devices @resource:DeviceClaim 1",
    "ResourceClaimStatus": (
        "allocation @resource:AllocationResult 1p; reservedFor [map=uid]@resource:ResourceClaimConsumerReference 2; "
        "devices [map=driver,device,pool,shareID]@resource:AllocatedDeviceStatus 4"),
    "ResourceClaimTemplateSpec": "metadata @meta:ObjectMeta 1; spec! @resource:ResourceClaimSpec 2",
    "DeviceSelector": "cel @resource:CELDeviceSelector 1p",
    "DeviceClassConfiguration": (
        "opaque @resource:OpaqueDeviceConfiguration; DeviceConfiguration @resource:DeviceConfiguration 1n"),
    "ResourcePool": "name! s 1; generation! i64 2; resourceSliceCount! i64 3",
    "Device": (
        "name! s 1; attributes {}@resource:DeviceAttribute 2; capacity {}@resource:DeviceCapacity 3; "
        "consumesCounters [atomic]@resource:DeviceCounterConsumption 4; nodeName s 5p; "
        "nodeSelector @core:NodeSelector 6p; allNodes b 7p; taints [atomic]@resource:DeviceTaint 8; "
        "bindsToNode b 9p; bindingConditions [atomic]s 10; bindingFailureConditions [atomic]s 11; "
        "allowMultipleAllocations b 12p"),
    "CounterSet": "name! s 1; counters! {}@resource:Counter 2",
    "DeviceClaim": (
        "requests [atomic]@resource:DeviceRequest 1; constraints [atomic]@resource:DeviceConstraint 2; "
        "config [atomic]@resource:DeviceClaimConfiguration 3"),
    "AllocationResult": (
        "devices @resource:DeviceAllocationResult 1; nodeSelector @core:NodeSelector 3p; allocationTimestamp t 5p"),
    "ResourceClaimConsumerReference": "apiGroup s 1; resource! s 3; name! s 4; uid! s<types.UID> 5",
    "AllocatedDeviceStatus": (
        "driver! s 1; pool! s 2; device! s 3; shareID s 7p; conditions [map=type]@meta:Condition 4; data any 5p; "
        "networkData @resource:NetworkDeviceData 6p"),
    "CELDeviceSelector": "expression! s 1",
    "OpaqueDeviceConfiguration": "driver! s 1; parameters! any 2",
    "DeviceAttribute": "int i64 2p; bool b 3p; string s 4p; version s 5p",
    "DeviceCapacity": "value! q 1; requestPolicy @resource:CapacityRequestPolicy 2p",
    "DeviceCounterConsumption": "counterSet! s 1; counters! {}@resource:Counter 2",
    "DeviceTaint": "key! s 1; value s 2; effect! s<DeviceTaintEffect> 3; timeAdded t 4p",
    "Counter": "value! q 1",
    "DeviceRequest": (
        "name! s 1; exactly @resource:ExactDeviceRequest 2p; firstAvailable [atomic]@resource:DeviceSubRequest 3"),
    "DeviceConstraint": (
        "requests [atomic]s 1; matchAttribute s<FullyQualifiedName> 2p; distinctAttribute s<FullyQualifiedName> 3p"),
    "DeviceClaimConfiguration": (
        "requests [atomic]s 1; opaque @resource:OpaqueDeviceConfiguration; "
        "DeviceConfiguration @resource:DeviceConfiguration 2n"),
    "DeviceAllocationResult": (
        "results [atomic]@resource:DeviceRequestAllocationResult 1; "
        "config [atomic]@resource:DeviceAllocationConfiguration 2"),
    "NetworkDeviceData": "interfaceName s 1; ips [atomic]s 2; hardwareAddress s 3",
    "CapacityRequestPolicy": (
        "default q 1p; validValues [atomic]q 3; validRange @resource:CapacityRequestPolicyRange 4p"),
    "ExactDeviceRequest": (
        "deviceClassName! s 1; selectors [atomic]@resource:DeviceSelector 2; "
        "allocationMode s<DeviceAllocationMode> 3; count i64 4; adminAccess b 5p; "
        "tolerations [atomic]@resource:DeviceToleration 6; capacity @resource:CapacityRequirements 7p"),
    "DeviceSubRequest": (
        "name! s 1; deviceClassName! s 2; selectors [atomic]@resource:DeviceSelector 3; "
        "allocationMode s<DeviceAllocationMode> 4; count i64 5; tolerations [atomic]@resource:DeviceToleration 6; "
        "capacity @resource:CapacityRequirements 7p"),
    "DeviceRequestAllocationResult": (
        "request! s 1; driver! s 2; pool! s 3; device! s 4; adminAccess b 5p; "
        "tolerations [atomic]@resource:DeviceToleration 6; bindingConditions [atomic]s 7; "
        "bindingFailureConditions [atomic]s 8; shareID s<types.UID> 9p; consumedCapacity {}q 10"),
    "DeviceAllocationConfiguration": (
        "source! s<AllocationConfigSource> 1; requests [atomic]s 2; "
        "opaque @resource:OpaqueDeviceConfiguration; DeviceConfiguration @resource:DeviceConfiguration 3n"),
    "CapacityRequestPolicyRange": "min! q 1p; max q 2p; step q 3p",
    "DeviceToleration": (
        "key s 1; operator s<DeviceTolerationOperator> 2; value s 3; effect s<DeviceTaintEffect> 4; "
        "tolerationSeconds i64 5p"),
    "CapacityRequirements": "requests {}q 1",
    "DeviceConfiguration": "opaque @resource:OpaqueDeviceConfiguration 1p",
}

PROTOBUF_ONLY: frozenset[str] = frozenset({
    "DeviceConfiguration",
})
