"""The registry: Kubernetes API semantics over the store, for HTTP and in-process callers.

Everything that writes goes through here: the HTTP handlers, and the controllers that run
inside ``kubesched serve`` (they call these methods directly instead of going through a
socket; the semantics, defaulting and validation are the same, and so are the watch
events other clients see). Each method takes a :class:`~.resources.Resource` (or its name,
``"pods"``, ``"deployments.apps"``) and raw JSON objects, and raises :class:`ApiError`.

Per request: body checks (kind, apiVersion, name and namespace against the URL), generic
metadata (uid, creationTimestamp, generation, generateName), the kind's strategy
(:mod:`.strategy`), validation (422 with field causes), then one store transaction. An
update or patch is a read-modify-write under the store's write lock, so a stale
``resourceVersion`` gets 409 and no update is lost; an update that changes nothing writes
nothing (no new resourceVersion), as upstream. Deletion is graceful where upstream's is
(:mod:`.deletion`); the subresources ``binding``, ``eviction`` and ``scale`` live in
:mod:`.subresources`; watches in :mod:`.watchapi`.
"""

from __future__ import annotations

import copy
import json
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.defaults import generate_name
from kubesched.api.errors import DecodeError
from kubesched.api.policy import PriorityClass
from kubesched.api.schemas import check_object
from kubesched.api.validation import go_quote
from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.apply import track_update
from kubesched.server.apiserver.typedefs import definition_for
from kubesched.server.apiserver.strategies.apps import DeploymentStrategy, ReplicaSetStrategy
from kubesched.server.apiserver.strategies.config import ConfigMapStrategy, SecretStrategy, ServiceAccountStrategy
from kubesched.server.apiserver.strategies.daemonset import CronJobStrategy, DaemonSetStrategy
from kubesched.server.apiserver.strategies.dra import DRA_STRATEGIES
from kubesched.server.apiserver.strategies.pod import NodeStrategy, PodStrategy
from kubesched.server.apiserver.registry.deletion import delete_one, write_update
from kubesched.server.apiserver.registry.dryrun import DryRun
from kubesched.server.apiserver.registry.resources import TABLE, Resource, ResourceTable
from kubesched.server.apiserver.strategies.scheduling import (
    PodDisruptionBudgetStrategy, PodGroupStrategy, PriorityClassStrategy,
)
from kubesched.server.apiserver.registry.selectors import predicate
from kubesched.server.apiserver.strategies.statefulset import StatefulSetStrategy
from kubesched.server.apiserver.registry.pastlist import list_at
from kubesched.server.apiserver.registry.versions import decode_continue, encode_continue, parse_rv
from kubesched.server.apiserver.strategies.storage import STORAGE_STRATEGIES
from kubesched.server.apiserver.strategies.rbac import RBAC_STRATEGIES
from kubesched.server.apiserver.strategies.base import (
    Admission, Context, EventStrategy, EventV1Strategy, NamespaceStrategy, ReplicationControllerStrategy,
    ServiceStrategy, StatusStrategy, Strategy,
)
from kubesched.server.apiserver.strategies.validation import decode_cause, validate_metadata
from kubesched.server.store import Store, StoreError, Txn
from kubesched.server.store import errors as store_errors

log = logging.getLogger(__name__)

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("", "pods"): PodStrategy(),
    ("", "nodes"): NodeStrategy(),
    ("", "namespaces"): NamespaceStrategy(),
    ("", "events"): EventStrategy(),
    ("", "services"): ServiceStrategy(),
    ("", "replicationcontrollers"): ReplicationControllerStrategy(),
    ("events.k8s.io", "events"): EventV1Strategy(),
    ("scheduling.k8s.io", "priorityclasses"): PriorityClassStrategy(),
    ("policy", "poddisruptionbudgets"): PodDisruptionBudgetStrategy(),
    ("apps", "deployments"): DeploymentStrategy(),
    ("apps", "replicasets"): ReplicaSetStrategy(),
    ("scheduling.x-k8s.io", "podgroups"): PodGroupStrategy(),
    ("apps", "statefulsets"): StatefulSetStrategy(),
    **STORAGE_STRATEGIES,
    ("", "configmaps"): ConfigMapStrategy(),
    ("", "secrets"): SecretStrategy(),
    ("", "serviceaccounts"): ServiceAccountStrategy(),
    ("apps", "daemonsets"): DaemonSetStrategy(),
    ("batch", "cronjobs"): CronJobStrategy(),
    **DRA_STRATEGIES,
    **RBAC_STRATEGIES,
}
_DEFAULT = Strategy()
_DEFAULT_STATUS = StatusStrategy()
_MAX_GENERATE_ATTEMPTS = 8


