"""The protobuf field table of core/v1 Pod and Node, everything they contain, and the
meta/v1 messages of lists, watch events and errors.

client-go's typed clients (kubectl describe/drain, the scheduler, kubelet-like agents) ask
for ``application/vnd.kubernetes.protobuf`` first; :mod:`.protobuf_encode` answers with it
only when every field of the object is in the table, so Pods and Nodes (whose status, probes,
volumes and affinity the older, hand-written table left out) need the whole closure. Field
numbers, Go pointer-ness (``p``: zero values are kept) and embedded structs (``n``: their
JSON members sit in the parent object, as ``Volume``'s ``VolumeSource``) are facts of
``k8s.io/api/core/v1`` at v0.34 (Kubernetes 1.34); they never change between releases.

Each entry reads ``number jsonName type [flags]``, separated by ``;``. Types as in
:mod:`.protobuf`: ``s`` string, ``i`` integer, ``b`` bool, ``y`` bytes, ``t`` Time,
``mt`` MicroTime, ``q`` Quantity, ``x`` IntOrString, ``ms``/``mq``/``my`` maps, ``m:Name``
a message; flags ``r`` repeated, ``p`` pointer, ``n`` embedded.
"""

from __future__ import annotations

_META = {
    "ListMeta": "1 selfLink s; 2 resourceVersion s; 3 continue s; 4 remainingItemCount i p",
    "Status": "1 metadata m:ListMeta; 2 status s; 3 message s; 4 reason s; 5 details m:StatusDetails p; 6 code i",
    "StatusDetails": ("1 name s; 2 group s; 3 kind s; 4 causes m:StatusCause r; 5 retryAfterSeconds i; "
                      "6 uid s"),
    "StatusCause": "1 reason s; 2 message s; 3 field s",
}

