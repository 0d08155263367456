"""Controllers that run inside ``kubesched serve``, as kube-controller-manager runs them.

Map of the package::

    manager.py          ControllerManager: the Component that runs the controllers below
    deployment.py       Deployment controller (ReplicaSets per template, rollouts)
    rollout.py          rollout arithmetic, status and conditions (pure)
    replicaset.py       ReplicaSet controller (pods per ReplicaSet, replacement, status)
    garbagecollector.py ownerReferences: background, foreground and orphan deletion
    disruption.py       PodDisruptionBudget status (what eviction and drain read)
    daemonset.py        DaemonSet controller (a pod per eligible node, rolling update)
    daemonutil.py       daemon pod tolerations, node pinning, should-run (pure)
    cronjob.py          CronJob controller (Jobs on a cron schedule)
    podgroup.py         PodGroup status (scheduler-plugins' phases and counts)
    serviceaccounts.py  the ``default`` ServiceAccount of every namespace
    storage.py          the storage controllers below and their informers
    persistentvolume.py PV controller (binding claims and volumes, release, reclaim)
    provisioner.py      simulated CSI external provisioner (topology-aware PVs)
    ephemeral.py        ephemeral-volume controller (claims <pod>-<volume>)
    statefulset.py      StatefulSet controller (ordered pods, claims from templates)
    protection.py       pvc-protection / pv-protection finalizers
    volumeutil.py       PV/claim helpers: annotations, matching (pure)
    naming.py           pod-template-hash, generated pod names
    informer.py         list + watch caches over the in-process registry
    workqueue.py        coalescing, delaying, rate-limited work queue
    base.py             Controller workers, reading one's own writes, object helpers
    events.py           core/v1 Events as the controllers record them

The simulated nodes (kubelets, node lifecycle, taint eviction) are in
:mod:`kubesched.server.nodes` and reuse the informers and work queue from here.
"""

from kubesched.server.controllers.manager import ControllerManager, ControllerOptions

__all__ = ["ControllerManager", "ControllerOptions"]
