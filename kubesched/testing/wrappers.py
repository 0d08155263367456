"""Fluent builders for test objects (upstream ``testing/wrappers.go``).

    make_pod().name("p").req(cpu="1", memory="1Gi").node("n1").obj()
    make_node().name("n1").capacity(cpu="4", memory="8Gi", pods="110").label("zone", "a").obj()

``.raw()`` returns the manifest dictionary instead of the parsed object. ``.obj()`` decodes
without the API server's validation: like upstream's ``st.MakePod()``, a fixture may be
what no API server would accept (node names such as "nodeA", requests without limits).
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.api.objects import Node, Pod


class PodWrapper:
    def __init__(self) -> None:
        self._d: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                                   "metadata": {"name": "pod", "namespace": "default"},
                                   "spec": {"containers": []}, "status": {}}
        self._container_added = False

    @property
    def _meta(self) -> dict[str, Any]:
        return self._d["metadata"]  # type: ignore[no-any-return]

    @property
    def _spec(self) -> dict[str, Any]:
        return self._d["spec"]  # type: ignore[no-any-return]

    def name(self, n: str) -> "PodWrapper":
        self._meta["name"] = n
        return self

    def namespace(self, ns: str) -> "PodWrapper":
        self._meta["namespace"] = ns
        return self

    def uid(self, uid: str) -> "PodWrapper":
        self._meta["uid"] = uid
        return self

    def label(self, k: str, v: str) -> "PodWrapper":
        self._meta.setdefault("labels", {})[k] = v
        return self

    def labels(self, labels: dict[str, str]) -> "PodWrapper":
        self._meta.setdefault("labels", {}).update(labels)
        return self

    def annotation(self, k: str, v: str) -> "PodWrapper":
        self._meta.setdefault("annotations", {})[k] = v
        return self

    def node(self, n: str) -> "PodWrapper":
        self._spec["nodeName"] = n
        return self

    def scheduler_name(self, n: str) -> "PodWrapper":
        self._spec["schedulerName"] = n
        return self

    def priority(self, p: int) -> "PodWrapper":
        self._spec["priority"] = p
        return self

    def preemption_policy(self, p: str) -> "PodWrapper":
        self._spec["preemptionPolicy"] = p
        return self

    def nominated_node(self, n: str) -> "PodWrapper":
        self._d["status"]["nominatedNodeName"] = n
        return self

    def start_time(self, t: str) -> "PodWrapper":
        self._d["status"]["startTime"] = t
        return self

    def container(self, image: str = "", name: str = "", requests: dict[str, Any] | None = None,
                  limits: dict[str, Any] | None = None, ports: list[dict[str, Any]] | None = None,
                  ) -> "PodWrapper":
        c: dict[str, Any] = {"name": name or f"c{len(self._spec['containers'])}", "image": image}
        res: dict[str, Any] = {}
        if requests:
            res["requests"] = dict(requests)
        if limits:
            res["limits"] = dict(limits)
        if res:
            c["resources"] = res
        if ports:
            c["ports"] = ports
        self._spec["containers"].append(c)
        return self

    def req(self, **requests: Any) -> "PodWrapper":
        """Add a container with these requests (``cpu="1"``, ``memory="1Gi"``, extended via
        ``**{"example.com/foo": 1}``)."""
        return self.container(requests={k.replace("_", "-") if k == "ephemeral_storage" else k: v
                                         for k, v in requests.items()})

    def init_req(self, sidecar: bool = False, **requests: Any) -> "PodWrapper":
        c: dict[str, Any] = {"name": f"init{len(self._spec.get('initContainers', []))}",
                             "image": "", "resources": {"requests": dict(requests)}}
        if sidecar:
            c["restartPolicy"] = "Always"
        self._spec.setdefault("initContainers", []).append(c)
        return self

    def overhead(self, **res: Any) -> "PodWrapper":
        self._spec["overhead"] = dict(res)
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> "PodWrapper":
        p: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        return self.container(ports=[p])

    def node_selector(self, sel: dict[str, str]) -> "PodWrapper":
        self._spec["nodeSelector"] = dict(sel)
        return self

    def toleration(self, key: str = "", operator: str = "Equal", value: str = "", effect: str = "",
                   ) -> "PodWrapper":
        t: dict[str, Any] = {"operator": operator}
        if key:
            t["key"] = key
        if value:
            t["value"] = value
        if effect:
            t["effect"] = effect
        self._spec.setdefault("tolerations", []).append(t)
        return self

    def affinity(self, affinity: dict[str, Any]) -> "PodWrapper":
        self._spec["affinity"] = copy.deepcopy(affinity)
        return self

    def node_affinity_in(self, key: str, values: list[str]) -> "PodWrapper":
        na = self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        req = na.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": [{}]})
        req["nodeSelectorTerms"][0].setdefault("matchExpressions", []).append(
            {"key": key, "operator": "In", "values": list(values)})
        return self

    def pod_affinity(self, kind: str, required: bool, term: dict[str, Any], weight: int = 0,
                     ) -> "PodWrapper":
        """``kind`` is podAffinity or podAntiAffinity; ``term`` a PodAffinityTerm."""
        section = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        if required:
            section.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            section.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term})
        return self

    def spread(self, max_skew: int, key: str, when: str, selector: dict[str, Any] | None,
               **extra: Any) -> "PodWrapper":
        c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
        if selector is not None:
            c["labelSelector"] = selector
        c.update(extra)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def gate(self, name: str) -> "PodWrapper":
        self._spec.setdefault("schedulingGates", []).append({"name": name})
        return self

    def pvc(self, claim: str) -> "PodWrapper":
        self._spec.setdefault("volumes", []).append(
            {"name": claim, "persistentVolumeClaim": {"claimName": claim}})
        return self

    def set(self, path: str, value: Any) -> "PodWrapper":
        """Set any field by dotted path (``spec.hostNetwork``)."""
        d = self._d
        parts = path.split(".")
        for p in parts[:-1]:
            d = d.setdefault(p, {})
        d[parts[-1]] = value
        return self

    def raw(self) -> dict[str, Any]:
        d = copy.deepcopy(self._d)
        if not d["spec"]["containers"]:
            d["spec"]["containers"] = [{"name": "c0", "image": ""}]
        return d

    def obj(self) -> Pod:
        return Pod.from_dict(self.raw(), validate=False)


class NodeWrapper:
    def __init__(self) -> None:
        self._d: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node"},
                                   "spec": {}, "status": {}}

    def name(self, n: str) -> "NodeWrapper":
        self._d["metadata"]["name"] = n
        self._d["metadata"].setdefault("labels", {}).setdefault("kubernetes.io/hostname", n)
        return self

    def label(self, k: str, v: str) -> "NodeWrapper":
        self._d["metadata"].setdefault("labels", {})[k] = v
        return self

    def labels(self, labels: dict[str, str]) -> "NodeWrapper":
        self._d["metadata"].setdefault("labels", {}).update(labels)
        return self

    def capacity(self, **res: Any) -> "NodeWrapper":
        self._d["status"]["capacity"] = {k: v for k, v in res.items()}
        return self

    def allocatable(self, **res: Any) -> "NodeWrapper":
        self._d["status"]["allocatable"] = {k: v for k, v in res.items()}
        return self

    def res(self, res: dict[str, Any]) -> "NodeWrapper":
        """Capacity from a dict (for names like ``example.com/gpu``)."""
        self._d["status"]["capacity"] = dict(res)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> "NodeWrapper":
        t = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self._d["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self, v: bool = True) -> "NodeWrapper":
        self._d["spec"]["unschedulable"] = v
        return self

    def image(self, names: list[str], size: int) -> "NodeWrapper":
        self._d["status"].setdefault("images", []).append({"names": list(names), "sizeBytes": size})
        return self

    def raw(self) -> dict[str, Any]:
        return copy.deepcopy(self._d)

    def obj(self) -> Node:
        return Node.from_dict(self.raw(), validate=False)


def make_pod() -> PodWrapper:
    return PodWrapper()


def make_node() -> NodeWrapper:
    return NodeWrapper()
