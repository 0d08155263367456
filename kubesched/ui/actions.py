"""The web UI's writes in ``serve``: objects from YAML, deletions, the scheduler's configuration.

Objects are created and deleted through the API server's own REST handlers (an in-process
request to the same ASGI application kubectl talks to, entering below authentication as
the page's user: :class:`Caller`), so the page gets exactly the ``Status`` kubectl would
get: ``403 Forbidden`` for what the user may not do (RBAC and its escalation check
included), ``422 Invalid`` with its causes, ``409 AlreadyExists``, ``404 NotFound``. One YAML text may hold many documents (``---``) and ``List`` objects;
each is created on its own and reported on its own, as ``kubectl create -f`` does.

A new KubeSchedulerConfiguration is loaded and validated exactly as ``--config`` is
(:func:`kubesched.config.load_config`); only if it is valid is the scheduler inside
restarted with it (:meth:`SchedulerComponent.restart`), otherwise the old one keeps
running and the validation errors are returned.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from starlette.types import ASGIApp, Message

from kubesched.api.documents import documents as read_documents
from kubesched.api.errors import DecodeError, KubeschedError
from kubesched.server.apiserver.authn.authenticator import USER_KEY, UserInfo
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.registry.resources import Resource
from kubesched.config import ConfigError, SchedulerConfig, load_config
from kubesched.live.scheduler import LiveScheduler
from kubesched.plugins.registry import in_tree_registry

CONFIG_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


class ActionError(ValueError):
    """Input the UI cannot act on at all (not YAML, not objects); the message says where."""


def documents(text: str) -> list[dict[str, Any]]:
    """The objects in a YAML text (``List`` items flattened); ActionError names the document."""
    try:  # kubectl's reading, bounded: no alias that contains itself or expands without end
        docs = [d for _, d in read_documents("", text) if d is not None]
    except DecodeError as exc:
        raise ActionError(f"YAML: {exc}") from None
    out: list[dict[str, Any]] = []
    for i, doc in enumerate(docs, 1):
        if not isinstance(doc, dict):
            raise ActionError(f"document {i}: an object (apiVersion, kind, metadata) is expected, "
                              f"not {type(doc).__name__}")
        if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
            out.extend(x for x in doc["items"] if isinstance(x, dict))
        else:
            out.append(doc)
    if not out:
        raise ActionError("YAML: no object in the text")
    return out


def resource_for(registry: Registry, obj: dict[str, Any]) -> Resource:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        raise ActionError("apiVersion and kind are required")
    group, _, version = api_version.rpartition("/")
    for r in registry.table.resources:
        if r.group == group and r.version == version and r.kind == kind:
            return r
    raise ActionError(f"no resource of kind {kind} in {api_version} on this server")


def path_of(r: Resource, namespace: str | None, name: str | None = None) -> str:
    base = f"/apis/{r.group}/{r.version}" if r.group else f"/api/{r.version}"
    if r.namespaced:
        base += f"/namespaces/{quote(namespace or 'default', safe='')}"
    base += f"/{r.plural}"
    return base + (f"/{quote(name, safe='')}" if name else "")


@dataclass(slots=True)
class Outcome:
    """One object's result: ``ok`` and what the API server answered (its Status on failure)."""

    ref: str
    ok: bool
    code: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"object": self.ref, "ok": self.ok, "code": self.code, "message": self.message}


@dataclass(slots=True)
class _Response:
    status_code: int = 500
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class Caller:
    """Where in-process requests enter (the API server's chain below authentication:
    authorization, then the handlers) and as whom."""

    app: ASGIApp
    user: UserInfo


async def _call(caller: Caller, method: str, path: str, body: Any = None) -> _Response:
    """One request to the API server's own ASGI application, in this process, as the caller's user."""
    content = b"" if body is None else json.dumps(body).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "client": ("127.0.0.1", 0), "server": ("127.0.0.1", 0), USER_KEY: caller.user,
             "headers": [(b"content-type", b"application/json"), (b"accept", b"application/json"),
                         (b"user-agent", b"kubesched-ui"),  # the managedFields manager
                         (b"content-length", str(len(content)).encode())]}
    sent = False
    out = _Response()
    chunks: list[bytes] = []

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": content, "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            out.status_code = int(message["status"])
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))

    await caller.app(scope, receive, send)
    out.body = b"".join(chunks)
    return out


