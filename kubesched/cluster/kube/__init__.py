"""The client side of a Kubernetes API server (a real cluster's, or ``kubesched serve``'s).

    client.py     KubeClient: configuration and auth via the official ``kubernetes`` library
                  (kubeconfig, exec plugins, client certificates, in-cluster), JSON requests,
                  watch streams, rate limiting (ratelimit.py), retries; errors.py
    resources.py  the resources the scheduler reads, and how each object is decoded
    informer.py   Informer: list, then watch (resume, bookmarks, re-list on 410), local store
    objects.py    KubeObjects: ClusterObjects over informer stores
    sink.py       KubeSink: ClusterSink (binding, status patches, preemption)
    events.py     EventRecorder: events.k8s.io/v1 Events, as upstream records them
"""

from kubesched.cluster.kube.client import KubeClient, call_with_retries
from kubesched.cluster.kube.errors import ApiStatusError, KubeClientError, TransportError
from kubesched.cluster.kube.events import EventRecorder
from kubesched.cluster.kube.informer import Informer
from kubesched.cluster.kube.objects import KubeObjects
from kubesched.cluster.kube.sink import KubeSink

__all__ = ["ApiStatusError", "EventRecorder", "Informer", "KubeClient", "KubeClientError", "KubeObjects",
           "KubeSink", "TransportError", "call_with_retries"]