class Registry:
    def __init__(self, store: Store, *, clock: Callable[[], float] = time.time,
                 table: ResourceTable = TABLE, autoprovision_namespaces: bool = True,
                 clear_nominated_on_binding: bool = False) -> None:
        self.store = store
        self.clock = clock
        self.table = table
        # kube-apiserver's ClearingNominatedNodeNameAfterBinding gate (on from 1.35): a
        # pods/binding also empties status.nominatedNodeName
        self.clear_nominated_on_binding = clear_nominated_on_binding
        # upstream's NamespaceAutoProvision admission plugin: creating an object in a
        # namespace that does not exist creates the namespace (as ``simulate`` assumes)
        self.autoprovision_namespaces = autoprovision_namespaces

    # -- helpers --------------------------------------------------------------------------
    def resource(self, res: Resource | str) -> Resource:
        if isinstance(res, Resource):
            return res
        try:
            return self.table[res]
        except KeyError:
            raise E.not_found_path() from None

    @staticmethod
    def strategy(res: Resource) -> Strategy:
        return STRATEGIES.get((res.group, res.plural)) or (_DEFAULT_STATUS if res.has_status else _DEFAULT)

    def context(self) -> Context:
        return Context(now=self.clock(), priority_classes=self.priority_classes)

    def priority_classes(self) -> dict[str, PriorityClass]:
        out: dict[str, PriorityClass] = {}
        for raw in self.store.list("scheduling.k8s.io/priorityclasses").items:
            try:
                pc = PriorityClass.from_dict(raw)
            except DecodeError:
                continue
            out[pc.name] = pc
        return out

    @staticmethod
    def _ns(res: Resource, namespace: str | None) -> str:
        return (namespace or "default") if res.namespaced else ""

    def view(self, res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        """A stored object as the REST resource ``res`` shows it."""
        return self.strategy(res).from_storage(obj)

    def _error(self, exc: StoreError, res: Resource, name: str) -> E.ApiError:
        return E.from_store_error(exc, res.plural, res.group, name)

    def _check_body(self, res: Resource, obj: Any, namespace: str, name: str | None,
                    owned: bool = False, status_only: bool = False) -> dict[str, Any]:
        """The body checked and normalised; a copy unless ``owned`` (a request body just decoded).
        ``status_only``: a status write keeps only the body's status and resourceVersion
        (Strategy.prepare_update), so only those and the top-level metadata are copied."""
        if not isinstance(obj, dict):
            raise E.bad_request(f"the body of the request must be a {res.kind} object")
        kind, api = obj.get("kind"), obj.get("apiVersion")
        if kind and kind != res.kind:
            raise E.bad_request(f'{kind} in version "{api or ""}" cannot be handled as a {res.kind}: '
                                f'no kind "{kind}" is registered for version "{res.api_version}"')
        if api and api != res.api_version:
            raise E.bad_request(f"the API version in the data ({api}) does not match the expected "
                                f"API version ({res.api_version})")
        try:
            obj = check_object(obj, res.kind, res.api_version)  # kube-apiserver's decoding into the Go type: 400
        except DecodeError as exc:
            raise E.bad_request(f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
                                f"{exc.message}") from None
        if status_only and not owned and isinstance(obj.get("metadata"), dict):
            obj = {**obj, "metadata": dict(obj["metadata"])}
            if "status" in obj:
                obj["status"] = copy.deepcopy(obj["status"])
        elif not owned:
            obj = copy.deepcopy(obj)
        obj["kind"], obj["apiVersion"] = res.kind, res.api_version
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise E.bad_request("metadata must be an object")
        if res.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and body_ns != namespace:
                raise E.bad_request("the namespace of the provided object does not match the "
                                    "namespace sent on the request")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if name is not None and meta.get("name") and meta["name"] != name:
            raise E.bad_request(f"the name of the object ({meta['name']}) does not match the name on "
                                f"the URL ({name})")
        if name is not None:
            meta["name"] = name
        for k in ("selfLink", "managedFields"):
            meta.pop(k, None)
        out: dict[str, Any] = obj
        return out

    def _validate(self, res: Resource, strategy: Strategy, obj: dict[str, Any], ctx: Context,
                  old: dict[str, Any] | None = None) -> None:
        causes = validate_metadata(obj, strategy.name_rule, namespaced=res.namespaced) if old is None else []
        name = str((obj.get("metadata") or {}).get("name") or "")
        try:
            if not causes:
                causes += strategy.validate(obj, ctx)
            if old is not None and not causes:
                causes += strategy.validate_update(obj, old, ctx)
        except Admission as exc:  # an admission plugin's refusal found while validating: 403
            raise E.forbidden(res.plural, res.group, name, exc.message) from None
        if causes:
            raise E.invalid(res.kind, res.group, name, causes)

    # -- reads ----------------------------------------------------------------------------
    def get(self, res: Resource | str, namespace: str | None, name: str) -> dict[str, Any]:
        res = self.resource(res)
        try:
            return self.view(res, self.store.get(res.storage, self._ns(res, namespace), name))
        except StoreError as exc:
            raise self._error(exc, res, name) from None

    def list(self, res: Resource | str, namespace: str | None = None, *, label_selector: str = "",
             field_selector: str = "", limit: int = 0, continue_: str = "",
             at_rv: int | None = None) -> dict[str, Any]:
        """A ``<Kind>List``; ``namespace`` None or "" lists every namespace. Pages after the
        first are served as of the first page's revision, and ``at_rv`` (a
        ``resourceVersionMatch=Exact`` list) as of that revision (:mod:`.pastlist`)."""
        res = self.resource(res)
        strategy = self.strategy(res)
        pred = predicate(res, label_selector, field_selector)
        ns = namespace if res.namespaced and namespace else None
        after, token_rv = None, None
        if continue_:
            token_rv, after = decode_continue(continue_)
            if token_rv < self.store.compacted_rv:
                raise E.gone("The provided continue parameter is too old to display a consistent list "
                             "result. You can start a new list without the continue parameter.")
        view_pred = None if pred is None else (lambda o: pred(strategy.from_storage(o)))
        at = token_rv if token_rv is not None else at_rv
        try:
            page = (self.store.list(res.storage, ns, after=after, limit=max(0, limit), predicate=view_pred)
                    if at is None else list_at(self.store, res.storage, ns, at, after=after, limit=max(0, limit),
                                               predicate=view_pred))
        except store_errors.Expired:
            if token_rv is not None:
                raise E.gone("The provided continue parameter is too old to display a consistent list result. "
                             "You can start a new list without the continue parameter.") from None
            raise E.gone(f"too old resource version: {at_rv} ({self.store.compacted_rv + 1})") from None
        rv = page.rv if at is None else at
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if page.next_key is not None:
            meta["continue"] = encode_continue(rv, page.next_key)
        return {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": meta,
                "items": [strategy.from_storage(o) for o in page.items]}

    # -- create ---------------------------------------------------------------------------
    def create(self, res: Resource | str, namespace: str | None, obj: Any, *,
               dry_run: bool = False, field_manager: str | None = None,
               managed: Any = None, owned: bool = False) -> dict[str, Any]:
        """Create ``obj``; its managedFields are ``managed`` (create-on-apply) or an Update by
        ``field_manager`` (None: not attributed). ``owned``: ``obj`` is handed over, not copied."""
        res = self.resource(res)
        ns = self._ns(res, namespace)
        strategy = self.strategy(res)
        obj = strategy.to_storage(self._check_body(res, obj, ns, None, owned))
        meta = obj["metadata"]
        base = meta.get("generateName") if not meta.get("name") else None
        if base is not None and not isinstance(base, str):
            raise E.invalid(res.kind, res.group, "", [("FieldValueInvalid", "metadata.generateName",
                                                       "must be a string")])
        ctx = self.context()
        for attempt in range(_MAX_GENERATE_ATTEMPTS):
            if base:
                meta["name"] = generate_name(base, uuid.uuid4().hex)
            # a pristine copy only when a generated name may need another attempt
            candidate = copy.deepcopy(obj) if base else obj
            self._prepare_create(res, strategy, candidate, ctx, field_manager, managed)
            try:
                return self.view(res, self._insert(res, ns, candidate, dry_run))
            except E.ApiError as exc:
                if not (base and exc.reason == "AlreadyExists" and attempt + 1 < _MAX_GENERATE_ATTEMPTS):
                    raise
        raise AssertionError("unreachable")

    def _prepare_create(self, res: Resource, strategy: Strategy, obj: dict[str, Any], ctx: Context,
                        field_manager: str | None = None, managed: Any = None) -> None:
        meta = obj["metadata"]
        for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(k, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = ctx.timestamp()
        if strategy.tracks_generation:
            meta["generation"] = 1
        try:
            strategy.prepare_create(obj, ctx)
        except Admission as exc:
            raise E.forbidden(res.plural, res.group, str(meta.get("name") or ""), exc.message) from None
        except DecodeError as exc:
            raise E.invalid(res.kind, res.group, str(meta.get("name") or ""),
                            [decode_cause(exc, obj)]) from None
        self._validate(res, strategy, obj, ctx)
        if managed is not None:
            meta["managedFields"] = managed
        else:
            track_update(None, obj, field_manager, res.api_version, "", res.has_status, ctx.timestamp(),
                         definition_for(res.group, res.version, res.kind))

    def _insert(self, res: Resource, ns: str, obj: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        try:
            with self.store.txn() as tx:
                ns_obj = tx.get("core/namespaces", "", ns) if res.namespaced else None
                if res.namespaced and ns_obj is None:
                    if not self.autoprovision_namespaces:
                        raise E.not_found("namespaces", "", ns)
                    nsobj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                    self._prepare_create(self.table["namespaces"], self.strategy(self.table["namespaces"]),
                                         nsobj, self.context())
                    if not dry_run:
                        tx.create("core/namespaces", "", ns, nsobj)
                    ns_obj = tx.get("core/namespaces", "", ns)
                if res.namespaced:
                    ns_obj = ns_obj or {}
                    if (ns_obj.get("metadata") or {}).get("deletionTimestamp"):
                        raise E.forbidden(res.plural, res.group, name, f"unable to create new content in "
                                          f"namespace {ns} because it is being terminated")
                out = tx.create(res.storage, ns, name, obj)
                if dry_run:
                    raise DryRun(out)
                return out
        except DryRun as d:
            return d.obj
        except StoreError as exc:
            raise self._error(exc, res, name) from None

    # -- update and patch -----------------------------------------------------------------
    def update(self, res: Resource | str, namespace: str | None, name: str, obj: Any, *,
               subresource: str = "", dry_run: bool = False, field_manager: str | None = None,
               owned: bool = False) -> dict[str, Any]:
        """``owned``: ``obj`` is handed over, not copied (:mod:`.batchwrite`)."""
        res = self.resource(res)
        ns = self._ns(res, namespace)
        strategy = self.strategy(res)
        body = strategy.to_storage(self._check_body(res, obj, ns, name, owned, status_only=subresource == "status"))
        want_rv = parse_rv(body["metadata"].get("resourceVersion"))

        def change(cur: dict[str, Any]) -> dict[str, Any]:
            if want_rv is not None and want_rv != parse_rv(cur["metadata"].get("resourceVersion")):
                raise store_errors.Conflict(res.storage, ns, name, "the object has been modified; please "
                                            "apply your changes to the latest version and try again")
            return body  # our own copy (_check_body), and guaranteed_update runs this once

        return self._rmw(res, ns, name, change, subresource, dry_run, field_manager)

    def patch(self, res: Resource | str, namespace: str | None, name: str, content_type: str,
              patch: Any, *, subresource: str = "", dry_run: bool = False, field_manager: str | None = None,
              force: bool = False) -> dict[str, Any]:
        from kubesched.server.apiserver.registry.patch import APPLY, apply_patch

        res = self.resource(res)
        if content_type.split(";")[0].strip().lower() == APPLY:
            from kubesched.server.apiserver.apply.request import server_side_apply

            return server_side_apply(self, res, namespace, name, patch, field_manager or "", force,
                                     subresource, dry_run)[0]
        ns = self._ns(res, namespace)
        strategy = self.strategy(res)

        def change(cur: dict[str, Any]) -> dict[str, Any]:
            patched = apply_patch(content_type, strategy.from_storage(copy.deepcopy(cur)), patch)
            meta = patched.get("metadata")
            if not isinstance(meta, dict):
                raise E.bad_request("metadata must be an object")
            cur_rv = cur["metadata"].get("resourceVersion")
            if meta.get("resourceVersion") not in (None, "", cur_rv):
                raise store_errors.Conflict(res.storage, ns, name, "the object has been modified; please "
                                            "apply your changes to the latest version and try again")
            meta["resourceVersion"] = cur_rv
            _check_patched(res, patched)
            return strategy.to_storage(self._check_body(res, patched, ns, name))

        return self._rmw(res, ns, name, change, subresource, dry_run, field_manager)

    def _rmw(self, res: Resource, ns: str, name: str, change: Callable[[dict[str, Any]], dict[str, Any]],
             subresource: str, dry_run: bool, field_manager: str | None = None,
             managed: Callable[[], Any] | None = None) -> dict[str, Any]:
        """Read, change, prepare, validate and write one object under the write lock; its managedFields
        come from ``managed`` (an apply) or from tracking an Update by ``field_manager``."""
        strategy = self.strategy(res)
        ctx = self.context()

        def fn(cur: dict[str, Any], tx: Txn) -> dict[str, Any] | None:
            new = change(cur)
            try:
                new = strategy.prepare_update(new, cur, subresource)
            except DecodeError as exc:
                raise E.invalid(res.kind, res.group, name, [decode_cause(exc, new)]) from None
            self._keep_immutable_meta(res, new, cur)
            if subresource == "" and strategy.tracks_generation and strategy.bumps_generation(new, cur):
                new["metadata"]["generation"] = int(cur["metadata"].get("generation") or 1) + 1
            self._validate(res, strategy, new, ctx, old=cur)
            if managed is not None:
                new["metadata"]["managedFields"] = managed()
            else:
                track_update(cur, new, field_manager, res.api_version, subresource, res.has_status,
                             ctx.timestamp(), definition_for(res.group, res.version, res.kind))
            if _same(new, cur):
                if dry_run:
                    raise DryRun(cur)
                return None
            if dry_run:
                raise DryRun(new)
            return write_update(self, tx, res, new, cur)

        try:
            return self.view(res, self.store.guaranteed_update(res.storage, ns, name, fn))
        except DryRun as d:
            return self.view(res, d.obj)
        except StoreError as exc:
            raise self._error(exc, res, name) from None

    def _keep_immutable_meta(self, res: Resource, new: dict[str, Any], cur: dict[str, Any]) -> None:
        meta, old = new["metadata"], cur["metadata"]
        if meta.get("uid") and meta["uid"] != old.get("uid"):
            raise E.invalid(res.kind, res.group, str(old.get("name")), [
                ("FieldValueInvalid", "metadata.uid", f'Invalid value: "{meta["uid"]}": field is immutable')])
        for k in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                  "namespace", "name"):
            if k in old:
                meta[k] = old[k]
            else:
                meta.pop(k, None)
        if old.get("deletionTimestamp") and len(meta.get("finalizers") or []) > len(old.get("finalizers") or []):
            raise E.invalid(res.kind, res.group, str(old.get("name")), [
                ("FieldValueForbidden", "metadata.finalizers",
                 "Forbidden: no new finalizers can be added if the object is being deleted")])

    # -- delete -----------------------------------------------------------------------------
    def delete(self, res: Resource | str, namespace: str | None, name: str,
               options: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], bool]:
        """Delete (gracefully where upstream does); return (object, removed now)."""
        return delete_one(self, self.resource(res), self._ns(self.resource(res), namespace), name,
                          dict(options or {}))

    def delete_collection(self, res: Resource | str, namespace: str | None, *, label_selector: str = "",
                          field_selector: str = "", options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        res = self.resource(res)
        items = self.list(res, namespace, label_selector=label_selector, field_selector=field_selector)
        deleted = []
        for item in items["items"]:
            meta = item.get("metadata") or {}
            try:
                obj, _ = self.delete(res, meta.get("namespace"), meta.get("name", ""), options)
                deleted.append(obj)
            except E.ApiError as exc:
                if exc.code != 404:
                    raise
        return {"kind": res.list_kind, "apiVersion": res.api_version,
                "metadata": {"resourceVersion": str(self.store.rv)}, "items": deleted}

    # -- bootstrapping ----------------------------------------------------------------------
    def bootstrap(self) -> None:
        """Create the namespaces every cluster has, if absent."""
        for ns in SYSTEM_NAMESPACES:
            try:
                self.get("namespaces", None, ns)
            except E.ApiError:
                self.create("namespaces", None, {"metadata": {"name": ns}})


def _check_patched(res: Resource, patched: dict[str, Any]) -> None:
    """A patched object that does not decode: 422 on the field ``patch`` with the patched
    object as the value, as upstream's patch handler answers (handlers/patch.go)."""
    try:
        check_object(patched, res.kind, res.api_version)
    except DecodeError as exc:
        shown = go_quote(json.dumps(patched, separators=(",", ":"), default=str))
        cause = ("FieldValueInvalid", "patch", f"Invalid value: {shown}: {exc.message}")
        raise E.invalid("", "", "", [cause]) from None


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    ma = {k: v for k, v in a.get("metadata", {}).items() if k != "resourceVersion"}
    mb = {k: v for k, v in b.get("metadata", {}).items() if k != "resourceVersion"}
    return ma == mb and {k: v for k, v in a.items() if k != "metadata"} == \
        {k: v for k, v in b.items() if k != "metadata"}
