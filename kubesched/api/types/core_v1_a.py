"""core/v1 types from AWSElasticBlockStoreVolumeSource to PersistentVolumeStatus, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).

``PROTOBUF_ONLY``: messages the API server reads or writes in protobuf but serves no
OpenAPI definition of (subresources, reviews, options).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "AWSElasticBlockStoreVolumeSource": "volumeID! s 1; fsType s 2; partition i32 3; readOnly b 4",
    "Affinity": (
        "nodeAffinity @core:NodeAffinity 1p; podAffinity @core:PodAffinity 2p; "
        "podAntiAffinity @core:PodAntiAffinity 3p"),
    "AppArmorProfile": "type! s<AppArmorProfileType> 1; localhostProfile s 2p",
    "AttachedVolume": "name! s<UniqueVolumeName> 1; devicePath! s 2",
    "AzureDiskVolumeSource": (
        "diskName! s 1; diskURI! s 2; cachingMode s<AzureDataDiskCachingMode> 3p; fsType s 4p; readOnly b 5p; "
        "kind s<AzureDataDiskKind> 6p"),
    "AzureFilePersistentVolumeSource": "secretName! s 1; shareName! s 2; readOnly b 3; secretNamespace s 4p",
    "AzureFileVolumeSource": "secretName! s 1; shareName! s 2; readOnly b 3",
    "Binding": "metadata @meta:ObjectMeta 1; target @core:ObjectReference 2",
    "CSIPersistentVolumeSource": (
        "driver! s 1; volumeHandle! s 2; readOnly b 3; fsType s 4; volumeAttributes {}s 5; "
        "controllerPublishSecretRef @core:SecretReference 6p; nodeStageSecretRef @core:SecretReference 7p; "
        "nodePublishSecretRef @core:SecretReference 8p; controllerExpandSecretRef @core:SecretReference 9p; "
        "nodeExpandSecretRef @core:SecretReference 10p"),
    "CSIVolumeSource": (
        "driver! s 1; readOnly b 2p; fsType s 3p; volumeAttributes {}s 4; "
        "nodePublishSecretRef @core:LocalObjectReference 5p"),
    "Capabilities": "add [atomic]s<Capability> 1; drop [atomic]s<Capability> 2",
    "CephFSPersistentVolumeSource": (
        "monitors! [atomic]s 1; path s 2; user s 3; secretFile s 4; secretRef @core:SecretReference 5p; readOnly b 6"),
    "CephFSVolumeSource": (
        "monitors! [atomic]s 1; path s 2; user s 3; secretFile s 4; secretRef @core:LocalObjectReference 5p; "
        "readOnly b 6"),
    "CinderPersistentVolumeSource": "volumeID! s 1; fsType s 2; readOnly b 3; secretRef @core:SecretReference 4p",
    "CinderVolumeSource": "volumeID! s 1; fsType s 2; readOnly b 3; secretRef @core:LocalObjectReference 4p",
    "ClientIPConfig": "timeoutSeconds i32 1p",
    "ClusterTrustBundleProjection": (
        "name s 1p; signerName s 2p; labelSelector @meta:LabelSelector 3p; optional b 5p; path! s 4"),
    "ConfigMap": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; data {}s 2; binaryData {}y 3; immutable b 4p",
    "ConfigMapEnvSource": "name s; optional b 2p; LocalObjectReference @core:LocalObjectReference 1n",
    "ConfigMapKeySelector": "name s; key! s 2; optional b 3p; LocalObjectReference @core:LocalObjectReference 1n",
    "ConfigMapNodeConfigSource": (
        "namespace! s 1; name! s 2; uid s<types.UID> 3; resourceVersion s 4; kubeletConfigKey! s 5"),
    "ConfigMapProjection": (
        "name s; items [atomic]@core:KeyToPath 2; optional b 4p; LocalObjectReference @core:LocalObjectReference 1n"),
    "ConfigMapVolumeSource": (
        "name s; items [atomic]@core:KeyToPath 2; defaultMode i32 3p; optional b 4p; "
        "LocalObjectReference @core:LocalObjectReference 1n"),
    "Container": (
        "name! s 1; image s 2; command [atomic]s 3; args [atomic]s 4; workingDir s 5; "
        "ports [map=containerPort,protocol]@core:ContainerPort 6; envFrom [atomic]@core:EnvFromSource 19; "
        "env [map=name]@core:EnvVar 7; resources @core:ResourceRequirements 8; "
        "resizePolicy [atomic]@core:ContainerResizePolicy 23; restartPolicy s<ContainerRestartPolicy> 24p; "
        "restartPolicyRules [atomic]@core:ContainerRestartRule 25; volumeMounts [map=mountPath]@core:VolumeMount 9; "
        "volumeDevices [map=devicePath]@core:VolumeDevice 21; livenessProbe @core:Probe 10p; "
        "readinessProbe @core:Probe 11p; startupProbe @core:Probe 22p; lifecycle @core:Lifecycle 12p; "
        "terminationMessagePath s 13; terminationMessagePolicy s<TerminationMessagePolicy> 20; "
        "imagePullPolicy s<PullPolicy> 14; securityContext @core:SecurityContext 15p; stdin b 16; stdinOnce b 17; "
        "tty b 18"),
    "ContainerExtendedResourceRequest": "containerName! s 1; resourceName! s 2; requestName! s 3",
    "ContainerImage": "names [atomic]s 1; sizeBytes i64 2",
    "ContainerPort": "name s 1; hostPort i32 2; containerPort! i32 3; protocol s<Protocol> 4; hostIP s 5",
    "ContainerResizePolicy": "resourceName! s<ResourceName> 1; restartPolicy! s<ResourceResizeRestartPolicy> 2",
    "ContainerRestartRule": (
        "action! s<ContainerRestartRuleAction> 1; exitCodes @core:ContainerRestartRuleOnExitCodes 2p"),
    "ContainerRestartRuleOnExitCodes": "operator! s<ContainerRestartRuleOnExitCodesOperator> 1; values [set]i32 2",
    "ContainerState": (
        "waiting @core:ContainerStateWaiting 1p; running @core:ContainerStateRunning 2p; "
        "terminated @core:ContainerStateTerminated 3p"),
    "ContainerStateRunning": "startedAt t 1",
    "ContainerStateTerminated": (
        "exitCode! i32 1; signal i32 2; reason s 3; message s 4; startedAt t 5; finishedAt t 6; containerID s 7"),
    "ContainerStateWaiting": "reason s 1; message s 2",
    "ContainerStatus": (
        "name! s 1; state @core:ContainerState 2; lastState @core:ContainerState 3; ready! b 4; restartCount! i32 5; "
        "image! s 6; imageID! s 7; containerID s 8; started b 9p; allocatedResources {ResourceList}q 10; "
        "resources @core:ResourceRequirements 11p; volumeMounts [map=mountPath]@core:VolumeMountStatus 12; "
        "user @core:ContainerUser 13p; allocatedResourcesStatus [map=name]@core:ResourceStatus 14; "
        "stopSignal s<Signal> 15p"),
    "ContainerUser": "linux @core:LinuxContainerUser 1p",
    "DaemonEndpoint": "Port! i32 1",
    "DownwardAPIProjection": "items [atomic]@core:DownwardAPIVolumeFile 1",
    "DownwardAPIVolumeFile": (
        "path! s 1; fieldRef @core:ObjectFieldSelector 2p; resourceFieldRef @core:ResourceFieldSelector 3p; "
        "mode i32 4p"),
    "DownwardAPIVolumeSource": "items [atomic]@core:DownwardAPIVolumeFile 1; defaultMode i32 2p",
    "EmptyDirVolumeSource": "medium s<StorageMedium> 1; sizeLimit q 2p",
    "EnvFromSource": "prefix s 1; configMapRef @core:ConfigMapEnvSource 2p; secretRef @core:SecretEnvSource 3p",
    "EnvVar": "name! s 1; value s 2; valueFrom @core:EnvVarSource 3p",
    "EnvVarSource": (
        "fieldRef @core:ObjectFieldSelector 1p; resourceFieldRef @core:ResourceFieldSelector 2p; "
        "configMapKeyRef @core:ConfigMapKeySelector 3p; secretKeyRef @core:SecretKeySelector 4p; "
        "fileKeyRef @core:FileKeySelector 5p"),
    "EphemeralContainer": (
        "name! s; image s; command [atomic]s; args [atomic]s; workingDir s; "
        "ports [map=containerPort,protocol]@core:ContainerPort; envFrom [atomic]@core:EnvFromSource; "
        "env [map=name]@core:EnvVar; resources @core:ResourceRequirements; "
        "resizePolicy [atomic]@core:ContainerResizePolicy; restartPolicy s<ContainerRestartPolicy>; "
        "restartPolicyRules [atomic]@core:ContainerRestartRule; volumeMounts [map=mountPath]@core:VolumeMount; "
        "volumeDevices [map=devicePath]@core:VolumeDevice; livenessProbe @core:Probe; readinessProbe @core:Probe; "
        "startupProbe @core:Probe; lifecycle @core:Lifecycle; terminationMessagePath s; "
        "terminationMessagePolicy s<TerminationMessagePolicy>; imagePullPolicy s<PullPolicy>; "
        "securityContext @core:SecurityContext; stdin b; stdinOnce b; tty b; targetContainerName s 2; "
        "EphemeralContainerCommon @core:EphemeralContainerCommon 1n"),
    "EphemeralContainerCommon": (
        "name s 1; image s 2; command [atomic]s 3; args [atomic]s 4; workingDir s 5; "
        "ports [map=containerPort,protocol]@core:ContainerPort 6; env [map=name]@core:EnvVar 7; "
        "resources @core:ResourceRequirements 8; volumeMounts [map=mountPath]@core:VolumeMount 9; "
        "livenessProbe @core:Probe 10p; readinessProbe @core:Probe 11p; lifecycle @core:Lifecycle 12p; "
        "terminationMessagePath s 13; imagePullPolicy s<PullPolicy> 14; securityContext @core:SecurityContext 15p; "
        "stdin b 16; stdinOnce b 17; tty b 18; envFrom [atomic]@core:EnvFromSource 19; "
        "terminationMessagePolicy s<TerminationMessagePolicy> 20; "
        "volumeDevices [map=devicePath]@core:VolumeDevice 21; startupProbe @core:Probe 22p; "
        "resizePolicy [atomic]@core:ContainerResizePolicy 23; restartPolicy s<ContainerRestartPolicy> 24p; "
        "restartPolicyRules [atomic]@core:ContainerRestartRule 25"),
    "EphemeralVolumeSource": "volumeClaimTemplate @core:PersistentVolumeClaimTemplate 1p",
    "Event": (
        "apiVersion s; kind s; metadata! @meta:ObjectMeta 1; involvedObject! @core:ObjectReference 2; reason s 3; "
        "message s 4; source @core:EventSource 5; firstTimestamp t 6; lastTimestamp t 7; count i32 8; type s 9; "
        "eventTime mt 10; series @core:EventSeries 11p; action s 12; related @core:ObjectReference 13p; "
        "reportingComponent s 14; reportingInstance s 15"),
    "EventSeries": "count i32 1; lastObservedTime mt 2",
    "EventSource": "component s 1; host s 2",
    "ExecAction": "command [atomic]s 1",
    "FCVolumeSource": "targetWWNs [atomic]s 1; lun i32 2p; fsType s 3; readOnly b 4; wwids [atomic]s 5",
    "FileKeySelector": "volumeName! s 1; path! s 2; key! s 3; optional b 4p",
    "FlexPersistentVolumeSource": (
        "driver! s 1; fsType s 2; secretRef @core:SecretReference 3p; readOnly b 4; options {}s 5"),
    "FlexVolumeSource": "driver! s 1; fsType s 2; secretRef @core:LocalObjectReference 3p; readOnly b 4; options {}s 5",
    "FlockerVolumeSource": "datasetName s 1; datasetUUID s 2",
    "GCEPersistentDiskVolumeSource": "pdName! s 1; fsType s 2; partition i32 3; readOnly b 4",
    "GRPCAction": "port! i32 1; service s 2p",
    "GitRepoVolumeSource": "repository! s 1; revision s 2; directory s 3",
    "GlusterfsPersistentVolumeSource": "endpoints! s 1; path! s 2; readOnly b 3; endpointsNamespace s 4p",
    "GlusterfsVolumeSource": "endpoints! s 1; path! s 2; readOnly b 3",
    "HTTPGetAction": "path s 1; port! x 2; host s 3; scheme s<URIScheme> 4; httpHeaders [atomic]@core:HTTPHeader 5",
    "HTTPHeader": "name! s 1; value! s 2",
    "HostAlias": "ip! s 1; hostnames [atomic]s 2",
    "HostIP": "ip! s 1",
    "HostPathVolumeSource": "path! s 1; type s<HostPathType> 2p",
    "ISCSIPersistentVolumeSource": (
        "targetPortal! s 1; iqn! s 2; lun! i32 3; iscsiInterface s 4; fsType s 5; readOnly b 6; portals [atomic]s 7; "
        "chapAuthDiscovery b 8; chapAuthSession b 11; secretRef @core:SecretReference 10p; initiatorName s 12p"),
    "ISCSIVolumeSource": (
        "targetPortal! s 1; iqn! s 2; lun! i32 3; iscsiInterface s 4; fsType s 5; readOnly b 6; portals [atomic]s 7; "
        "chapAuthDiscovery b 8; chapAuthSession b 11; secretRef @core:LocalObjectReference 10p; initiatorName s 12p"),
    "ImageVolumeSource": "reference s 1; pullPolicy s<PullPolicy> 2",
    "KeyToPath": "key! s 1; path! s 2; mode i32 3p",
    "Lifecycle": "postStart @core:LifecycleHandler 1p; preStop @core:LifecycleHandler 2p; stopSignal s<Signal> 3p",
    "LifecycleHandler": (
        "exec @core:ExecAction 1p; httpGet @core:HTTPGetAction 2p; tcpSocket @core:TCPSocketAction 3p; "
        "sleep @core:SleepAction 4p"),
    "LinuxContainerUser": "uid! i64 1; gid! i64 2; supplementalGroups [atomic]i64 3",
    "LoadBalancerIngress": "ip s 1; hostname s 2; ipMode s<LoadBalancerIPMode> 3p; ports [atomic]@core:PortStatus 4",
    "LoadBalancerStatus": "ingress [atomic]@core:LoadBalancerIngress 1",
    "LocalObjectReference": "name s 1",
    "LocalVolumeSource": "path! s 1; fsType s 2p",
    "ModifyVolumeStatus": "targetVolumeAttributesClassName s 1; status! s<PersistentVolumeClaimModifyVolumeStatus> 2",
    "NFSVolumeSource": "server! s 1; path! s 2; readOnly b 3",
    "Namespace": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @core:NamespaceSpec 2; "
        "status @core:NamespaceStatus 3"),
    "NamespaceCondition": (
        "type! s<NamespaceConditionType> 1; status! s<ConditionStatus> 2; lastTransitionTime t 4; reason s 5; "
        "message s 6"),
    "NamespaceSpec": "finalizers [atomic]s<FinalizerName> 1",
    "NamespaceStatus": "phase s<NamespacePhase> 1; conditions [map=type]@core:NamespaceCondition 2",
    "Node": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @core:NodeSpec 2; status @core:NodeStatus 3",
    "NodeAddress": "type! s<NodeAddressType> 1; address! s 2",
    "NodeAffinity": (
        "requiredDuringSchedulingIgnoredDuringExecution @core:NodeSelector 1p; "
        "preferredDuringSchedulingIgnoredDuringExecution [atomic]@core:PreferredSchedulingTerm 2"),
    "NodeCondition": (
        "type! s<NodeConditionType> 1; status! s<ConditionStatus> 2; lastHeartbeatTime t 3; lastTransitionTime t 4; "
        "reason s 5; message s 6"),
    "NodeConfigSource": "configMap @core:ConfigMapNodeConfigSource 2p",
    "NodeConfigStatus": (
        "assigned @core:NodeConfigSource 1p; active @core:NodeConfigSource 2p; "
        "lastKnownGood @core:NodeConfigSource 3p; error s 4"),
    "NodeDaemonEndpoints": "kubeletEndpoint @core:DaemonEndpoint 1",
    "NodeFeatures": "supplementalGroupsPolicy b 1p",
    "NodeRuntimeHandler": "name s 1; features @core:NodeRuntimeHandlerFeatures 2p",
    "NodeRuntimeHandlerFeatures": "recursiveReadOnlyMounts b 1p; userNamespaces b 2p",
    "NodeSelector": "nodeSelectorTerms! [atomic]@core:NodeSelectorTerm 1",
    "NodeSelectorRequirement": "key! s 1; operator! s<NodeSelectorOperator> 2; values [atomic]s 3",
    "NodeSelectorTerm": (
        "matchExpressions [atomic]@core:NodeSelectorRequirement 1; "
        "matchFields [atomic]@core:NodeSelectorRequirement 2"),
    "NodeSpec": (
        "podCIDR s 1; podCIDRs [set/merge]s 7; providerID s 3; unschedulable b 4; taints [atomic]@core:Taint 5; "
        "configSource @core:NodeConfigSource 6p; externalID s 2"),
    "NodeStatus": (
        "capacity {ResourceList}q 1; allocatable {ResourceList}q 2; phase s<NodePhase> 3; "
        "conditions [map=type]@core:NodeCondition 4; addresses [map=type]@core:NodeAddress 5; "
        "daemonEndpoints @core:NodeDaemonEndpoints 6; nodeInfo @core:NodeSystemInfo 7; "
        "images [atomic]@core:ContainerImage 8; volumesInUse [atomic]s<UniqueVolumeName> 9; "
        "volumesAttached [atomic]@core:AttachedVolume 10; config @core:NodeConfigStatus 11p; "
        "runtimeHandlers [atomic]@core:NodeRuntimeHandler 12; features @core:NodeFeatures 13p; "
        "declaredFeatures [atomic]s 14"),
    "NodeSwapStatus": "capacity i64 1p",
    "NodeSystemInfo": (
        "machineID! s 1; systemUUID! s 2; bootID! s 3; kernelVersion! s 4; osImage! s 5; "
        "containerRuntimeVersion! s 6; kubeletVersion! s 7; kubeProxyVersion! s 8; operatingSystem! s 9; "
        "architecture! s 10; swap @core:NodeSwapStatus 11p"),
    "ObjectFieldSelector": "apiVersion s 1; fieldPath! s 2",
    "ObjectReference": (
        "kind s 1; namespace s 2; name s 3; uid s<types.UID> 4; apiVersion s 5; resourceVersion s 6; fieldPath s 7"),
    "PersistentVolume": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @core:PersistentVolumeSpec 2; "
        "status @core:PersistentVolumeStatus 3"),
    "PersistentVolumeClaim": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @core:PersistentVolumeClaimSpec 2; "
        "status @core:PersistentVolumeClaimStatus 3"),
    "PersistentVolumeClaimCondition": (
        "type! s<PersistentVolumeClaimConditionType> 1; status! s<ConditionStatus> 2; lastProbeTime t 3; "
        "lastTransitionTime t 4; reason s 5; message s 6"),
    "PersistentVolumeClaimSpec": (
        "accessModes [atomic]s<PersistentVolumeAccessMode> 1; selector @meta:LabelSelector 4p; "
        "resources @core:VolumeResourceRequirements 2; volumeName s 3; storageClassName s 5p; "
        "volumeMode s<PersistentVolumeMode> 6p; dataSource @core:TypedLocalObjectReference 7p; "
        "dataSourceRef @core:TypedObjectReference 8p; volumeAttributesClassName s 9p"),
    "PersistentVolumeClaimStatus": (
        "phase s<PersistentVolumeClaimPhase> 1; accessModes [atomic]s<PersistentVolumeAccessMode> 2; "
        "capacity {ResourceList}q 3; conditions [map=type]@core:PersistentVolumeClaimCondition 4; "
        "allocatedResources {ResourceList}q 5; allocatedResourceStatuses {}s 7; "
        "currentVolumeAttributesClassName s 8p; modifyVolumeStatus @core:ModifyVolumeStatus 9p"),
    "PersistentVolumeClaimTemplate": "metadata @meta:ObjectMeta 1; spec! @core:PersistentVolumeClaimSpec 2",
    "PersistentVolumeClaimVolumeSource": "claimName! s 1; readOnly b 2",
    "PersistentVolumeSpec": (
        "capacity {ResourceList}q 1; gcePersistentDisk @core:GCEPersistentDiskVolumeSource; "
        "awsElasticBlockStore @core:AWSElasticBlockStoreVolumeSource; hostPath @core:HostPathVolumeSource; "
        "glusterfs @core:GlusterfsPersistentVolumeSource; nfs @core:NFSVolumeSource; "
        "rbd @core:RBDPersistentVolumeSource; iscsi @core:ISCSIPersistentVolumeSource; "
        "cinder @core:CinderPersistentVolumeSource; cephfs @core:CephFSPersistentVolumeSource; "
        "fc @core:FCVolumeSource; flocker @core:FlockerVolumeSource; flexVolume @core:FlexPersistentVolumeSource; "
        "azureFile @core:AzureFilePersistentVolumeSource; vsphereVolume @core:VsphereVirtualDiskVolumeSource; "
        "quobyte @core:QuobyteVolumeSource; azureDisk @core:AzureDiskVolumeSource; "
        "photonPersistentDisk @core:PhotonPersistentDiskVolumeSource; portworxVolume @core:PortworxVolumeSource; "
        "scaleIO @core:ScaleIOPersistentVolumeSource; local @core:LocalVolumeSource; "
        "storageos @core:StorageOSPersistentVolumeSource; csi @core:CSIPersistentVolumeSource; "
        "accessModes [atomic]s<PersistentVolumeAccessMode> 3; claimRef @core:ObjectReference 4p; "
        "persistentVolumeReclaimPolicy s<PersistentVolumeReclaimPolicy> 5; storageClassName s 6; "
        "mountOptions [atomic]s 7; volumeMode s<PersistentVolumeMode> 8p; nodeAffinity @core:VolumeNodeAffinity 9p; "
        "volumeAttributesClassName s 10p; PersistentVolumeSource @core:PersistentVolumeSource 2n"),
    "PersistentVolumeStatus": "phase s<PersistentVolumePhase> 1; message s 2; reason s 3; lastPhaseTransitionTime t 4p",
    "PersistentVolumeSource": (
        "gcePersistentDisk @core:GCEPersistentDiskVolumeSource 1p; "
        "awsElasticBlockStore @core:AWSElasticBlockStoreVolumeSource 2p; hostPath @core:HostPathVolumeSource 3p; "
        "glusterfs @core:GlusterfsPersistentVolumeSource 4p; nfs @core:NFSVolumeSource 5p; "
        "rbd @core:RBDPersistentVolumeSource 6p; iscsi @core:ISCSIPersistentVolumeSource 7p; "
        "cinder @core:CinderPersistentVolumeSource 8p; cephfs @core:CephFSPersistentVolumeSource 9p; "
        "fc @core:FCVolumeSource 10p; flocker @core:FlockerVolumeSource 11p; "
        "flexVolume @core:FlexPersistentVolumeSource 12p; azureFile @core:AzureFilePersistentVolumeSource 13p; "
        "vsphereVolume @core:VsphereVirtualDiskVolumeSource 14p; quobyte @core:QuobyteVolumeSource 15p; "
        "azureDisk @core:AzureDiskVolumeSource 16p; photonPersistentDisk @core:PhotonPersistentDiskVolumeSource 17p; "
        "portworxVolume @core:PortworxVolumeSource 18p; scaleIO @core:ScaleIOPersistentVolumeSource 19p; "
        "local @core:LocalVolumeSource 20p; storageos @core:StorageOSPersistentVolumeSource 21p; "
        "csi @core:CSIPersistentVolumeSource 22p"),
}

PROTOBUF_ONLY: frozenset[str] = frozenset({
    "Binding", "EphemeralContainerCommon", "PersistentVolumeSource",
})
