"""The scheduler running live against a Kubernetes API server (a real cluster's, or the one
``kubesched serve`` embeds): informers feed the scheduling core, decisions go back through
the API.

    scheduler.py  LiveScheduler, LiveOptions: wiring, start/stop, ready, explain
    loop.py       SchedulingLoop: the scheduling thread and upstream's periodic timers
    binder.py     Binder: binding cycles in worker threads, counted for a graceful stop
    component.py  SchedulerComponent: the scheduler inside ``kubesched serve``
    replica.py    Replica: what ``kubesched run`` runs: a LiveScheduler, leader election
                  (kubesched.cluster.kube.leaderelection), the endpoints
    endpoints.py  /healthz, /livez, /readyz, /metrics, /debug/explain on uvicorn
    plugin_extender.py  PluginExtender: a profile's Filter/Score plugins answering
                  extender/v1 filter and prioritize (``kubesched extender``)
    extender_http.py    ExtenderServer: its HTTP verbs, /healthz, /metrics, TLS
"""

from kubesched.live.component import SchedulerComponent
from kubesched.live.scheduler import LiveOptions, LiveScheduler

__all__ = ["LiveOptions", "LiveScheduler", "SchedulerComponent"]