_CORE = {
    "AWSElasticBlockStoreVolumeSource": "1 volumeID s; 2 fsType s; 3 partition i; 4 readOnly b",
    "Affinity": ("1 nodeAffinity m:NodeAffinity p; 2 podAffinity m:PodAffinity p; "
                 "3 podAntiAffinity m:PodAntiAffinity p"),
    "AppArmorProfile": "1 type s; 2 localhostProfile s p",
    "AttachedVolume": "1 name s; 2 devicePath s",
    "AzureDiskVolumeSource": ("1 diskName s; 2 diskURI s; 3 cachingMode s p; 4 fsType s p; 5 readOnly b p; "
                              "6 kind s p"),
    "AzureFileVolumeSource": "1 secretName s; 2 shareName s; 3 readOnly b",
    "CSIVolumeSource": ("1 driver s; 2 readOnly b p; 3 fsType s p; 4 volumeAttributes ms; "
                        "5 nodePublishSecretRef m:LocalObjectReference p"),
    "Capabilities": "1 add s r; 2 drop s r",
    "CephFSVolumeSource": ("1 monitors s r; 2 path s; 3 user s; 4 secretFile s; "
                           "5 secretRef m:LocalObjectReference p; 6 readOnly b"),
    "CinderVolumeSource": "1 volumeID s; 2 fsType s; 3 readOnly b; 4 secretRef m:LocalObjectReference p",
    "ClusterTrustBundleProjection": ("1 name s p; 2 signerName s p; 3 labelSelector m:LabelSelector p; 4 path s; "
                                     "5 optional b p"),
    "ConfigMapEnvSource": "1 LocalObjectReference m:LocalObjectReference n; 2 optional b p",
    "ConfigMapKeySelector": "1 LocalObjectReference m:LocalObjectReference n; 2 key s; 3 optional b p",
    "ConfigMapNodeConfigSource": "1 namespace s; 2 name s; 3 uid s; 4 resourceVersion s; 5 kubeletConfigKey s",
    "ConfigMapProjection": ("1 LocalObjectReference m:LocalObjectReference n; 2 items m:KeyToPath r; "
                            "4 optional b p"),
    "ConfigMapVolumeSource": ("1 LocalObjectReference m:LocalObjectReference n; 2 items m:KeyToPath r; "
                              "3 defaultMode i p; 4 optional b p"),
    "Container": ("1 name s; 2 image s; 3 command s r; 4 args s r; 5 workingDir s; 6 ports m:ContainerPort r; "
                  "7 env m:EnvVar r; 8 resources m:ResourceRequirements; 9 volumeMounts m:VolumeMount r; "
                  "10 livenessProbe m:Probe p; 11 readinessProbe m:Probe p; 12 lifecycle m:Lifecycle p; "
                  "13 terminationMessagePath s; 14 imagePullPolicy s; 15 securityContext m:SecurityContext p; "
                  "16 stdin b; 17 stdinOnce b; 18 tty b; 19 envFrom m:EnvFromSource r; "
                  "20 terminationMessagePolicy s; 21 volumeDevices m:VolumeDevice r; 22 startupProbe m:Probe p; "
                  "23 resizePolicy m:ContainerResizePolicy r; 24 restartPolicy s p; "
                  "25 restartPolicyRules m:ContainerRestartRule r"),
    "ContainerExtendedResourceRequest": "1 containerName s; 2 resourceName s; 3 requestName s",
    "ContainerImage": "1 names s r; 2 sizeBytes i",
    "ContainerPort": "1 name s; 2 hostPort i; 3 containerPort i; 4 protocol s; 5 hostIP s",
    "ContainerResizePolicy": "1 resourceName s; 2 restartPolicy s",
    "ContainerRestartRule": "1 action s; 2 exitCodes m:ContainerRestartRuleOnExitCodes p",
    "ContainerRestartRuleOnExitCodes": "1 operator s; 2 values i r",
    "ContainerState": ("1 waiting m:ContainerStateWaiting p; 2 running m:ContainerStateRunning p; "
                       "3 terminated m:ContainerStateTerminated p"),
    "ContainerStateRunning": "1 startedAt t",
    "ContainerStateTerminated": ("1 exitCode i; 2 signal i; 3 reason s; 4 message s; 5 startedAt t; "
                                 "6 finishedAt t; 7 containerID s"),
    "ContainerStateWaiting": "1 reason s; 2 message s",
    "ContainerStatus": ("1 name s; 2 state m:ContainerState; 3 lastState m:ContainerState; 4 ready b; "
                        "5 restartCount i; 6 image s; 7 imageID s; 8 containerID s; 9 started b p; "
                        "10 allocatedResources mq; 11 resources m:ResourceRequirements p; "
                        "12 volumeMounts m:VolumeMountStatus r; 13 user m:ContainerUser p; "
                        "14 allocatedResourcesStatus m:ResourceStatus r; 15 stopSignal s p"),
    "ContainerUser": "1 linux m:LinuxContainerUser p",
    "DaemonEndpoint": "1 Port i",
    "DownwardAPIProjection": "1 items m:DownwardAPIVolumeFile r",
    "DownwardAPIVolumeFile": ("1 path s; 2 fieldRef m:ObjectFieldSelector p; "
                              "3 resourceFieldRef m:ResourceFieldSelector p; 4 mode i p"),
    "DownwardAPIVolumeSource": "1 items m:DownwardAPIVolumeFile r; 2 defaultMode i p",
    "EmptyDirVolumeSource": "1 medium s; 2 sizeLimit q p",
    "EnvFromSource": "1 prefix s; 2 configMapRef m:ConfigMapEnvSource p; 3 secretRef m:SecretEnvSource p",
    "EnvVar": "1 name s; 2 value s; 3 valueFrom m:EnvVarSource p",
    "EnvVarSource": ("1 fieldRef m:ObjectFieldSelector p; 2 resourceFieldRef m:ResourceFieldSelector p; "
                     "3 configMapKeyRef m:ConfigMapKeySelector p; 4 secretKeyRef m:SecretKeySelector p; "
                     "5 fileKeyRef m:FileKeySelector p"),
    "EphemeralContainer": "1 EphemeralContainerCommon m:EphemeralContainerCommon n; 2 targetContainerName s",
    "EphemeralContainerCommon": ("1 name s; 2 image s; 3 command s r; 4 args s r; 5 workingDir s; "
                                 "6 ports m:ContainerPort r; 7 env m:EnvVar r; "
                                 "8 resources m:ResourceRequirements; 9 volumeMounts m:VolumeMount r; "
                                 "10 livenessProbe m:Probe p; 11 readinessProbe m:Probe p; "
                                 "12 lifecycle m:Lifecycle p; 13 terminationMessagePath s; 14 imagePullPolicy s; "
                                 "15 securityContext m:SecurityContext p; 16 stdin b; 17 stdinOnce b; 18 tty b; "
                                 "19 envFrom m:EnvFromSource r; 20 terminationMessagePolicy s; "
                                 "21 volumeDevices m:VolumeDevice r; 22 startupProbe m:Probe p; "
                                 "23 resizePolicy m:ContainerResizePolicy r; 24 restartPolicy s p; "
                                 "25 restartPolicyRules m:ContainerRestartRule r"),
    "EphemeralVolumeSource": "1 volumeClaimTemplate m:PersistentVolumeClaimTemplate p",
    "ExecAction": "1 command s r",
    "FCVolumeSource": "1 targetWWNs s r; 2 lun i p; 3 fsType s; 4 readOnly b; 5 wwids s r",
    "FileKeySelector": "1 volumeName s; 2 path s; 3 key s; 4 optional b p",
    "FlexVolumeSource": ("1 driver s; 2 fsType s; 3 secretRef m:LocalObjectReference p; 4 readOnly b; "
                         "5 options ms"),
    "FlockerVolumeSource": "1 datasetName s; 2 datasetUUID s",
    "GCEPersistentDiskVolumeSource": "1 pdName s; 2 fsType s; 3 partition i; 4 readOnly b",
    "GRPCAction": "1 port i; 2 service s p",
    "GitRepoVolumeSource": "1 repository s; 2 revision s; 3 directory s",
    "GlusterfsVolumeSource": "1 endpoints s; 2 path s; 3 readOnly b",
    "HTTPGetAction": "1 path s; 2 port x; 3 host s; 4 scheme s; 5 httpHeaders m:HTTPHeader r",
    "HTTPHeader": "1 name s; 2 value s",
    "HostAlias": "1 ip s; 2 hostnames s r",
    "HostIP": "1 ip s",
    "HostPathVolumeSource": "1 path s; 2 type s p",
    "ISCSIVolumeSource": ("1 targetPortal s; 2 iqn s; 3 lun i; 4 iscsiInterface s; 5 fsType s; 6 readOnly b; "
                          "7 portals s r; 8 chapAuthDiscovery b; 10 secretRef m:LocalObjectReference p; "
                          "11 chapAuthSession b; 12 initiatorName s p"),
    "ImageVolumeSource": "1 reference s; 2 pullPolicy s",
    "KeyToPath": "1 key s; 2 path s; 3 mode i p",
    "Lifecycle": "1 postStart m:LifecycleHandler p; 2 preStop m:LifecycleHandler p; 3 stopSignal s p",
    "LifecycleHandler": ("1 exec m:ExecAction p; 2 httpGet m:HTTPGetAction p; 3 tcpSocket m:TCPSocketAction p; "
                         "4 sleep m:SleepAction p"),
    "LinuxContainerUser": "1 uid i; 2 gid i; 3 supplementalGroups i r",
    "LocalObjectReference": "1 name s",
    "NFSVolumeSource": "1 server s; 2 path s; 3 readOnly b",
    "Node": "1 metadata m:ObjectMeta; 2 spec m:NodeSpec; 3 status m:NodeStatus",
    "NodeAddress": "1 type s; 2 address s",
    "NodeAffinity": ("1 requiredDuringSchedulingIgnoredDuringExecution m:NodeSelector p; "
                     "2 preferredDuringSchedulingIgnoredDuringExecution m:PreferredSchedulingTerm r"),
    "NodeCondition": ("1 type s; 2 status s; 3 lastHeartbeatTime t; 4 lastTransitionTime t; 5 reason s; "
                      "6 message s"),
    "NodeConfigSource": "2 configMap m:ConfigMapNodeConfigSource p",
    "NodeConfigStatus": ("1 assigned m:NodeConfigSource p; 2 active m:NodeConfigSource p; "
                         "3 lastKnownGood m:NodeConfigSource p; 4 error s"),
    "NodeDaemonEndpoints": "1 kubeletEndpoint m:DaemonEndpoint",
    "NodeFeatures": "1 supplementalGroupsPolicy b p",
    "NodeRuntimeHandler": "1 name s; 2 features m:NodeRuntimeHandlerFeatures p",
    "NodeRuntimeHandlerFeatures": "1 recursiveReadOnlyMounts b p; 2 userNamespaces b p",
    "NodeSelector": "1 nodeSelectorTerms m:NodeSelectorTerm r",
    "NodeSelectorRequirement": "1 key s; 2 operator s; 3 values s r",
    "NodeSelectorTerm": ("1 matchExpressions m:NodeSelectorRequirement r; "
                         "2 matchFields m:NodeSelectorRequirement r"),
    "NodeSpec": ("1 podCIDR s; 2 externalID s; 3 providerID s; 4 unschedulable b; 5 taints m:Taint r; "
                 "6 configSource m:NodeConfigSource p; 7 podCIDRs s r"),
    "NodeStatus": ("1 capacity mq; 2 allocatable mq; 3 phase s; 4 conditions m:NodeCondition r; "
                   "5 addresses m:NodeAddress r; 6 daemonEndpoints m:NodeDaemonEndpoints; "
                   "7 nodeInfo m:NodeSystemInfo; 8 images m:ContainerImage r; 9 volumesInUse s r; "
                   "10 volumesAttached m:AttachedVolume r; 11 config m:NodeConfigStatus p; "
                   "12 runtimeHandlers m:NodeRuntimeHandler r; 13 features m:NodeFeatures p"),
    "NodeSwapStatus": "1 capacity i p",
    "NodeSystemInfo": ("1 machineID s; 2 systemUUID s; 3 bootID s; 4 kernelVersion s; 5 osImage s; "
                       "6 containerRuntimeVersion s; 7 kubeletVersion s; 8 kubeProxyVersion s; "
                       "9 operatingSystem s; 10 architecture s; 11 swap m:NodeSwapStatus p"),
    "ObjectFieldSelector": "1 apiVersion s; 2 fieldPath s",
    "PersistentVolumeClaimSpec": ("1 accessModes s r; 2 resources m:VolumeResourceRequirements; 3 volumeName s; "
                                  "4 selector m:LabelSelector p; 5 storageClassName s p; 6 volumeMode s p; "
                                  "7 dataSource m:TypedLocalObjectReference p; "
                                  "8 dataSourceRef m:TypedObjectReference p; 9 volumeAttributesClassName s p"),
    "PersistentVolumeClaimTemplate": "1 metadata m:ObjectMeta; 2 spec m:PersistentVolumeClaimSpec",
    "PersistentVolumeClaimVolumeSource": "1 claimName s; 2 readOnly b",
    "PhotonPersistentDiskVolumeSource": "1 pdID s; 2 fsType s",
    "Pod": "1 metadata m:ObjectMeta; 2 spec m:PodSpec; 3 status m:PodStatus",
    "PodAffinity": ("1 requiredDuringSchedulingIgnoredDuringExecution m:PodAffinityTerm r; "
                    "2 preferredDuringSchedulingIgnoredDuringExecution m:WeightedPodAffinityTerm r"),
    "PodAffinityTerm": ("1 labelSelector m:LabelSelector p; 2 namespaces s r; 3 topologyKey s; "
                        "4 namespaceSelector m:LabelSelector p; 5 matchLabelKeys s r; 6 mismatchLabelKeys s r"),
    "PodAntiAffinity": ("1 requiredDuringSchedulingIgnoredDuringExecution m:PodAffinityTerm r; "
                        "2 preferredDuringSchedulingIgnoredDuringExecution m:WeightedPodAffinityTerm r"),
    "PodCertificateProjection": ("1 signerName s; 2 keyType s; 3 maxExpirationSeconds i p; "
                                 "4 credentialBundlePath s; 5 keyPath s; 6 certificateChainPath s"),
    "PodCondition": ("1 type s; 2 status s; 3 lastProbeTime t; 4 lastTransitionTime t; 5 reason s; 6 message s; "
                     "7 observedGeneration i"),
    "PodDNSConfig": "1 nameservers s r; 2 searches s r; 3 options m:PodDNSConfigOption r",
    "PodDNSConfigOption": "1 name s; 2 value s p",
    "PodExtendedResourceClaimStatus": ("1 requestMappings m:ContainerExtendedResourceRequest r; "
                                       "2 resourceClaimName s"),
    "PodIP": "1 ip s",
    "PodOS": "1 name s",
    "PodReadinessGate": "1 conditionType s",
    "PodResourceClaim": "1 name s; 3 resourceClaimName s p; 4 resourceClaimTemplateName s p",
    "PodResourceClaimStatus": "1 name s; 2 resourceClaimName s p",
    "PodSchedulingGate": "1 name s",
    "PodSecurityContext": ("1 seLinuxOptions m:SELinuxOptions p; 2 runAsUser i p; 3 runAsNonRoot b p; "
                           "4 supplementalGroups i r; 5 fsGroup i p; 6 runAsGroup i p; 7 sysctls m:Sysctl r; "
                           "8 windowsOptions m:WindowsSecurityContextOptions p; 9 fsGroupChangePolicy s p; "
                           "10 seccompProfile m:SeccompProfile p; 11 appArmorProfile m:AppArmorProfile p; "
                           "12 supplementalGroupsPolicy s p; 13 seLinuxChangePolicy s p"),
    "PodSpec": ("1 volumes m:Volume r; 2 containers m:Container r; 3 restartPolicy s; "
                "4 terminationGracePeriodSeconds i p; 5 activeDeadlineSeconds i p; 6 dnsPolicy s; "
                "7 nodeSelector ms; 8 serviceAccountName s; 9 serviceAccount s; 10 nodeName s; 11 hostNetwork b; "
                "12 hostPID b; 13 hostIPC b; 14 securityContext m:PodSecurityContext p; "
                "15 imagePullSecrets m:LocalObjectReference r; 16 hostname s; 17 subdomain s; "
                "18 affinity m:Affinity p; 19 schedulerName s; 20 initContainers m:Container r; "
                "21 automountServiceAccountToken b p; 22 tolerations m:Toleration r; "
                "23 hostAliases m:HostAlias r; 24 priorityClassName s; 25 priority i p; "
                "26 dnsConfig m:PodDNSConfig p; 27 shareProcessNamespace b p; "
                "28 readinessGates m:PodReadinessGate r; 29 runtimeClassName s p; 30 enableServiceLinks b p; "
                "31 preemptionPolicy s p; 32 overhead mq; "
                "33 topologySpreadConstraints m:TopologySpreadConstraint r; "
                "34 ephemeralContainers m:EphemeralContainer r; 35 setHostnameAsFQDN b p; 36 os m:PodOS p; "
                "37 hostUsers b p; 38 schedulingGates m:PodSchedulingGate r; "
                "39 resourceClaims m:PodResourceClaim r; 40 resources m:ResourceRequirements p; "
                "41 hostnameOverride s p"),
    "PodStatus": ("1 phase s; 2 conditions m:PodCondition r; 3 message s; 4 reason s; 5 hostIP s; 6 podIP s; "
                  "7 startTime t p; 8 containerStatuses m:ContainerStatus r; 9 qosClass s; "
                  "10 initContainerStatuses m:ContainerStatus r; 11 nominatedNodeName s; 12 podIPs m:PodIP r; "
                  "13 ephemeralContainerStatuses m:ContainerStatus r; 14 resize s; "
                  "15 resourceClaimStatuses m:PodResourceClaimStatus r; 16 hostIPs m:HostIP r; "
                  "17 observedGeneration i; 18 extendedResourceClaimStatus m:PodExtendedResourceClaimStatus p"),
    "PortworxVolumeSource": "1 volumeID s; 2 fsType s; 3 readOnly b",
    "PreferredSchedulingTerm": "1 weight i; 2 preference m:NodeSelectorTerm",
    "Probe": ("1 ProbeHandler m:ProbeHandler n; 2 initialDelaySeconds i; 3 timeoutSeconds i; 4 periodSeconds i; "
              "5 successThreshold i; 6 failureThreshold i; 7 terminationGracePeriodSeconds i p"),
    "ProbeHandler": ("1 exec m:ExecAction p; 2 httpGet m:HTTPGetAction p; 3 tcpSocket m:TCPSocketAction p; "
                     "4 grpc m:GRPCAction p"),
    "ProjectedVolumeSource": "1 sources m:VolumeProjection r; 2 defaultMode i p",
    "QuobyteVolumeSource": "1 registry s; 2 volume s; 3 readOnly b; 4 user s; 5 group s; 6 tenant s",
    "RBDVolumeSource": ("1 monitors s r; 2 image s; 3 fsType s; 4 pool s; 5 user s; 6 keyring s; "
                        "7 secretRef m:LocalObjectReference p; 8 readOnly b"),
    "ResourceClaim": "1 name s; 2 request s",
    "ResourceFieldSelector": "1 containerName s; 2 resource s; 3 divisor q",
    "ResourceHealth": "1 resourceID s; 2 health s",
    "ResourceRequirements": "1 limits mq; 2 requests mq; 3 claims m:ResourceClaim r",
    "ResourceStatus": "1 name s; 2 resources m:ResourceHealth r",
    "SELinuxOptions": "1 user s; 2 role s; 3 type s; 4 level s",
    "ScaleIOVolumeSource": ("1 gateway s; 2 system s; 3 secretRef m:LocalObjectReference p; 4 sslEnabled b; "
                            "5 protectionDomain s; 6 storagePool s; 7 storageMode s; 8 volumeName s; 9 fsType s; "
                            "10 readOnly b"),
    "SeccompProfile": "1 type s; 2 localhostProfile s p",
    "SecretEnvSource": "1 LocalObjectReference m:LocalObjectReference n; 2 optional b p",
    "SecretKeySelector": "1 LocalObjectReference m:LocalObjectReference n; 2 key s; 3 optional b p",
    "SecretProjection": "1 LocalObjectReference m:LocalObjectReference n; 2 items m:KeyToPath r; 4 optional b p",
    "SecretVolumeSource": "1 secretName s; 2 items m:KeyToPath r; 3 defaultMode i p; 4 optional b p",
    "SecurityContext": ("1 capabilities m:Capabilities p; 2 privileged b p; 3 seLinuxOptions m:SELinuxOptions p; "
                        "4 runAsUser i p; 5 runAsNonRoot b p; 6 readOnlyRootFilesystem b p; "
                        "7 allowPrivilegeEscalation b p; 8 runAsGroup i p; 9 procMount s p; "
                        "10 windowsOptions m:WindowsSecurityContextOptions p; "
                        "11 seccompProfile m:SeccompProfile p; 12 appArmorProfile m:AppArmorProfile p"),
    "ServiceAccountTokenProjection": "1 audience s; 2 expirationSeconds i p; 3 path s",
    "SleepAction": "1 seconds i",
    "StorageOSVolumeSource": ("1 volumeName s; 2 volumeNamespace s; 3 fsType s; 4 readOnly b; "
                              "5 secretRef m:LocalObjectReference p"),
    "Sysctl": "1 name s; 2 value s",
    "TCPSocketAction": "1 port x; 2 host s",
    "Taint": "1 key s; 2 value s; 3 effect s; 4 timeAdded t p",
    "Toleration": "1 key s; 2 operator s; 3 value s; 4 effect s; 5 tolerationSeconds i p",
    "TopologySpreadConstraint": ("1 maxSkew i; 2 topologyKey s; 3 whenUnsatisfiable s; "
                                 "4 labelSelector m:LabelSelector p; 5 minDomains i p; 6 nodeAffinityPolicy s p; "
                                 "7 nodeTaintsPolicy s p; 8 matchLabelKeys s r"),
    "TypedLocalObjectReference": "1 apiGroup s p; 2 kind s; 3 name s",
    "TypedObjectReference": "1 apiGroup s p; 2 kind s; 3 name s; 4 namespace s p",
    "Volume": "1 name s; 2 VolumeSource m:VolumeSource n",
    "VolumeDevice": "1 name s; 2 devicePath s",
    "VolumeMount": ("1 name s; 2 readOnly b; 3 mountPath s; 4 subPath s; 5 mountPropagation s p; 6 subPathExpr s; "
                    "7 recursiveReadOnly s p"),
    "VolumeMountStatus": "1 name s; 2 mountPath s; 3 readOnly b; 4 recursiveReadOnly s p",
    "VolumeProjection": ("1 secret m:SecretProjection p; 2 downwardAPI m:DownwardAPIProjection p; "
                         "3 configMap m:ConfigMapProjection p; "
                         "4 serviceAccountToken m:ServiceAccountTokenProjection p; "
                         "5 clusterTrustBundle m:ClusterTrustBundleProjection p; "
                         "6 podCertificate m:PodCertificateProjection p"),
    "VolumeResourceRequirements": "1 limits mq; 2 requests mq",
    "VolumeSource": ("1 hostPath m:HostPathVolumeSource p; 2 emptyDir m:EmptyDirVolumeSource p; "
                     "3 gcePersistentDisk m:GCEPersistentDiskVolumeSource p; "
                     "4 awsElasticBlockStore m:AWSElasticBlockStoreVolumeSource p; "
                     "5 gitRepo m:GitRepoVolumeSource p; 6 secret m:SecretVolumeSource p; "
                     "7 nfs m:NFSVolumeSource p; 8 iscsi m:ISCSIVolumeSource p; "
                     "9 glusterfs m:GlusterfsVolumeSource p; "
                     "10 persistentVolumeClaim m:PersistentVolumeClaimVolumeSource p; 11 rbd m:RBDVolumeSource p; "
                     "12 flexVolume m:FlexVolumeSource p; 13 cinder m:CinderVolumeSource p; "
                     "14 cephfs m:CephFSVolumeSource p; 15 flocker m:FlockerVolumeSource p; "
                     "16 downwardAPI m:DownwardAPIVolumeSource p; 17 fc m:FCVolumeSource p; "
                     "18 azureFile m:AzureFileVolumeSource p; 19 configMap m:ConfigMapVolumeSource p; "
                     "20 vsphereVolume m:VsphereVirtualDiskVolumeSource p; 21 quobyte m:QuobyteVolumeSource p; "
                     "22 azureDisk m:AzureDiskVolumeSource p; "
                     "23 photonPersistentDisk m:PhotonPersistentDiskVolumeSource p; "
                     "24 portworxVolume m:PortworxVolumeSource p; 25 scaleIO m:ScaleIOVolumeSource p; "
                     "26 projected m:ProjectedVolumeSource p; 27 storageos m:StorageOSVolumeSource p; "
                     "28 csi m:CSIVolumeSource p; 29 ephemeral m:EphemeralVolumeSource p; "
                     "30 image m:ImageVolumeSource p"),
    "VsphereVirtualDiskVolumeSource": "1 volumePath s; 2 fsType s; 3 storagePolicyName s; 4 storagePolicyID s",
    "WeightedPodAffinityTerm": "1 weight i; 2 podAffinityTerm m:PodAffinityTerm",
    "WindowsSecurityContextOptions": ("1 gmsaCredentialSpecName s p; 2 gmsaCredentialSpec s p; "
                                      "3 runAsUserName s p; 4 hostProcess b p"),
}


def _parse(text: dict[str, str]) -> dict[str, dict[int, tuple[str, str, str]]]:
    out: dict[str, dict[int, tuple[str, str, str]]] = {}
    for message, spec in text.items():
        table: dict[int, tuple[str, str, str]] = {}
        for entry in spec.split(";"):
            num, key, typ, *flags = entry.split()
            table[int(num)] = (key, typ, flags[0] if flags else "")
        out[message] = table
    return out


CORE_V1 = _parse({**_META, **_CORE})
