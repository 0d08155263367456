"""The HTTP client for scheduler extenders (upstream ``pkg/scheduler/extender.go``).

Speaks extender/v1 JSON (Go field names): ExtenderArgs to the filter and prioritize
verbs, ExtenderFilterResult and HostPriorityList back, ExtenderBindingArgs to the bind
verb. Lives in ``cluster/`` because it does I/O; the scheduling core sees it only as a
:class:`kubesched.framework.extender.Extender`. Errors carry upstream's texts.
"""

from __future__ import annotations

import json
import socket
import ssl
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.api.errors import KubeschedError
from kubesched.api.objects import Node, Pod
from kubesched.config.types import ExtenderConfig
from kubesched.framework.extender import ExtenderError, ExtenderFilterResult, Victims, interested
from kubesched.framework.types import NodeInfo


class ExtenderLatency:
    """Per-extender, per-verb call latencies (count, sum, max), for metrics and explain."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls: dict[tuple[str, str], list[float]] = {}

    def observe(self, ext: str, verb: str, seconds: float) -> None:
        with self._lock:
            c = self.calls.setdefault((ext, verb), [0.0, 0.0, 0.0])
            c[0] += 1
            c[1] += seconds
            c[2] = max(c[2], seconds)

    def snapshot(self) -> dict[str, dict[str, dict[str, float]]]:
        with self._lock:
            out: dict[str, dict[str, dict[str, float]]] = {}
            for (ext, verb), (n, total, mx) in self.calls.items():
                out.setdefault(ext, {})[verb] = {"count": n, "sumSeconds": total, "maxSeconds": mx}
            return out


LATENCY = ExtenderLatency()


def _ssl_context(cfg: ExtenderConfig) -> ssl.SSLContext | None:
    if not cfg.enable_https:
        return None
    tls = cfg.tls_config
    ctx = ssl.create_default_context()
    if tls is None:
        return ctx
    if tls.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if tls.ca_file:
        ctx.load_verify_locations(cafile=tls.ca_file)
    if tls.ca_data:
        ctx.load_verify_locations(cadata=tls.ca_data.decode())
    cert, key = tls.cert_file, tls.key_file
    if tls.cert_data:
        with tempfile.NamedTemporaryFile("wb", suffix=".pem", delete=False) as fh:
            fh.write(tls.cert_data)
            cert = fh.name
    if tls.key_data:
        with tempfile.NamedTemporaryFile("wb", suffix=".pem", delete=False) as fh:
            fh.write(tls.key_data)
            key = fh.name
    if cert:
        ctx.load_cert_chain(cert, key or None)
    return ctx


class HTTPExtender:
    """One configured extender (upstream ``HTTPExtender``)."""

    def __init__(self, cfg: ExtenderConfig, latency: ExtenderLatency = LATENCY) -> None:
        self.cfg = cfg
        self.latency = latency
        prefix = cfg.url_prefix
        if cfg.enable_https and prefix.startswith("http://"):
            prefix = "https://" + prefix[len("http://"):]
        self._base = prefix.rstrip("/")
        self._ssl = _ssl_context(cfg)
        self._managed = [m.name for m in cfg.managed_resources]

    name = property(lambda self: self.cfg.url_prefix)
    weight = property(lambda self: self.cfg.weight)
    ignorable = property(lambda self: self.cfg.ignorable)
    node_cache_capable = property(lambda self: self.cfg.node_cache_capable)
    is_filter = property(lambda self: bool(self.cfg.filter_verb))
    is_prioritizer = property(lambda self: bool(self.cfg.prioritize_verb))
    is_binder = property(lambda self: bool(self.cfg.bind_verb))

    def is_interested(self, pod: Pod) -> bool:
        return interested(self._managed, pod)

    def _send(self, verb: str, args: Any) -> Any:
        url = f"{self._base}/{verb}"
        body = json.dumps(args).encode()
        req = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=self.cfg.http_timeout, context=self._ssl) as resp:
                data = resp.read()
        except urllib.error.HTTPError as exc:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {exc.code}") from None
        except (TimeoutError, socket.timeout):
            raise ExtenderError(f'Post "{url}": context deadline exceeded '
                                "(Client.Timeout exceeded while awaiting headers)") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise ExtenderError(f'Post "{url}": context deadline exceeded '
                                    "(Client.Timeout exceeded while awaiting headers)") from None
            text = "connect: connection refused" if isinstance(reason, ConnectionRefusedError) else str(reason)
            raise ExtenderError(f'Post "{url}": {text}') from None
        except OSError as exc:
            raise ExtenderError(f'Post "{url}": {exc}') from None
        finally:
            self.latency.observe(self.name, verb, time.perf_counter() - started)
        try:
            return json.loads(data) if data.strip() else None
        except ValueError as exc:
            raise ExtenderError(f"extender {self.name}: {verb}: invalid JSON in the reply: {exc}") from None

    def _args(self, pod: Pod, nodes: Sequence[Node]) -> dict[str, Any]:
        if self.cfg.node_cache_capable:
            return {"Pod": pod.raw, "Nodes": None, "NodeNames": [n.name for n in nodes]}
        return {"Pod": pod.raw, "Nodes": {"metadata": {}, "items": [n.raw for n in nodes]}, "NodeNames": None}

    def filter(self, pod: Pod, nodes: Sequence[Node]) -> ExtenderFilterResult:
        if not self.cfg.filter_verb:
            return ExtenderFilterResult(nodes=list(nodes))
        reply = self._send(self.cfg.filter_verb, self._args(pod, nodes))
        res = _field(reply, "ExtenderFilterResult") if reply is not None else {}
        err = _get(res, "Error")
        if err:
            raise ExtenderError(str(err))
        out = ExtenderFilterResult(failed=_str_map(_get(res, "FailedNodes")),
                                   failed_unresolvable=_str_map(_get(res, "FailedAndUnresolvableNodes")))
        names = _get(res, "NodeNames")
        given = {n.name for n in nodes}
        if self.cfg.node_cache_capable and names is not None:
            if not isinstance(names, list):
                raise ExtenderError(f"extender {self.name}: filter: NodeNames is not a list")
            for n in names:
                if n not in given:
                    raise ExtenderError(f'extender "{self.name}" claims a filtered node "{n}" '
                                        "which is not found in the input node list")
            out.node_names = [str(n) for n in names]
            return out
        items = _get(_get(res, "Nodes") or {}, "items")
        if _get(res, "Nodes") is not None:
            try:
                out.nodes = [Node.from_dict(dict(i), validate=False) for i in (items or [])]
            except (KubeschedError, TypeError, ValueError) as exc:
                raise ExtenderError(f"extender {self.name}: filter: a returned node cannot be read: {exc}") from None
        else:
            out.nodes = []
        return out

    def prioritize(self, pod: Pod, nodes: Sequence[Node]) -> dict[str, int]:
        if not self.cfg.prioritize_verb:
            return {n.name: 0 for n in nodes}
        reply = self._send(self.cfg.prioritize_verb, self._args(pod, nodes))
        if not isinstance(reply, list):
            raise ExtenderError(f"extender {self.name}: prioritize: expected a HostPriorityList array")
        out: dict[str, int] = {}
        for hp in reply:
            if not isinstance(hp, dict):
                raise ExtenderError(f"extender {self.name}: prioritize: expected HostPriority objects")
            score = _get(hp, "Score")
            out[str(_get(hp, "Host"))] = int(score) if isinstance(score, (int, float)) else 0
        return out

    supports_preemption = property(lambda self: bool(self.cfg.preempt_verb))

    def process_preemption(self, pod: Pod, victims: Mapping[str, Victims],
                           node_info: Callable[[str], NodeInfo | None]) -> dict[str, Victims]:
        """ExtenderPreemptionArgs out (full victims, or UIDs when nodeCacheCapable);
        ExtenderPreemptionResult's NodeNameToMetaVictims back, mapped to the pods."""
        if self.cfg.node_cache_capable:
            args: dict[str, Any] = {"Pod": pod.raw, "NodeNameToVictims": None, "NodeNameToMetaVictims": {
                n: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for n, v in victims.items()}}
        else:
            args = {"Pod": pod.raw, "NodeNameToMetaVictims": None, "NodeNameToVictims": {
                n: {"Pods": [p.raw for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for n, v in victims.items()}}
        reply = self._send(self.cfg.preempt_verb, args)
        meta = _get(reply, "NodeNameToMetaVictims")
        out: dict[str, Victims] = {}
        for node, mv in (meta.items() if isinstance(meta, dict) else ()):
            ni = node_info(node)
            if ni is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node}"')
            pods = []
            for mp in _get(mv, "Pods") or []:
                uid = _get(mp, "UID")
                found = next((p for p in ni.pods if p.uid == uid), None)
                if found is None:
                    raise ExtenderError(f"extender: {self.name} claims to preempt pod (UID: {uid}) on node: "
                                        f"{node}, but the pod is not found on that node")
                pods.append(found)
            n_pdb = _get(mv, "NumPDBViolations")
            out[str(node)] = Victims(tuple(pods), int(n_pdb) if isinstance(n_pdb, int) else 0)
        return out

    def bind(self, pod: Pod, node: str) -> None:
        args = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid, "Node": node}
        reply = self._send(self.cfg.bind_verb, args)
        err = _get(reply, "Error") if isinstance(reply, dict) else None
        if err:
            raise ExtenderError(str(err))


def _get(obj: Any, key: str) -> Any:
    """Go's JSON decoder matches field names case-insensitively."""
    if not isinstance(obj, dict):
        return None
    if key in obj:
        return obj[key]
    low = key.lower()
    return next((v for k, v in obj.items() if isinstance(k, str) and k.lower() == low), None)


def _field(obj: Any, what: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ExtenderError(f"expected an {what} object, got {type(obj).__name__}")
    return obj


def _str_map(obj: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in obj.items()} if isinstance(obj, dict) else {}
