"""``Replica``: what one ``kubesched run`` process runs: a :class:`LiveScheduler`, leader
election, and the endpoints.

As kube-scheduler does (``leaderElection.leaderElect``, true by default):

* every replica starts its informers at once and keeps its cache warm (upstream's default,
  ``delayCacheUntilActive: false``), and is ready (``/readyz``) once they have synced;
* only the replica holding the Lease ``resourceNamespace/resourceName`` pops pods and
  writes decisions;
* when the leader dies, its lease stops being renewed; a standby takes it over after the
  lease duration (counted on its own clock) and starts scheduling from its cache, which it
  built from the API (list + watch), never from the dead leader's assumptions;
* a graceful stop (SIGTERM) first stops scheduling and lets bindings in flight finish (or
  releases them), then gives the lease up, so a standby takes over at once.

Fencing: a replica writes a decision (binding, victim deletion, status, event) only while
its lease is provably its own: the sink calls the elector's ``fence`` right before each
write, which refuses it once the last renewal is ``renewDeadline`` old (on the monotonic
clock: a replica stopped by SIGSTOP and thawed after the standby took over writes
nothing). A refused binding fails like any other: its assumed pod is forgotten.

One difference, on purpose: when a leader *loses* its lease (it could not renew within
``renewDeadline``: API server unreachable, process stalled), kube-scheduler exits with code 1
and relies on being restarted. A replica here stops writing at once (bindings in flight are
abandoned and forgotten), throws its scheduler away, builds a new one whose cache is listed
afresh from the API, and becomes a candidate again: the same guarantees, and a replica
started by hand, outside a Deployment, is not lost. Its metrics go on across the
schedulers it builds (one :class:`SchedulerMetrics`), as a restarted process's would not.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kubesched.api.errors import KubeschedError
from kubesched.cluster.kube.client import KubeClient
from kubesched.cluster.kube.leaderelection import LeaderCallbacks, LeaderElector, LeaseLock, default_identity
from kubesched.config import SchedulerConfig
from kubesched.framework.registry import Registry
from kubesched.live.endpoints import Check, EndpointHooks
from kubesched.live.metrics import SchedulerMetrics
from kubesched.live.scheduler import LiveOptions, LiveScheduler

log = logging.getLogger(__name__)

HEALTHZ_LEASE_TOLERANCE = 20.0  # kube-scheduler's NewLeaderHealthzAdaptor(20 * time.Second)
ELECTION_NAME = "kube-scheduler"  # LeaderElectionConfig.Name: the label of the metric


class _Delegating(Collector):
    """The scheduler's metrics (kept across the schedulers the replica builds) and
    ``leader_election_master_status``."""

    def __init__(self, replica: "Replica") -> None:
        self._replica = replica

    def collect(self) -> Iterator[Any]:
        yield from self._replica.metrics.registry.collect()
        if self._replica.elector is not None:
            fam = GaugeMetricFamily(
                "leader_election_master_status", "[ALPHA] Gauge of if the reporting system is master of the "
                "relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify "
                "the lease. Please make sure to group by name.", labels=["name"])
            fam.add_metric([ELECTION_NAME], 1.0 if self._replica.leading else 0.0)
            yield fam


class Replica:
    def __init__(self, config: SchedulerConfig, client: KubeClient, *, registry: Registry | None = None,
                 options: LiveOptions = LiveOptions(), identity: str | None = None,
                 lease_client: KubeClient | None = None,
                 on_event: Callable[[str], None] | None = None) -> None:
        """``lease_client``: the client of the Lease (kube-scheduler gives leader election a
        client of its own, so a burst of bindings cannot delay a renewal); default ``client``.
        ``on_event``: told of "leading", "standby <holder>", "lost" (for the command's output)."""
        self.config = config
        self.client = client
        self.registry = registry
        self.options = options
        self.on_event = on_event or (lambda what: None)
        self.identity = identity or default_identity()
        self.metrics = SchedulerMetrics()
        le = config.leader_election
        self.elector: LeaderElector | None = None
        if le.leader_elect:
            first = config.profiles[0].scheduler_name if config.profiles else "default-scheduler"
            timeout = max(1.0, le.renew_deadline / 2)  # upstream's lock client timeout
            lock = LeaseLock(lease_client or client, le.resource_namespace, le.resource_name, self.identity,
                             event_source=first, timeout=timeout)
            try:
                self.elector = LeaderElector(
                    lock, lease_duration=le.lease_duration, renew_deadline=le.renew_deadline,
                    retry_period=le.retry_period, name=ELECTION_NAME,
                    callbacks=LeaderCallbacks(on_started_leading=self._started_leading,
                                              on_stopped_leading=self._stopped_leading,
                                              on_new_leader=self._new_leader))
            except ValueError as exc:  # upstream: "couldn't create leader elector: ..."
                raise KubeschedError(f"leaderElection: {exc}") from None
        self.live = self._new_live()
        self.metrics_registry = CollectorRegistry()
        self.metrics_registry.register(_Delegating(self))
        self._stop = threading.Event()  # stop() was called
        self._resign = threading.Event()  # then, once scheduling has stopped: give the lease up
        self._lock = threading.Lock()
        self._election_thread: threading.Thread | None = None
        self.lost = 0  # times leadership was lost (and the scheduler rebuilt)

    def _new_live(self) -> LiveScheduler:
        return LiveScheduler(self.config, self.client, self.options, registry=self.registry,
                             fence=None if self.elector is None else self.elector.fence, metrics=self.metrics)

    # -- state -----------------------------------------------------------------------------
    @property
    def leading(self) -> bool:
        return self.elector is None or self.elector.leading.is_set()

    def hooks(self, explain_text: Callable[[dict[str, Any]], str] | None = None) -> EndpointHooks:
        """The endpoints' checks, metrics and explanations, always of the current scheduler;
        ``explain_text`` renders an explain document for ``?output=text``."""
        def text(ns: str, name: str) -> str | None:
            doc = self.live.explain(ns, name)
            return None if doc is None or explain_text is None else explain_text(doc)

        def election() -> str | None:
            return self.elector.check(HEALTHZ_LEASE_TOLERANCE) if self.elector is not None else None

        def synced() -> str | None:
            return None if all(i.has_synced for i in self.live.informers) else "informers not synced"

        def shutdown() -> str | None:
            return "shutting down" if self._stop.is_set() else None

        base: list[Check] = [("ping", lambda: None), ("leaderElection", election)]
        return EndpointHooks(
            healthz=base, readyz=[*base, ("sched-handler-sync", synced), ("shutdown", shutdown)],
            registry=self.metrics_registry, explain=lambda ns, name: self.live.explain(ns, name),
            explain_text=None if explain_text is None else text,
            explain_fixes=lambda ns, name, limit: self.live.explain_fixes(ns, name, limit))

    # -- running -----------------------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            self.live.start_informers()
            if self.elector is None:
                self.live.start_scheduling()
                self.on_event("leading")
                return
        self._election_thread = threading.Thread(target=self._elect, name="leader-election", daemon=True)
        self._election_thread.start()

    def _elect(self) -> None:
        assert self.elector is not None
        while not self._stop.is_set():
            try:
                self.elector.run(self._resign)
            except Exception:  # noqa: BLE001 - a bug or a malformed answer: lost, then stand again
                log.exception("leader election failed; standing again")
                self._stop.wait(self.config.leader_election.retry_period)
            if self._stop.is_set():
                return
            # leadership lost: _stopped_leading threw the scheduler away and built a new one
            self.elector.leading.clear()

    def _started_leading(self) -> None:
        with self._lock:
            if self._stop.is_set() or (self.elector is not None and not self.elector.leading.is_set()):
                return
            self.live.start_scheduling()
        log.info("leading %s as %s: scheduling", self._lease(), self.identity)
        self.on_event("leading")

    def _stopped_leading(self) -> None:
        if self._stop.is_set():  # a graceful stop: stop() stops the scheduler
            return
        log.error("leaderelection lost: %s no longer holds %s; rebuilding the cache from the API",
                  self.identity, self._lease())
        with self._lock:
            old = self.live
            old.stop(timeout=0.0, abandon=True)
            self.lost += 1
            if self._stop.is_set():
                return
            self.live = self._new_live()
            self.live.start_informers()
        self.on_event("lost")

    def _new_leader(self, holder: str) -> None:
        if holder and holder != self.identity:
            log.info("new leader elected: %s", holder)
            self.on_event(f"standby {holder}")

    def _lease(self) -> str:
        le = self.config.leader_election
        return f"{le.resource_namespace}/{le.resource_name}"

    def stop(self) -> None:
        """Graceful: stop scheduling (bindings in flight finish or are released), then give
        the lease up, then stop the informers."""
        with self._lock:
            self._stop.set()
            live = self.live
        live.stop()  # the lease is still renewed meanwhile: nobody else binds yet
        self._resign.set()
        if self._election_thread is not None:
            self._election_thread.join(max(5.0, self.config.leader_election.renew_deadline))
