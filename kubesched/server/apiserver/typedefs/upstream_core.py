"""core/v1 types described field by field in the compact form :mod:`.compact` reads:
Service, ReplicationController, PersistentVolume(Claim), Event, and the parts of Pod and
Node the hand-written descriptions (:mod:`.pod`, :mod:`.kinds`) left open (status,
affinity, probes, volumes, security contexts ...).

Each entry is ``field[!] type`` separated by ``;`` (``!``: required). Field names, JSON
types, required fields and list semantics (``+listType``/``+listMapKey``) are facts of
``k8s.io/api`` v0.34 (Kubernetes 1.34).
"""

from __future__ import annotations

CORE_SPECS: dict[str, str] = {
    "core:Service": ("apiVersion s; kind s; metadata @meta:ObjectMeta; spec @core:ServiceSpec; "
                     "status @core:ServiceStatus"),
    "core:ReplicationController": ("apiVersion s; kind s; metadata @meta:ObjectMeta; "
                                   "spec @core:ReplicationControllerSpec; status @core:ReplicationControllerStatus"),
    "core:PersistentVolume": ("apiVersion s; kind s; metadata @meta:ObjectMeta; spec @core:PersistentVolumeSpec; "
                              "status @core:PersistentVolumeStatus"),
    "core:PersistentVolumeClaim": ("apiVersion s; kind s; metadata @meta:ObjectMeta; "
                                   "spec @core:PersistentVolumeClaimSpec; status @core:PersistentVolumeClaimStatus"),
    "core:Event": ("apiVersion s; kind s; metadata! @meta:ObjectMeta; involvedObject! @core:ObjectReference; "
                   "reason s; message s; source @core:EventSource; firstTimestamp t; lastTimestamp t; count i32; "
                   "type s; eventTime mt; series @core:EventSeries; action s; related @core:ObjectReference; "
                   "reportingComponent s; reportingInstance s"),
    "core:PodStatus": ("observedGeneration i64; phase s; conditions [map=type]@core:PodCondition; message s; "
                       "reason s; nominatedNodeName s; hostIP s; hostIPs [atomic]@core:HostIP; podIP s; "
                       "podIPs [map=ip]@core:PodIP; startTime t; "
                       "initContainerStatuses [atomic]@core:ContainerStatus; "
                       "containerStatuses [atomic]@core:ContainerStatus; qosClass s; "
                       "ephemeralContainerStatuses [atomic]@core:ContainerStatus; resize s; "
                       "resourceClaimStatuses [map=name]@core:PodResourceClaimStatus; "
                       "extendedResourceClaimStatus @core:PodExtendedResourceClaimStatus"),
    "core:NodeStatus": ("capacity {}q; allocatable {}q; phase s; conditions [map=type]@core:NodeCondition; "
                        "addresses [map=type]@core:NodeAddress; daemonEndpoints @core:NodeDaemonEndpoints; "
                        "nodeInfo @core:NodeSystemInfo; images [atomic]@core:ContainerImage; "
                        "volumesInUse [atomic]s; volumesAttached [atomic]@core:AttachedVolume; "
                        "config @core:NodeConfigStatus; runtimeHandlers [atomic]@core:NodeRuntimeHandler; "
                        "features @core:NodeFeatures"),
    "core:Affinity": ("nodeAffinity @core:NodeAffinity; podAffinity @core:PodAffinity; "
                      "podAntiAffinity @core:PodAntiAffinity"),
    "core:Probe": ("exec @core:ExecAction; httpGet @core:HTTPGetAction; tcpSocket @core:TCPSocketAction; "
                   "grpc @core:GRPCAction; initialDelaySeconds i32; timeoutSeconds i32; periodSeconds i32; "
                   "successThreshold i32; failureThreshold i32; terminationGracePeriodSeconds i64"),
    "core:Volume": ("name! s; hostPath @core:HostPathVolumeSource; emptyDir @core:EmptyDirVolumeSource; "
                    "gcePersistentDisk @core:GCEPersistentDiskVolumeSource; "
                    "awsElasticBlockStore @core:AWSElasticBlockStoreVolumeSource; "
                    "gitRepo @core:GitRepoVolumeSource; secret @core:SecretVolumeSource; nfs @core:NFSVolumeSource; "
                    "iscsi @core:ISCSIVolumeSource; glusterfs @core:GlusterfsVolumeSource; "
                    "persistentVolumeClaim @core:PersistentVolumeClaimVolumeSource; rbd @core:RBDVolumeSource; "
                    "flexVolume @core:FlexVolumeSource; cinder @core:CinderVolumeSource; "
                    "cephfs @core:CephFSVolumeSource; flocker @core:FlockerVolumeSource; "
                    "downwardAPI @core:DownwardAPIVolumeSource; fc @core:FCVolumeSource; "
                    "azureFile @core:AzureFileVolumeSource; configMap @core:ConfigMapVolumeSource; "
                    "vsphereVolume @core:VsphereVirtualDiskVolumeSource; quobyte @core:QuobyteVolumeSource; "
                    "azureDisk @core:AzureDiskVolumeSource; "
                    "photonPersistentDisk @core:PhotonPersistentDiskVolumeSource; "
                    "projected @core:ProjectedVolumeSource; portworxVolume @core:PortworxVolumeSource; "
                    "scaleIO @core:ScaleIOVolumeSource; storageos @core:StorageOSVolumeSource; "
                    "csi @core:CSIVolumeSource; ephemeral @core:EphemeralVolumeSource; "
                    "image @core:ImageVolumeSource"),
    "core:SecurityContext": ("capabilities @core:Capabilities; privileged b; seLinuxOptions @core:SELinuxOptions; "
                             "windowsOptions @core:WindowsSecurityContextOptions; runAsUser i64; runAsGroup i64; "
                             "runAsNonRoot b; readOnlyRootFilesystem b; allowPrivilegeEscalation b; procMount s; "
                             "seccompProfile @core:SeccompProfile; appArmorProfile @core:AppArmorProfile"),
    "core:PodSecurityContext": ("seLinuxOptions @core:SELinuxOptions; "
                                "windowsOptions @core:WindowsSecurityContextOptions; runAsUser i64; runAsGroup i64; "
                                "runAsNonRoot b; supplementalGroups [atomic]i64; supplementalGroupsPolicy s; "
                                "fsGroup i64; sysctls [atomic]@core:Sysctl; fsGroupChangePolicy s; "
                                "seccompProfile @core:SeccompProfile; appArmorProfile @core:AppArmorProfile; "
                                "seLinuxChangePolicy s"),
    "core:EnvVarSource": ("fieldRef @core:ObjectFieldSelector; resourceFieldRef @core:ResourceFieldSelector; "
                          "configMapKeyRef @core:ConfigMapKeySelector; secretKeyRef @core:SecretKeySelector; "
                          "fileKeyRef @core:FileKeySelector"),
    "core:EnvFromSource": "prefix s; configMapRef @core:ConfigMapEnvSource; secretRef @core:SecretEnvSource",
    "core:Lifecycle": "postStart @core:LifecycleHandler; preStop @core:LifecycleHandler; stopSignal s",
    "core:ContainerResizePolicy": "resourceName! s; restartPolicy! s",
    "core:ContainerRestartRule": "action! s; exitCodes @core:ContainerRestartRuleOnExitCodes",
    "core:EphemeralContainer": ("name! s; image s; command [atomic]s; args [atomic]s; workingDir s; "
                                "ports [map=containerPort,protocol]@core:ContainerPort; "
                                "envFrom [atomic]@core:EnvFromSource; env [map=name]@core:EnvVar; "
                                "resources @core:ResourceRequirements; "
                                "resizePolicy [atomic]@core:ContainerResizePolicy; restartPolicy s; "
                                "restartPolicyRules [atomic]@core:ContainerRestartRule; "
                                "volumeMounts [map=mountPath]@core:VolumeMount; "
                                "volumeDevices [map=devicePath]@core:VolumeDevice; livenessProbe @core:Probe; "
                                "readinessProbe @core:Probe; startupProbe @core:Probe; lifecycle @core:Lifecycle; "
                                "terminationMessagePath s; terminationMessagePolicy s; imagePullPolicy s; "
                                "securityContext @core:SecurityContext; stdin b; stdinOnce b; tty b; "
                                "targetContainerName s"),
    "core:HostAlias": "ip! s; hostnames [atomic]s",
    "core:PodDNSConfig": "nameservers [atomic]s; searches [atomic]s; options [atomic]@core:PodDNSConfigOption",
    "core:PodReadinessGate": "conditionType! s",
    "core:PodOS": "name! s",
    "core:PodSchedulingGate": "name! s",
    "core:PodResourceClaim": "name! s; resourceClaimName s; resourceClaimTemplateName s",
    "core:LocalObjectReference": "name s",
    "core:NamespaceSpec": "finalizers [atomic]s",
    "core:NamespaceStatus": "phase s; conditions [map=type]@core:NamespaceCondition",
    "core:ObjectReference": "kind s; namespace s; name s; uid s; apiVersion s; resourceVersion s; fieldPath s",
    "core:ServiceSpec": ("ports [map=port,protocol]@core:ServicePort; selector {}s; clusterIP s; "
                         "clusterIPs [atomic]s; type s; externalIPs [atomic]s; sessionAffinity s; loadBalancerIP s; "
                         "loadBalancerSourceRanges [atomic]s; externalName s; externalTrafficPolicy s; "
                         "healthCheckNodePort i32; publishNotReadyAddresses b; "
                         "sessionAffinityConfig @core:SessionAffinityConfig; ipFamilies [atomic]s; "
                         "ipFamilyPolicy s; allocateLoadBalancerNodePorts b; loadBalancerClass s; "
                         "internalTrafficPolicy s; trafficDistribution s"),
    "core:ServiceStatus": "loadBalancer @core:LoadBalancerStatus; conditions [map=type]@meta:Condition",
    "core:ReplicationControllerSpec": ("replicas i32; minReadySeconds i32; selector {}s; "
                                       "template @core:PodTemplateSpec"),
    "core:ReplicationControllerStatus": ("replicas! i32; fullyLabeledReplicas i32; readyReplicas i32; "
                                         "availableReplicas i32; observedGeneration i64; "
                                         "conditions [map=type]@core:ReplicationControllerCondition"),
    "core:PersistentVolumeSpec": ("capacity {}q; gcePersistentDisk @core:GCEPersistentDiskVolumeSource; "
                                  "awsElasticBlockStore @core:AWSElasticBlockStoreVolumeSource; "
                                  "hostPath @core:HostPathVolumeSource; "
                                  "glusterfs @core:GlusterfsPersistentVolumeSource; nfs @core:NFSVolumeSource; "
                                  "rbd @core:RBDPersistentVolumeSource; iscsi @core:ISCSIPersistentVolumeSource; "
                                  "cinder @core:CinderPersistentVolumeSource; "
                                  "cephfs @core:CephFSPersistentVolumeSource; fc @core:FCVolumeSource; "
                                  "flocker @core:FlockerVolumeSource; flexVolume @core:FlexPersistentVolumeSource; "
                                  "azureFile @core:AzureFilePersistentVolumeSource; "
                                  "vsphereVolume @core:VsphereVirtualDiskVolumeSource; "
                                  "quobyte @core:QuobyteVolumeSource; azureDisk @core:AzureDiskVolumeSource; "
                                  "photonPersistentDisk @core:PhotonPersistentDiskVolumeSource; "
                                  "portworxVolume @core:PortworxVolumeSource; "
                                  "scaleIO @core:ScaleIOPersistentVolumeSource; local @core:LocalVolumeSource; "
                                  "storageos @core:StorageOSPersistentVolumeSource; "
                                  "csi @core:CSIPersistentVolumeSource; accessModes [atomic]s; "
                                  "claimRef @core:ObjectReference; persistentVolumeReclaimPolicy s; "
                                  "storageClassName s; mountOptions [atomic]s; volumeMode s; "
                                  "nodeAffinity @core:VolumeNodeAffinity; volumeAttributesClassName s"),
    "core:PersistentVolumeStatus": "phase s; message s; reason s; lastPhaseTransitionTime t",
    "core:PersistentVolumeClaimSpec": ("accessModes [atomic]s; selector @meta:LabelSelector; "
                                       "resources @core:VolumeResourceRequirements; volumeName s; "
                                       "storageClassName s; volumeMode s; "
                                       "dataSource @core:TypedLocalObjectReference; "
                                       "dataSourceRef @core:TypedObjectReference; volumeAttributesClassName s"),
    "core:PersistentVolumeClaimStatus": ("phase s; accessModes [atomic]s; capacity {}q; "
                                         "conditions [map=type]@core:PersistentVolumeClaimCondition; "
                                         "allocatedResources {}q; allocatedResourceStatuses {}s; "
                                         "currentVolumeAttributesClassName s; "
                                         "modifyVolumeStatus @core:ModifyVolumeStatus"),
    "core:EventSource": "component s; host s",
    "core:EventSeries": "count i32; lastObservedTime mt",
    "core:TopologySelectorTerm": "matchLabelExpressions [atomic]@core:TopologySelectorLabelRequirement",
    "core:PodCondition": ("type! s; observedGeneration i64; status! s; lastProbeTime t; lastTransitionTime t; "
                          "reason s; message s"),
    "core:HostIP": "ip! s",
    "core:PodIP": "ip! s",
    "core:ContainerStatus": ("name! s; state @core:ContainerState; lastState @core:ContainerState; ready! b; "
                             "restartCount! i32; image! s; imageID! s; containerID s; started b; "
                             "allocatedResources {}q; resources @core:ResourceRequirements; "
                             "volumeMounts [map=mountPath]@core:VolumeMountStatus; user @core:ContainerUser; "
                             "allocatedResourcesStatus [map=name]@core:ResourceStatus; stopSignal s"),
    "core:PodResourceClaimStatus": "name! s; resourceClaimName s",
    "core:PodExtendedResourceClaimStatus": ("requestMappings! [atomic]@core:ContainerExtendedResourceRequest; "
                                            "resourceClaimName! s"),
    "core:NodeCondition": "type! s; status! s; lastHeartbeatTime t; lastTransitionTime t; reason s; message s",
    "core:NodeAddress": "type! s; address! s",
    "core:NodeDaemonEndpoints": "kubeletEndpoint @core:DaemonEndpoint",
    "core:NodeSystemInfo": ("machineID! s; systemUUID! s; bootID! s; kernelVersion! s; osImage! s; "
                            "containerRuntimeVersion! s; kubeletVersion! s; kubeProxyVersion! s; "
                            "operatingSystem! s; architecture! s; swap @core:NodeSwapStatus"),
    "core:ContainerImage": "names [atomic]s; sizeBytes i64",
    "core:AttachedVolume": "name! s; devicePath! s",
    "core:NodeConfigStatus": ("assigned @core:NodeConfigSource; active @core:NodeConfigSource; "
                              "lastKnownGood @core:NodeConfigSource; error s"),
    "core:NodeRuntimeHandler": "name s; features @core:NodeRuntimeHandlerFeatures",
    "core:NodeFeatures": "supplementalGroupsPolicy b",
    "core:NodeAffinity": ("requiredDuringSchedulingIgnoredDuringExecution @core:NodeSelector; "
                          "preferredDuringSchedulingIgnoredDuringExecution [atomic]@core:PreferredSchedulingTerm"),
    "core:PodAffinity": ("requiredDuringSchedulingIgnoredDuringExecution [atomic]@core:PodAffinityTerm; "
                         "preferredDuringSchedulingIgnoredDuringExecution [atomic]@core:WeightedPodAffinityTerm"),
    "core:PodAntiAffinity": ("requiredDuringSchedulingIgnoredDuringExecution [atomic]@core:PodAffinityTerm; "
                             "preferredDuringSchedulingIgnoredDuringExecution [atomic]@core:WeightedPodAffinityTerm"),
    "core:ExecAction": "command [atomic]s",
    "core:HTTPGetAction": "path s; port! x; host s; scheme s; httpHeaders [atomic]@core:HTTPHeader",
    "core:TCPSocketAction": "port! x; host s",
    "core:GRPCAction": "port! i32; service s",
    "core:HostPathVolumeSource": "path! s; type s",
    "core:EmptyDirVolumeSource": "medium s; sizeLimit q",
    "core:GCEPersistentDiskVolumeSource": "pdName! s; fsType s; partition i32; readOnly b",
    "core:AWSElasticBlockStoreVolumeSource": "volumeID! s; fsType s; partition i32; readOnly b",
    "core:GitRepoVolumeSource": "repository! s; revision s; directory s",
    "core:SecretVolumeSource": "secretName s; items [atomic]@core:KeyToPath; defaultMode i32; optional b",
    "core:NFSVolumeSource": "server! s; path! s; readOnly b",
    "core:ISCSIVolumeSource": ("targetPortal! s; iqn! s; lun! i32; iscsiInterface s; fsType s; readOnly b; "
                               "portals [atomic]s; chapAuthDiscovery b; chapAuthSession b; "
                               "secretRef @core:LocalObjectReference; initiatorName s"),
    "core:GlusterfsVolumeSource": "endpoints! s; path! s; readOnly b",
    "core:PersistentVolumeClaimVolumeSource": "claimName! s; readOnly b",
    "core:RBDVolumeSource": ("monitors! [atomic]s; image! s; fsType s; pool s; user s; keyring s; "
                             "secretRef @core:LocalObjectReference; readOnly b"),
    "core:FlexVolumeSource": "driver! s; fsType s; secretRef @core:LocalObjectReference; readOnly b; options {}s",
    "core:CinderVolumeSource": "volumeID! s; fsType s; readOnly b; secretRef @core:LocalObjectReference",
    "core:CephFSVolumeSource": ("monitors! [atomic]s; path s; user s; secretFile s; "
                                "secretRef @core:LocalObjectReference; readOnly b"),
    "core:FlockerVolumeSource": "datasetName s; datasetUUID s",
    "core:DownwardAPIVolumeSource": "items [atomic]@core:DownwardAPIVolumeFile; defaultMode i32",
    "core:FCVolumeSource": "targetWWNs [atomic]s; lun i32; fsType s; readOnly b; wwids [atomic]s",
    "core:AzureFileVolumeSource": "secretName! s; shareName! s; readOnly b",
    "core:ConfigMapVolumeSource": "name s; items [atomic]@core:KeyToPath; defaultMode i32; optional b",
    "core:VsphereVirtualDiskVolumeSource": "volumePath! s; fsType s; storagePolicyName s; storagePolicyID s",
    "core:QuobyteVolumeSource": "registry! s; volume! s; readOnly b; user s; group s; tenant s",
    "core:AzureDiskVolumeSource": "diskName! s; diskURI! s; cachingMode s; fsType s; readOnly b; kind s",
    "core:PhotonPersistentDiskVolumeSource": "pdID! s; fsType s",
    "core:ProjectedVolumeSource": "sources [atomic]@core:VolumeProjection; defaultMode i32",
    "core:PortworxVolumeSource": "volumeID! s; fsType s; readOnly b",
    "core:ScaleIOVolumeSource": ("gateway! s; system! s; secretRef @core:LocalObjectReference; sslEnabled b; "
                                 "protectionDomain s; storagePool s; storageMode s; volumeName s; fsType s; "
                                 "readOnly b"),
    "core:StorageOSVolumeSource": ("volumeName s; volumeNamespace s; fsType s; readOnly b; "
                                   "secretRef @core:LocalObjectReference"),
    "core:CSIVolumeSource": ("driver! s; readOnly b; fsType s; volumeAttributes {}s; "
                             "nodePublishSecretRef @core:LocalObjectReference"),
    "core:EphemeralVolumeSource": "volumeClaimTemplate @core:PersistentVolumeClaimTemplate",
    "core:ImageVolumeSource": "reference s; pullPolicy s",
    "core:Capabilities": "add [atomic]s; drop [atomic]s",
    "core:SELinuxOptions": "user s; role s; type s; level s",
    "core:WindowsSecurityContextOptions": ("gmsaCredentialSpecName s; gmsaCredentialSpec s; runAsUserName s; "
                                           "hostProcess b"),
    "core:SeccompProfile": "type! s; localhostProfile s",
    "core:AppArmorProfile": "type! s; localhostProfile s",
    "core:Sysctl": "name! s; value! s",
    "core:ObjectFieldSelector": "apiVersion s; fieldPath! s",
    "core:ResourceFieldSelector": "containerName s; resource! s; divisor q",
    "core:ConfigMapKeySelector": "name s; key! s; optional b",
    "core:SecretKeySelector": "name s; key! s; optional b",
    "core:FileKeySelector": "volumeName! s; path! s; key! s; optional b",
    "core:ConfigMapEnvSource": "name s; optional b",
    "core:SecretEnvSource": "name s; optional b",
    "core:LifecycleHandler": ("exec @core:ExecAction; httpGet @core:HTTPGetAction; tcpSocket @core:TCPSocketAction; "
                              "sleep @core:SleepAction"),
    "core:ContainerRestartRuleOnExitCodes": "operator! s; values [set]i32",
    "core:ContainerPort": "name s; hostPort i32; containerPort! i32; protocol s; hostIP s",
    "core:EnvVar": "name! s; value s; valueFrom @core:EnvVarSource",
    "core:VolumeMount": ("name! s; readOnly b; recursiveReadOnly s; mountPath! s; subPath s; mountPropagation s; "
                         "subPathExpr s"),
    "core:VolumeDevice": "name! s; devicePath! s",
    "core:PodDNSConfigOption": "name s; value s",
    "core:NamespaceCondition": "type! s; status! s; lastTransitionTime t; reason s; message s",
    "core:ServicePort": "name s; protocol s; appProtocol s; port! i32; targetPort x; nodePort i32",
    "core:SessionAffinityConfig": "clientIP @core:ClientIPConfig",
    "core:LoadBalancerStatus": "ingress [atomic]@core:LoadBalancerIngress",
    "core:ReplicationControllerCondition": "type! s; status! s; lastTransitionTime t; reason s; message s",
    "core:GlusterfsPersistentVolumeSource": "endpoints! s; path! s; readOnly b; endpointsNamespace s",
    "core:RBDPersistentVolumeSource": ("monitors! [atomic]s; image! s; fsType s; pool s; user s; keyring s; "
                                       "secretRef @core:SecretReference; readOnly b"),
    "core:ISCSIPersistentVolumeSource": ("targetPortal! s; iqn! s; lun! i32; iscsiInterface s; fsType s; "
                                         "readOnly b; portals [atomic]s; chapAuthDiscovery b; chapAuthSession b; "
                                         "secretRef @core:SecretReference; initiatorName s"),
    "core:CinderPersistentVolumeSource": "volumeID! s; fsType s; readOnly b; secretRef @core:SecretReference",
    "core:CephFSPersistentVolumeSource": ("monitors! [atomic]s; path s; user s; secretFile s; "
                                          "secretRef @core:SecretReference; readOnly b"),
    "core:FlexPersistentVolumeSource": ("driver! s; fsType s; secretRef @core:SecretReference; readOnly b; "
                                        "options {}s"),
    "core:AzureFilePersistentVolumeSource": "secretName! s; shareName! s; readOnly b; secretNamespace s",
    "core:ScaleIOPersistentVolumeSource": ("gateway! s; system! s; secretRef @core:SecretReference; sslEnabled b; "
                                           "protectionDomain s; storagePool s; storageMode s; volumeName s; "
                                           "fsType s; readOnly b"),
    "core:LocalVolumeSource": "path! s; fsType s",
    "core:StorageOSPersistentVolumeSource": ("volumeName s; volumeNamespace s; fsType s; readOnly b; "
                                             "secretRef @core:ObjectReference"),
    "core:CSIPersistentVolumeSource": ("driver! s; volumeHandle! s; readOnly b; fsType s; volumeAttributes {}s; "
                                       "controllerPublishSecretRef @core:SecretReference; "
                                       "nodeStageSecretRef @core:SecretReference; "
                                       "nodePublishSecretRef @core:SecretReference; "
                                       "controllerExpandSecretRef @core:SecretReference; "
                                       "nodeExpandSecretRef @core:SecretReference"),
    "core:VolumeNodeAffinity": "required @core:NodeSelector",
    "core:VolumeResourceRequirements": "limits {}q; requests {}q",
    "core:TypedLocalObjectReference": "apiGroup s; kind! s; name! s",
    "core:TypedObjectReference": "apiGroup s; kind! s; name! s; namespace s",
    "core:PersistentVolumeClaimCondition": ("type! s; status! s; lastProbeTime t; lastTransitionTime t; reason s; "
                                            "message s"),
    "core:ModifyVolumeStatus": "targetVolumeAttributesClassName s; status! s",
    "core:TopologySelectorLabelRequirement": "key! s; values! [atomic]s",
    "core:NodeSelector": "nodeSelectorTerms! [atomic]@core:NodeSelectorTerm",
    "core:ContainerState": ("waiting @core:ContainerStateWaiting; running @core:ContainerStateRunning; "
                            "terminated @core:ContainerStateTerminated"),
    "core:VolumeMountStatus": "name! s; mountPath! s; readOnly b; recursiveReadOnly s",
    "core:ContainerUser": "linux @core:LinuxContainerUser",
    "core:ResourceStatus": "name! s; resources [map=resourceID]@core:ResourceHealth",
    "core:ContainerExtendedResourceRequest": "containerName! s; resourceName! s; requestName! s",
    "core:DaemonEndpoint": "Port! i32",
    "core:NodeSwapStatus": "capacity i64",
    "core:NodeConfigSource": "configMap @core:ConfigMapNodeConfigSource",
    "core:NodeRuntimeHandlerFeatures": "recursiveReadOnlyMounts b; userNamespaces b",
    "core:PreferredSchedulingTerm": "weight! i32; preference! @core:NodeSelectorTerm",
    "core:PodAffinityTerm": ("labelSelector @meta:LabelSelector; namespaces [atomic]s; topologyKey! s; "
                             "namespaceSelector @meta:LabelSelector; matchLabelKeys [atomic]s; "
                             "mismatchLabelKeys [atomic]s"),
    "core:WeightedPodAffinityTerm": "weight! i32; podAffinityTerm! @core:PodAffinityTerm",
    "core:HTTPHeader": "name! s; value! s",
    "core:KeyToPath": "key! s; path! s; mode i32",
    "core:DownwardAPIVolumeFile": ("path! s; fieldRef @core:ObjectFieldSelector; "
                                   "resourceFieldRef @core:ResourceFieldSelector; mode i32"),
    "core:VolumeProjection": ("secret @core:SecretProjection; downwardAPI @core:DownwardAPIProjection; "
                              "configMap @core:ConfigMapProjection; "
                              "serviceAccountToken @core:ServiceAccountTokenProjection; "
                              "clusterTrustBundle @core:ClusterTrustBundleProjection; "
                              "podCertificate @core:PodCertificateProjection"),
    "core:PersistentVolumeClaimTemplate": "metadata @meta:ObjectMeta; spec! @core:PersistentVolumeClaimSpec",
    "core:SleepAction": "seconds! i64",
    "core:ClientIPConfig": "timeoutSeconds i32",
    "core:LoadBalancerIngress": "ip s; hostname s; ipMode s; ports [atomic]@core:PortStatus",
    "core:SecretReference": "name s; namespace s",
    "core:NodeSelectorTerm": ("matchExpressions [atomic]@core:NodeSelectorRequirement; "
                              "matchFields [atomic]@core:NodeSelectorRequirement"),
    "core:ContainerStateWaiting": "reason s; message s",
    "core:ContainerStateRunning": "startedAt t",
    "core:ContainerStateTerminated": ("exitCode! i32; signal i32; reason s; message s; startedAt t; finishedAt t; "
                                      "containerID s"),
    "core:LinuxContainerUser": "uid! i64; gid! i64; supplementalGroups [atomic]i64",
    "core:ResourceHealth": "resourceID! s; health s",
    "core:ConfigMapNodeConfigSource": "namespace! s; name! s; uid s; resourceVersion s; kubeletConfigKey! s",
    "core:SecretProjection": "name s; items [atomic]@core:KeyToPath; optional b",
    "core:DownwardAPIProjection": "items [atomic]@core:DownwardAPIVolumeFile",
    "core:ConfigMapProjection": "name s; items [atomic]@core:KeyToPath; optional b",
    "core:ServiceAccountTokenProjection": "audience s; expirationSeconds i64; path! s",
    "core:ClusterTrustBundleProjection": ("name s; signerName s; labelSelector @meta:LabelSelector; optional b; "
                                          "path! s"),
    "core:PodCertificateProjection": ("signerName! s; keyType! s; maxExpirationSeconds i32; credentialBundlePath s; "
                                      "keyPath s; certificateChainPath s"),
    "core:PortStatus": "port! i32; protocol! s; error s",
    "core:NodeSelectorRequirement": "key! s; operator! s; values [atomic]s",
    "meta:Condition": "type! s; status! s; observedGeneration i64; lastTransitionTime! t; reason! s; message! s",

}
