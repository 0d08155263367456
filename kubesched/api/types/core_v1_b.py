"""core/v1 types from PhotonPersistentDiskVolumeSource to WindowsSecurityContextOptions, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).

``PROTOBUF_ONLY``: messages the API server reads or writes in protobuf but serves no
OpenAPI definition of (subresources, reviews, options).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "PhotonPersistentDiskVolumeSource": "pdID! s 1; fsType s 2",
    "Pod": "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @core:PodSpec 2; status @core:PodStatus 3",
    "PodAffinity": (
        "requiredDuringSchedulingIgnoredDuringExecution [atomic]@core:PodAffinityTerm 1; "
        "preferredDuringSchedulingIgnoredDuringExecution [atomic]@core:WeightedPodAffinityTerm 2"),
    "PodAffinityTerm": (
        "labelSelector @meta:LabelSelector 1p; namespaces [atomic]s 2; topologyKey! s 3; "
        "namespaceSelector @meta:LabelSelector 4p; matchLabelKeys [atomic]s 5; mismatchLabelKeys [atomic]s 6"),
    "PodAntiAffinity": (
        "requiredDuringSchedulingIgnoredDuringExecution [atomic]@core:PodAffinityTerm 1; "
        "preferredDuringSchedulingIgnoredDuringExecution [atomic]@core:WeightedPodAffinityTerm 2"),
    "PodCertificateProjection": (
        "signerName! s 1; keyType! s 2; maxExpirationSeconds i32 3p; credentialBundlePath s 4; keyPath s 5; "
        "certificateChainPath s 6"),
    "PodCondition": (
        "type! s<PodConditionType> 1; observedGeneration i64 7; status! s<ConditionStatus> 2; lastProbeTime t 3; "
        "lastTransitionTime t 4; reason s 5; message s 6"),
    "PodDNSConfig": "nameservers [atomic]s 1; searches [atomic]s 2; options [atomic]@core:PodDNSConfigOption 3",
    "PodDNSConfigOption": "name s 1; value s 2p",
    "PodExtendedResourceClaimStatus": (
        "requestMappings! [atomic]@core:ContainerExtendedResourceRequest 1; resourceClaimName! s 2"),
    "PodIP": "ip! s 1",
    "PodOS": "name! s<OSName> 1",
    "PodReadinessGate": "conditionType! s<PodConditionType> 1",
    "PodResourceClaim": "name! s 1; resourceClaimName s 3p; resourceClaimTemplateName s 4p",
    "PodResourceClaimStatus": "name! s 1; resourceClaimName s 2p",
    "PodSchedulingGate": "name! s 1",
    "PodSecurityContext": (
        "seLinuxOptions @core:SELinuxOptions 1p; windowsOptions @core:WindowsSecurityContextOptions 8p; "
        "runAsUser i64 2p; runAsGroup i64 6p; runAsNonRoot b 3p; supplementalGroups [atomic]i64 4; "
        "supplementalGroupsPolicy s 12p; fsGroup i64 5p; sysctls [atomic]@core:Sysctl 7; fsGroupChangePolicy s 9p; "
        "seccompProfile @core:SeccompProfile 10p; appArmorProfile @core:AppArmorProfile 11p; "
        "seLinuxChangePolicy s 13p"),
    "PodSpec": (
        "volumes [map=name]@core:Volume 1; initContainers [map=name]@core:Container 20; "
        "containers! [map=name]@core:Container 2; ephemeralContainers [map=name]@core:EphemeralContainer 34; "
        "restartPolicy s<RestartPolicy> 3; terminationGracePeriodSeconds i64 4p; activeDeadlineSeconds i64 5p; "
        "dnsPolicy s<DNSPolicy> 6; nodeSelector {}s 7; serviceAccountName s 8; serviceAccount s 9; "
        "automountServiceAccountToken b 21p; nodeName s 10; hostNetwork b 11; hostPID b 12; hostIPC b 13; "
        "shareProcessNamespace b 27p; securityContext @core:PodSecurityContext 14p; "
        "imagePullSecrets [map=name]@core:LocalObjectReference 15; hostname s 16; subdomain s 17; "
        "affinity @core:Affinity 18p; schedulerName s 19; tolerations [atomic]@core:Toleration 22; "
        "hostAliases [map=ip]@core:HostAlias 23; priorityClassName s 24; priority i32 25p; "
        "dnsConfig @core:PodDNSConfig 26p; readinessGates [atomic]@core:PodReadinessGate 28; runtimeClassName s 29p; "
        "enableServiceLinks b 30p; preemptionPolicy s<PreemptionPolicy> 31p; overhead {ResourceList}q 32; "
        "topologySpreadConstraints [map=topologyKey,whenUnsatisfiable]@core:TopologySpreadConstraint 33; "
        "setHostnameAsFQDN b 35p; os @core:PodOS 36p; hostUsers b 37p; "
        "schedulingGates [map=name]@core:PodSchedulingGate 38; resourceClaims [map=name]@core:PodResourceClaim 39; "
        "resources @core:ResourceRequirements 40p; hostnameOverride s 41p"),
    "PodStatus": (
        "observedGeneration i64 17; phase s<PodPhase> 1; conditions [map=type]@core:PodCondition 2; message s 3; "
        "reason s 4; nominatedNodeName s 11; hostIP s 5; hostIPs [atomic]@core:HostIP 16; podIP s 6; "
        "podIPs [map=ip]@core:PodIP 12; startTime t 7p; initContainerStatuses [atomic]@core:ContainerStatus 10; "
        "containerStatuses [atomic]@core:ContainerStatus 8; qosClass s<PodQOSClass> 9; "
        "ephemeralContainerStatuses [atomic]@core:ContainerStatus 13; resize s<PodResizeStatus> 14; "
        "resourceClaimStatuses [map=name]@core:PodResourceClaimStatus 15; "
        "extendedResourceClaimStatus @core:PodExtendedResourceClaimStatus 18p; "
        # pod-level in-place resize (InPlacePodLevelResourcesVerticalScaling, 1.35+), JSON only
        "allocatedResources {ResourceList}q; resources @core:ResourceRequirements"),
    "PodTemplateSpec": "metadata @meta:ObjectMeta 1; spec @core:PodSpec 2",
    "PortStatus": "port! i32; protocol! s; error s",
    "PortworxVolumeSource": "volumeID! s 1; fsType s 2; readOnly b 3",
    "PreferredSchedulingTerm": "weight! i32 1; preference! @core:NodeSelectorTerm 2",
    "Probe": (
        "exec @core:ExecAction; httpGet @core:HTTPGetAction; tcpSocket @core:TCPSocketAction; grpc @core:GRPCAction; "
        "initialDelaySeconds i32 2; timeoutSeconds i32 3; periodSeconds i32 4; successThreshold i32 5; "
        "failureThreshold i32 6; terminationGracePeriodSeconds i64 7p; ProbeHandler @core:ProbeHandler 1n"),
    "ProbeHandler": (
        "exec @core:ExecAction 1p; httpGet @core:HTTPGetAction 2p; tcpSocket @core:TCPSocketAction 3p; "
        "grpc @core:GRPCAction 4p"),
    "ProjectedVolumeSource": "sources [atomic]@core:VolumeProjection 1; defaultMode i32 2p",
    "QuobyteVolumeSource": "registry! s 1; volume! s 2; readOnly b 3; user s 4; group s 5; tenant s 6",
    "RBDPersistentVolumeSource": (
        "monitors! [atomic]s; image! s; fsType s; pool s; user s; keyring s; secretRef @core:SecretReference; "
        "readOnly b"),
    "RBDVolumeSource": (
        "monitors! [atomic]s 1; image! s 2; fsType s 3; pool s 4; user s 5; keyring s 6; "
        "secretRef @core:LocalObjectReference 7p; readOnly b 8"),
    "ReplicationController": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta; spec @core:ReplicationControllerSpec; "
        "status @core:ReplicationControllerStatus"),
    "ReplicationControllerCondition": "type! s; status! s; lastTransitionTime t; reason s; message s",
    "ReplicationControllerSpec": "replicas i32; minReadySeconds i32; selector {}s; template @core:PodTemplateSpec",
    "ReplicationControllerStatus": (
        "replicas! i32; fullyLabeledReplicas i32; readyReplicas i32; availableReplicas i32; observedGeneration i64; "
        "conditions [map=type]@core:ReplicationControllerCondition"),
    "ResourceClaim": "name! s 1; request s 2",
    "ResourceFieldSelector": "containerName s 1; resource! s 2; divisor q 3",
    "ResourceHealth": "resourceID! s 1; health s 2",
    "ResourceRequirements": (
        "limits {ResourceList}q 1; requests {ResourceList}q 2; claims [map=name]@core:ResourceClaim 3"),
    "ResourceStatus": "name! s 1; resources [map=resourceID]@core:ResourceHealth 2",
    "SELinuxOptions": "user s 1; role s 2; type s 3; level s 4",
    "ScaleIOPersistentVolumeSource": (
        "gateway! s; system! s; secretRef @core:SecretReference; sslEnabled b; protectionDomain s; storagePool s; "
        "storageMode s; volumeName s; fsType s; readOnly b"),
    "ScaleIOVolumeSource": (
        "gateway! s 1; system! s 2; secretRef @core:LocalObjectReference 3p; sslEnabled b 4; protectionDomain s 5; "
        "storagePool s 6; storageMode s 7; volumeName s 8; fsType s 9; readOnly b 10"),
    "SeccompProfile": "type! s 1; localhostProfile s 2p",
    "Secret": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; data {}y 2; stringData {}s 4; type s 3; immutable b 5p"),
    "SecretEnvSource": "name s; optional b 2p; LocalObjectReference @core:LocalObjectReference 1n",
    "SecretKeySelector": "name s; key! s 2; optional b 3p; LocalObjectReference @core:LocalObjectReference 1n",
    "SecretProjection": (
        "name s; items [atomic]@core:KeyToPath 2; optional b 4p; LocalObjectReference @core:LocalObjectReference 1n"),
    "SecretReference": "name s; namespace s",
    "SecretVolumeSource": "secretName s 1; items [atomic]@core:KeyToPath 2; defaultMode i32 3p; optional b 4p",
    "SecurityContext": (
        "capabilities @core:Capabilities 1p; privileged b 2p; seLinuxOptions @core:SELinuxOptions 3p; "
        "windowsOptions @core:WindowsSecurityContextOptions 10p; runAsUser i64 4p; runAsGroup i64 8p; "
        "runAsNonRoot b 5p; readOnlyRootFilesystem b 6p; allowPrivilegeEscalation b 7p; procMount s 9p; "
        "seccompProfile @core:SeccompProfile 11p; appArmorProfile @core:AppArmorProfile 12p"),
    "Service": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; spec @core:ServiceSpec 2; status @core:ServiceStatus 3"),
    "ServiceAccount": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; secrets [map=name]@core:ObjectReference 2; "
        "imagePullSecrets [atomic]@core:LocalObjectReference 3; automountServiceAccountToken b 4p"),
    "ServiceAccountTokenProjection": "audience s 1; expirationSeconds i64 2p; path! s 3",
    "ServicePort": "name s 1; protocol s 2; appProtocol s; port! i32 3; targetPort x 4; nodePort i32 5",
    "ServiceSpec": (
        "ports [map=port,protocol]@core:ServicePort 1; selector {}s 2; clusterIP s 3; clusterIPs [atomic]s 18; "
        "type s 4; externalIPs [atomic]s 5; sessionAffinity s 7; loadBalancerIP s; "
        "loadBalancerSourceRanges [atomic]s; externalName s 10; externalTrafficPolicy s; healthCheckNodePort i32; "
        "publishNotReadyAddresses b; sessionAffinityConfig @core:SessionAffinityConfig; ipFamilies [atomic]s; "
        "ipFamilyPolicy s; allocateLoadBalancerNodePorts b; loadBalancerClass s; internalTrafficPolicy s; "
        "trafficDistribution s"),
    "ServiceStatus": "loadBalancer @core:LoadBalancerStatus; conditions [map=type]@meta:Condition",
    "SessionAffinityConfig": "clientIP @core:ClientIPConfig",
    "SleepAction": "seconds! i64 1",
    "StorageOSPersistentVolumeSource": (
        "volumeName s; volumeNamespace s; fsType s; readOnly b; secretRef @core:ObjectReference"),
    "StorageOSVolumeSource": (
        "volumeName s 1; volumeNamespace s 2; fsType s 3; readOnly b 4; secretRef @core:LocalObjectReference 5p"),
    "Sysctl": "name! s 1; value! s 2",
    "TCPSocketAction": "port! x 1; host s 2",
    "Taint": "key! s 1; value s 2; effect! s<TaintEffect> 3; timeAdded t 4p",
    "Toleration": (
        "key s 1; operator s<TolerationOperator> 2; value s 3; effect s<TaintEffect> 4; tolerationSeconds i64 5p"),
    "TopologySelectorLabelRequirement": "key! s; values! [atomic]s",
    "TopologySelectorTerm": "matchLabelExpressions [atomic]@core:TopologySelectorLabelRequirement",
    "TopologySpreadConstraint": (
        "maxSkew! i32 1; topologyKey! s 2; whenUnsatisfiable! s<UnsatisfiableConstraintAction> 3; "
        "labelSelector @meta:LabelSelector 4p; minDomains i32 5p; nodeAffinityPolicy s<NodeInclusionPolicy> 6p; "
        "nodeTaintsPolicy s<NodeInclusionPolicy> 7p; matchLabelKeys [atomic]s 8"),
    "TypedLocalObjectReference": "apiGroup s 1p; kind! s 2; name! s 3",
    "TypedObjectReference": "apiGroup s 1p; kind! s 2; name! s 3; namespace s 4p",
    "Volume": (
        "name! s 1; hostPath @core:HostPathVolumeSource; emptyDir @core:EmptyDirVolumeSource; "
        "gcePersistentDisk @core:GCEPersistentDiskVolumeSource; "
        "awsElasticBlockStore @core:AWSElasticBlockStoreVolumeSource; gitRepo @core:GitRepoVolumeSource; "
        "secret @core:SecretVolumeSource; nfs @core:NFSVolumeSource; iscsi @core:ISCSIVolumeSource; "
        "glusterfs @core:GlusterfsVolumeSource; persistentVolumeClaim @core:PersistentVolumeClaimVolumeSource; "
        "rbd @core:RBDVolumeSource; flexVolume @core:FlexVolumeSource; cinder @core:CinderVolumeSource; "
        "cephfs @core:CephFSVolumeSource; flocker @core:FlockerVolumeSource; "
        "downwardAPI @core:DownwardAPIVolumeSource; fc @core:FCVolumeSource; azureFile @core:AzureFileVolumeSource; "
        "configMap @core:ConfigMapVolumeSource; vsphereVolume @core:VsphereVirtualDiskVolumeSource; "
        "quobyte @core:QuobyteVolumeSource; azureDisk @core:AzureDiskVolumeSource; "
        "photonPersistentDisk @core:PhotonPersistentDiskVolumeSource; projected @core:ProjectedVolumeSource; "
        "portworxVolume @core:PortworxVolumeSource; scaleIO @core:ScaleIOVolumeSource; "
        "storageos @core:StorageOSVolumeSource; csi @core:CSIVolumeSource; ephemeral @core:EphemeralVolumeSource; "
        "image @core:ImageVolumeSource; VolumeSource @core:VolumeSource 2n"),
    "VolumeDevice": "name! s 1; devicePath! s 2",
    "VolumeMount": (
        "name! s 1; readOnly b 2; recursiveReadOnly s<RecursiveReadOnlyMode> 7p; mountPath! s 3; subPath s 4; "
        "mountPropagation s<MountPropagationMode> 5p; subPathExpr s 6"),
    "VolumeMountStatus": "name! s 1; mountPath! s 2; readOnly b 3; recursiveReadOnly s 4p",
    "VolumeNodeAffinity": "required @core:NodeSelector",
    "VolumeProjection": (
        "secret @core:SecretProjection 1p; downwardAPI @core:DownwardAPIProjection 2p; "
        "configMap @core:ConfigMapProjection 3p; serviceAccountToken @core:ServiceAccountTokenProjection 4p; "
        "clusterTrustBundle @core:ClusterTrustBundleProjection 5p; podCertificate @core:PodCertificateProjection 6p"),
    "VolumeResourceRequirements": "limits {}q 1; requests {}q 2",
    "VolumeSource": (
        "hostPath @core:HostPathVolumeSource 1p; emptyDir @core:EmptyDirVolumeSource 2p; "
        "gcePersistentDisk @core:GCEPersistentDiskVolumeSource 3p; "
        "awsElasticBlockStore @core:AWSElasticBlockStoreVolumeSource 4p; gitRepo @core:GitRepoVolumeSource 5p; "
        "secret @core:SecretVolumeSource 6p; nfs @core:NFSVolumeSource 7p; iscsi @core:ISCSIVolumeSource 8p; "
        "glusterfs @core:GlusterfsVolumeSource 9p; "
        "persistentVolumeClaim @core:PersistentVolumeClaimVolumeSource 10p; rbd @core:RBDVolumeSource 11p; "
        "flexVolume @core:FlexVolumeSource 12p; cinder @core:CinderVolumeSource 13p; "
        "cephfs @core:CephFSVolumeSource 14p; flocker @core:FlockerVolumeSource 15p; "
        "downwardAPI @core:DownwardAPIVolumeSource 16p; fc @core:FCVolumeSource 17p; "
        "azureFile @core:AzureFileVolumeSource 18p; configMap @core:ConfigMapVolumeSource 19p; "
        "vsphereVolume @core:VsphereVirtualDiskVolumeSource 20p; quobyte @core:QuobyteVolumeSource 21p; "
        "azureDisk @core:AzureDiskVolumeSource 22p; photonPersistentDisk @core:PhotonPersistentDiskVolumeSource 23p; "
        "portworxVolume @core:PortworxVolumeSource 24p; scaleIO @core:ScaleIOVolumeSource 25p; "
        "projected @core:ProjectedVolumeSource 26p; storageos @core:StorageOSVolumeSource 27p; "
        "csi @core:CSIVolumeSource 28p; ephemeral @core:EphemeralVolumeSource 29p; "
        "image @core:ImageVolumeSource 30p"),
    "VsphereVirtualDiskVolumeSource": "volumePath! s 1; fsType s 2; storagePolicyName s 3; storagePolicyID s 4",
    "WeightedPodAffinityTerm": "weight! i32 1; podAffinityTerm! @core:PodAffinityTerm 2",
    "WindowsSecurityContextOptions": (
        "gmsaCredentialSpecName s 1p; gmsaCredentialSpec s 2p; runAsUserName s 3p; hostProcess b 4p"),
}

PROTOBUF_ONLY: frozenset[str] = frozenset({
    "ProbeHandler", "VolumeSource",
})
