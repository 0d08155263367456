"""Events recorded by the in-process controllers, as kube-controller-manager records them.

``kubectl describe deployment`` shows ``ScalingReplicaSet``, ``kubectl describe rs``
shows ``SuccessfulCreate``/``SuccessfulDelete``, ``kubectl get events`` shows
``TaintManagerEviction`` and ``NodeNotReady``: core/v1 Events in the object's namespace
(``default`` for cluster-scoped objects such as Nodes), named ``<object>.<hex time>``
like client-go's recorder names them. Recording never fails the caller.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import meta, timestamp

log = logging.getLogger(__name__)

NORMAL, WARNING = "Normal", "Warning"


class EventRecorder:
    def __init__(self, registry: Registry, component: str, clock: Callable[[], float] | None = None,
                 host: str = "") -> None:
        self.registry = registry
        self.component = component
        self.host = host
        self.clock = clock or registry.clock
        self._last = 0
        self._lock = threading.Lock()

    def event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        m = meta(obj)
        ns = str(m.get("namespace") or "default")
        now = self.clock()
        with self._lock:  # distinct names even for events in the same nanosecond
            stamp = self._last = max(int(now * 1e9), self._last + 1)
        ts = timestamp(now)
        source: dict[str, str] = {"component": self.component}
        if self.host:
            source["host"] = self.host
        ev = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{m.get('name')}.{stamp:x}", "namespace": ns},
            "involvedObject": {k: v for k, v in (
                ("kind", obj.get("kind")), ("namespace", m.get("namespace")), ("name", m.get("name")),
                ("uid", m.get("uid")), ("apiVersion", obj.get("apiVersion")),
                ("resourceVersion", m.get("resourceVersion"))) if v},
            "reason": reason, "message": message, "source": source,
            "firstTimestamp": ts, "lastTimestamp": ts, "count": 1, "type": type_,
            "eventTime": None, "reportingComponent": self.component, "reportingInstance": self.host,
        }
        try:
            self.registry.create("events", ns, ev)
        except ApiError as exc:
            log.debug("event %s for %s/%s not recorded: %s", reason, ns, m.get("name"), exc.message)
        except Exception:  # pragma: no cover - the store closing under us at shutdown
            log.debug("event %s not recorded", reason, exc_info=True)
