"""The kinds of the other groups described field by field in the compact form :mod:`.compact`
reads: apps (StatefulSet, DaemonSet, ControllerRevision, Deployment and ReplicaSet status),
batch (CronJob, Job status), policy (PodDisruptionBudget), rbac.authorization.k8s.io,
storage.k8s.io, resource.k8s.io and events.k8s.io.

Field names, JSON types, required fields and list semantics are facts of ``k8s.io/api``
v0.34 (Kubernetes 1.34).
"""

from __future__ import annotations

GROUP_SPECS: dict[str, str] = {
    "apps:StatefulSet": ("apiVersion s; kind s; metadata @meta:ObjectMeta; spec @apps:StatefulSetSpec; "
                         "status @apps:StatefulSetStatus"),
    "apps:DaemonSet": ("apiVersion s; kind s; metadata @meta:ObjectMeta; spec @apps:DaemonSetSpec; "
                       "status @apps:DaemonSetStatus"),
    "apps:ControllerRevision": "apiVersion s; kind s; metadata @meta:ObjectMeta; data any; revision! i64",
    "apps:DeploymentStatus": ("observedGeneration i64; replicas i32; updatedReplicas i32; readyReplicas i32; "
                              "availableReplicas i32; unavailableReplicas i32; terminatingReplicas i32; "
                              "conditions [map=type]@apps:DeploymentCondition; collisionCount i32"),
    "apps:ReplicaSetStatus": ("replicas! i32; fullyLabeledReplicas i32; readyReplicas i32; availableReplicas i32; "
                              "terminatingReplicas i32; observedGeneration i64; "
                              "conditions [map=type]@apps:ReplicaSetCondition"),
    "batch:CronJob": ("apiVersion s; kind s; metadata @meta:ObjectMeta; spec @batch:CronJobSpec; "
                      "status @batch:CronJobStatus"),
    "batch:JobStatus": ("conditions [atomic]@batch:JobCondition; startTime t; completionTime t; active i32; "
                        "succeeded i32; failed i32; terminating i32; completedIndexes s; failedIndexes s; "
                        "uncountedTerminatedPods @batch:UncountedTerminatedPods; ready i32"),
    "policy:PodDisruptionBudget": ("apiVersion s; kind s; metadata @meta:ObjectMeta; "
                                   "spec @policy:PodDisruptionBudgetSpec; status @policy:PodDisruptionBudgetStatus"),
    "rbac:Role": "apiVersion s; kind s; metadata @meta:ObjectMeta; rules [atomic]@rbac:PolicyRule",
    "rbac:ClusterRole": ("apiVersion s; kind s; metadata @meta:ObjectMeta; rules [atomic]@rbac:PolicyRule; "
                         "aggregationRule @rbac:AggregationRule"),
    "rbac:RoleBinding": ("apiVersion s; kind s; metadata @meta:ObjectMeta; subjects [atomic]@rbac:Subject; "
                         "roleRef! @rbac:RoleRef"),
    "rbac:ClusterRoleBinding": ("apiVersion s; kind s; metadata @meta:ObjectMeta; subjects [atomic]@rbac:Subject; "
                                "roleRef! @rbac:RoleRef"),
    "storage:StorageClass": ("apiVersion s; kind s; metadata @meta:ObjectMeta; provisioner! s; parameters {}s; "
                             "reclaimPolicy s; mountOptions [atomic]s; allowVolumeExpansion b; volumeBindingMode s; "
                             "allowedTopologies [atomic]@core:TopologySelectorTerm"),
    "storage:CSINode": "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @storage:CSINodeSpec",
    "storage:CSIDriver": "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @storage:CSIDriverSpec",
    "storage:CSIStorageCapacity": ("apiVersion s; kind s; metadata @meta:ObjectMeta; "
                                   "nodeTopology @meta:LabelSelector; storageClassName! s; capacity q; "
                                   "maximumVolumeSize q"),
    "storage:VolumeAttachment": ("apiVersion s; kind s; metadata @meta:ObjectMeta; "
                                 "spec! @storage:VolumeAttachmentSpec; status @storage:VolumeAttachmentStatus"),
    "resource:DeviceClass": "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @resource:DeviceClassSpec",
    "resource:ResourceSlice": "apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @resource:ResourceSliceSpec",
    "resource:ResourceClaim": ("apiVersion s; kind s; metadata @meta:ObjectMeta; spec! @resource:ResourceClaimSpec; "
                               "status @resource:ResourceClaimStatus"),
    "resource:ResourceClaimTemplate": ("apiVersion s; kind s; metadata @meta:ObjectMeta; "
                                       "spec! @resource:ResourceClaimTemplateSpec"),
    "events:Event": ("apiVersion s; kind s; metadata @meta:ObjectMeta; eventTime! mt; series @events:EventSeries; "
                     "reportingController s; reportingInstance s; action s; reason s; "
                     "regarding @core:ObjectReference; related @core:ObjectReference; note s; type s; "
                     "deprecatedSource @core:EventSource; deprecatedFirstTimestamp t; deprecatedLastTimestamp t; "
                     "deprecatedCount i32"),
    "apps:StatefulSetSpec": ("replicas i32; selector @meta:LabelSelector; template! @core:PodTemplateSpec; "
                             "volumeClaimTemplates [atomic]@core:PersistentVolumeClaim; serviceName s; "
                             "podManagementPolicy s; updateStrategy @apps:StatefulSetUpdateStrategy; "
                             "revisionHistoryLimit i32; minReadySeconds i32; "
                             "persistentVolumeClaimRetentionPolicy @apps:StatefulSetPersistentVolumeClaimRetentionPolicy; "
                             "ordinals @apps:StatefulSetOrdinals"),
    "apps:StatefulSetStatus": ("observedGeneration i64; replicas! i32; readyReplicas i32; currentReplicas i32; "
                               "updatedReplicas i32; currentRevision s; updateRevision s; collisionCount i32; "
                               "conditions [map=type]@apps:StatefulSetCondition; availableReplicas i32"),
    "apps:DaemonSetSpec": ("selector @meta:LabelSelector; template! @core:PodTemplateSpec; "
                           "updateStrategy @apps:DaemonSetUpdateStrategy; minReadySeconds i32; "
                           "revisionHistoryLimit i32"),
    "apps:DaemonSetStatus": ("currentNumberScheduled! i32; numberMisscheduled! i32; desiredNumberScheduled! i32; "
                             "numberReady! i32; observedGeneration i64; updatedNumberScheduled i32; "
                             "numberAvailable i32; numberUnavailable i32; collisionCount i32; "
                             "conditions [map=type]@apps:DaemonSetCondition"),
    "apps:DeploymentCondition": "type! s; status! s; lastUpdateTime t; lastTransitionTime t; reason s; message s",
    "apps:ReplicaSetCondition": "type! s; status! s; lastTransitionTime t; reason s; message s",
    "batch:CronJobSpec": ("schedule! s; timeZone s; startingDeadlineSeconds i64; concurrencyPolicy s; suspend b; "
                          "jobTemplate! @batch:JobTemplateSpec; successfulJobsHistoryLimit i32; "
                          "failedJobsHistoryLimit i32"),
    "batch:CronJobStatus": "active [atomic]@core:ObjectReference; lastScheduleTime t; lastSuccessfulTime t",
    "batch:JobCondition": "type! s; status! s; lastProbeTime t; lastTransitionTime t; reason s; message s",
    "batch:UncountedTerminatedPods": "succeeded [set]s; failed [set]s",
    "policy:PodDisruptionBudgetSpec": ("minAvailable x; selector @meta:LabelSelector; maxUnavailable x; "
                                       "unhealthyPodEvictionPolicy s"),
    "policy:PodDisruptionBudgetStatus": ("observedGeneration i64; disruptedPods {}t; disruptionsAllowed! i32; "
                                         "currentHealthy! i32; desiredHealthy! i32; expectedPods! i32; "
                                         "conditions [map=type]@meta:Condition"),
    "rbac:PolicyRule": ("verbs! [atomic]s; apiGroups [atomic]s; resources [atomic]s; resourceNames [atomic]s; "
                        "nonResourceURLs [atomic]s"),
    "rbac:AggregationRule": "clusterRoleSelectors [atomic]@meta:LabelSelector",
    "rbac:Subject": "kind! s; apiGroup s; name! s; namespace s",
    "rbac:RoleRef": "apiGroup! s; kind! s; name! s",
    "storage:CSINodeSpec": "drivers! [map=name]@storage:CSINodeDriver",
    "storage:CSIDriverSpec": ("attachRequired b; podInfoOnMount b; volumeLifecycleModes [set]s; storageCapacity b; "
                              "fsGroupPolicy s; tokenRequests [atomic]@storage:TokenRequest; requiresRepublish b; "
                              "seLinuxMount b; nodeAllocatableUpdatePeriodSeconds i64"),
    "storage:VolumeAttachmentSpec": "attacher! s; source! @storage:VolumeAttachmentSource; nodeName! s",
    "storage:VolumeAttachmentStatus": ("attached! b; attachmentMetadata {}s; attachError @storage:VolumeError; "
                                       "detachError @storage:VolumeError"),
    "resource:DeviceClassSpec": ("selectors [atomic]@resource:DeviceSelector; "
                                 "config [atomic]@resource:DeviceClassConfiguration; extendedResourceName s"),
    "resource:ResourceSliceSpec": ("driver! s; pool! @resource:ResourcePool; nodeName s; "
                                   "nodeSelector @core:NodeSelector; allNodes b; devices [atomic]@resource:Device; "
                                   "perDeviceNodeSelection b; sharedCounters [atomic]@resource:CounterSet"),
    "resource:ResourceClaimSpec": "devices @resource:DeviceClaim",
    "resource:ResourceClaimStatus": ("allocation @resource:AllocationResult; "
                                     "reservedFor [map=uid]@resource:ResourceClaimConsumerReference; "
                                     "devices [map=driver,device,pool,shareID]@resource:AllocatedDeviceStatus"),
    "resource:ResourceClaimTemplateSpec": "metadata @meta:ObjectMeta; spec! @resource:ResourceClaimSpec",
    "events:EventSeries": "count! i32; lastObservedTime! mt",
    "apps:StatefulSetUpdateStrategy": "type s; rollingUpdate @apps:RollingUpdateStatefulSetStrategy",
    "apps:StatefulSetPersistentVolumeClaimRetentionPolicy": "whenDeleted s; whenScaled s",
    "apps:StatefulSetOrdinals": "start i32",
    "apps:StatefulSetCondition": "type! s; status! s; lastTransitionTime t; reason s; message s",
    "apps:DaemonSetUpdateStrategy": "type s; rollingUpdate @apps:RollingUpdateDaemonSet",
    "apps:DaemonSetCondition": "type! s; status! s; lastTransitionTime t; reason s; message s",
    "batch:JobTemplateSpec": "metadata @meta:ObjectMeta; spec @batch:JobSpec",
    "storage:CSINodeDriver": ("name! s; nodeID! s; topologyKeys [atomic]s; "
                              "allocatable @storage:VolumeNodeResources"),
    "storage:TokenRequest": "audience! s; expirationSeconds i64",
    "storage:VolumeAttachmentSource": "persistentVolumeName s; inlineVolumeSpec @core:PersistentVolumeSpec",
    "storage:VolumeError": "time t; message s; errorCode i32",
    "resource:DeviceSelector": "cel @resource:CELDeviceSelector",
    "resource:DeviceClassConfiguration": "opaque @resource:OpaqueDeviceConfiguration",
    "resource:ResourcePool": "name! s; generation! i64; resourceSliceCount! i64",
    "resource:Device": ("name! s; attributes {}@resource:DeviceAttribute; capacity {}@resource:DeviceCapacity; "
                        "consumesCounters [atomic]@resource:DeviceCounterConsumption; nodeName s; "
                        "nodeSelector @core:NodeSelector; allNodes b; taints [atomic]@resource:DeviceTaint; "
                        "bindsToNode b; bindingConditions [atomic]s; bindingFailureConditions [atomic]s; "
                        "allowMultipleAllocations b"),
    "resource:CounterSet": "name! s; counters! {}@resource:Counter",
    "resource:DeviceClaim": ("requests [atomic]@resource:DeviceRequest; "
                             "constraints [atomic]@resource:DeviceConstraint; "
                             "config [atomic]@resource:DeviceClaimConfiguration"),
    "resource:AllocationResult": ("devices @resource:DeviceAllocationResult; nodeSelector @core:NodeSelector; "
                                  "allocationTimestamp t"),
    "resource:ResourceClaimConsumerReference": "apiGroup s; resource! s; name! s; uid! s",
    "resource:AllocatedDeviceStatus": ("driver! s; pool! s; device! s; shareID s; "
                                       "conditions [map=type]@meta:Condition; data any; "
                                       "networkData @resource:NetworkDeviceData"),
    "apps:RollingUpdateStatefulSetStrategy": "partition i32; maxUnavailable x",
    "apps:RollingUpdateDaemonSet": "maxUnavailable x; maxSurge x",
    "storage:VolumeNodeResources": "count i32",
    "resource:CELDeviceSelector": "expression! s",
    "resource:OpaqueDeviceConfiguration": "driver! s; parameters! any",
    "resource:DeviceAttribute": "int i64; bool b; string s; version s",
    "resource:DeviceCapacity": "value! q; requestPolicy @resource:CapacityRequestPolicy",
    "resource:DeviceCounterConsumption": "counterSet! s; counters! {}@resource:Counter",
    "resource:DeviceTaint": "key! s; value s; effect! s; timeAdded t",
    "resource:Counter": "value! q",
    "resource:DeviceRequest": ("name! s; exactly @resource:ExactDeviceRequest; "
                               "firstAvailable [atomic]@resource:DeviceSubRequest"),
    "resource:DeviceConstraint": "requests [atomic]s; matchAttribute s; distinctAttribute s",
    "resource:DeviceClaimConfiguration": "requests [atomic]s; opaque @resource:OpaqueDeviceConfiguration",
    "resource:DeviceAllocationResult": ("results [atomic]@resource:DeviceRequestAllocationResult; "
                                        "config [atomic]@resource:DeviceAllocationConfiguration"),
    "resource:NetworkDeviceData": "interfaceName s; ips [atomic]s; hardwareAddress s",
    "resource:CapacityRequestPolicy": ("default q; validValues [atomic]q; "
                                       "validRange @resource:CapacityRequestPolicyRange"),
    "resource:ExactDeviceRequest": ("deviceClassName! s; selectors [atomic]@resource:DeviceSelector; "
                                    "allocationMode s; count i64; adminAccess b; "
                                    "tolerations [atomic]@resource:DeviceToleration; "
                                    "capacity @resource:CapacityRequirements"),
    "resource:DeviceSubRequest": ("name! s; deviceClassName! s; selectors [atomic]@resource:DeviceSelector; "
                                  "allocationMode s; count i64; tolerations [atomic]@resource:DeviceToleration; "
                                  "capacity @resource:CapacityRequirements"),
    "resource:DeviceRequestAllocationResult": ("request! s; driver! s; pool! s; device! s; adminAccess b; "
                                               "tolerations [atomic]@resource:DeviceToleration; "
                                               "bindingConditions [atomic]s; bindingFailureConditions [atomic]s; "
                                               "shareID s; consumedCapacity {}q"),
    "resource:DeviceAllocationConfiguration": ("source! s; requests [atomic]s; "
                                               "opaque @resource:OpaqueDeviceConfiguration"),
    "resource:CapacityRequestPolicyRange": "min! q; max q; step q",
    "resource:DeviceToleration": "key s; operator s; value s; effect s; tolerationSeconds i64",
    "resource:CapacityRequirements": "requests {}q",
}