def _message(resp: _Response) -> str:
    try:
        doc = resp.json()
    except ValueError:
        return resp.text.strip()
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return str(doc.get("message") or doc.get("reason") or resp.status_code)
    return ""


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _ref(r: Resource, obj: dict[str, Any]) -> str:
    meta = _meta(obj)
    name = meta.get("name") or meta.get("generateName") or "?"
    ns = meta.get("namespace") or "default"
    return f"{r.kind.lower()}/{ns}/{name}" if r.namespaced else f"{r.kind.lower()}/{name}"


async def create(caller: Caller, registry: Registry, text: str) -> list[Outcome]:
    results = []
    for obj in documents(text):
        try:
            r = resource_for(registry, obj)
        except ActionError as exc:
            results.append(Outcome(f"{obj.get('kind', '?')}", False, 400, str(exc)))
            continue
        resp = await _call(caller, "POST", path_of(r, _meta(obj).get("namespace")), obj)
        ref = _ref(r, obj)
        if resp.status_code in (200, 201, 202):
            made = resp.json().get("metadata", {})
            ref = _ref(r, {"metadata": made}) if made.get("name") else ref
            results.append(Outcome(ref, True, resp.status_code, "created"))
        else:
            results.append(Outcome(ref, False, resp.status_code, _message(resp)))
    return results


async def delete_all(caller: Caller, registry: Registry, text: str) -> list[Outcome]:
    """Delete the objects a YAML text names (``kubectl delete -f``), each on its own."""
    results = []
    for obj in documents(text):
        meta = _meta(obj)
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            results.append(Outcome(str(obj.get("kind", "?")), False, 400, "metadata.name is required to delete"))
            continue
        try:
            results.append(await delete(caller, registry, str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""),
                                        str(meta.get("namespace") or "default"), name))
        except ActionError as exc:
            results.append(Outcome(str(obj.get("kind", "?")), False, 400, str(exc)))
    return results


async def delete(caller: Caller, registry: Registry, api_version: str, kind: str, namespace: str,
                 name: str) -> Outcome:
    r = resource_for(registry, {"apiVersion": api_version, "kind": kind})
    resp = await _call(caller, "DELETE", path_of(r, namespace, name))
    ref = f"{kind.lower()}/{namespace}/{name}" if r.namespaced else f"{kind.lower()}/{name}"
    if resp.status_code in (200, 202):
        return Outcome(ref, True, resp.status_code, "deleted")
    return Outcome(ref, False, resp.status_code, _message(resp))


class ConfigHolder:
    """The configuration of the running scheduler: its text, its profiles as built (the
    plugins of each extension point, the score weights) and, in ``serve``, its replacement
    (``restart``: :meth:`SchedulerComponent.restart`; None: read-only)."""

    def __init__(self, live: Callable[[], LiveScheduler | None], text: str,
                 restart: Callable[[SchedulerConfig], None] | None = None) -> None:
        self.live = live
        self.text = text or CONFIG_HEAD
        self.restart = restart

    def current(self) -> dict[str, Any]:
        live = self.live()
        return {"yaml": self.text, "profiles": live.profiles if live is not None else [],
                "effective": effective(live) if live is not None else {},
                "readOnly": self.restart is None or live is None}

    def replace(self, text: str) -> SchedulerConfig:
        """Validate ``text`` as ``--config`` would be; restart the scheduler with it. Raises
        ActionError with the validation errors (the running scheduler untouched)."""
        if self.restart is None or self.live() is None:
            raise ActionError("no scheduler runs inside this server: there is no configuration to change")
        config = load_text(text)
        try:
            self.restart(config)
        except KubeschedError as exc:  # a profile that cannot be built
            raise ActionError(f"the configuration cannot be used: {exc}") from None
        self.text = text
        return config


def effective(live: LiveScheduler) -> dict[str, Any]:
    """Per profile: the plugins of each extension point, in order, and the score weights."""
    out: dict[str, Any] = {}
    for name, fw in live.sched.profiles.items():
        points = {point: [pl.name for pl in plugins] for point, plugins in fw.points.items() if plugins}
        out[name] = {"plugins": points, "scoreWeights": {pl.name: fw.weights.get(pl.name, 0)
                                                         for pl in fw.points.get("score", ())}}
    return out


def load_text(text: str) -> SchedulerConfig:
    """Load a configuration from text through the file loader (so errors carry lines)."""
    fd, path = tempfile.mkstemp(suffix=".yaml", prefix="kubesched-ui-config-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            return load_config(path, in_tree_registry())
        except ConfigError as exc:
            raise ActionError(str(exc).replace(path, "the submitted configuration")) from None
    finally:
        os.unlink(path)
