"""Prometheus metrics of the API server, with kube-apiserver's names and labels.

``apiserver_request_total`` and ``apiserver_request_duration_seconds`` (verb, group,
version, resource, subresource, scope, code), ``apiserver_current_inflight_requests``,
``apiserver_longrunning_requests`` (open watches), ``apiserver_storage_objects`` and
``apiserver_watch_events_total``; plus ``kubesched_store_revision``. Each app has its own
registry, so several servers can live in one process (tests).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kubesched.server.store import Store

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_REQ_LABELS = ("verb", "group", "version", "resource", "subresource", "scope", "component")
_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30,
            45, 60)


class _StoreCollector(Collector):
    def __init__(self, store: Store) -> None:
        self._store = store

    def collect(self) -> Iterator[Any]:
        objects = GaugeMetricFamily("apiserver_storage_objects", "Number of stored objects at the time of "
                                    "last check split by kind.", labels=["resource"])
        if not self._store.closed:
            for kind, n in sorted(self._store.counts().items()):
                group, _, plural = kind.partition("/")
                objects.add_metric([plural if group == "core" else f"{plural}.{group}"], n)
        yield objects
        rev = GaugeMetricFamily("kubesched_store_revision", "The store's last committed resourceVersion.")
        rev.add_metric([], self._store.rv)
        yield rev
        comp = GaugeMetricFamily("kubesched_store_compacted_revision",
                                 "Watches from before this resourceVersion get 410 Gone.")
        comp.add_metric([], self._store.compacted_rv)
        yield comp


class ApiMetrics:
    def __init__(self, store: Store) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("apiserver_request_total", "Counter of apiserver requests broken out for each "
                                "verb, group, version, resource, scope, component, and HTTP response code.",
                                _REQ_LABELS + ("code",), registry=self.registry)
        self.duration = Histogram("apiserver_request_duration_seconds", "Response latency distribution in "
                                  "seconds for each verb, group, version, resource, subresource, scope and "
                                  "component.", _REQ_LABELS, buckets=_BUCKETS, registry=self.registry)
        self.inflight = Gauge("apiserver_current_inflight_requests", "Maximal number of currently used "
                              "inflight request limit of this apiserver per request kind.", ["request_kind"],
                              registry=self.registry)
        self.longrunning = Gauge("apiserver_longrunning_requests", "Gauge of all active long-running apiserver "
                                 "requests (watches).", _REQ_LABELS, registry=self.registry)
        self.watch_events = Counter("apiserver_watch_events_total", "Number of events sent in watch clients",
                                    ["group", "version", "kind"], registry=self.registry)
        self.registry.register(_StoreCollector(store))
        # the children of each label set, looked up once (labels() takes a lock and builds keys)
        self._children: dict[tuple[str, ...], tuple[Any, Any]] = {}

    def observe(self, labels: dict[str, str], code: int, started: float) -> None:
        values = (*(labels.get(k, "") for k in _REQ_LABELS), str(code))
        children = self._children.get(values)
        if children is None:
            children = self._children[values] = (self.requests.labels(*values), self.duration.labels(*values[:-1]))
        children[0].inc()
        if labels.get("verb") != "WATCH":
            children[1].observe(time.perf_counter() - started)

    def render(self) -> bytes:
        return generate_latest(self.registry)
