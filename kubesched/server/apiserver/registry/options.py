"""Request options and which verbs a path serves, checked as kube-apiserver checks them
before any object is touched.

* **Verbs per path** (``endpoints/installer.go``): a collection serves list, watch, create
  and deletecollection (where the resource's storage has it; namespaces do not); the
  all-namespaces path of a namespaced resource (``/api/v1/pods``) serves list and watch
  only; an object serves get, update, patch and delete; a subresource serves its own verbs
  (``status``/``scale``: get, update, patch; ``binding``/``eviction``: create). Anything
  else is go-restful's 405.
* **dryRun** (``apis/meta/v1/validation.ValidateDryRun``): only ``All``; anything else is
  a 422 on ``CreateOptions``/``UpdateOptions``/``PatchOptions``/``DeleteOptions``.
* **DeleteOptions** bodies are typed upstream: a field of the wrong JSON type is a 400
  naming it, as Go's decoder names it.
* **ListOptions** (``apis/meta/internalversion/validation.ValidateListOptions``): a
  ``resourceVersionMatch`` needs a ``resourceVersion`` and no ``continue``; a watch takes
  it only with ``sendInitialEvents``, which in turn needs ``NotOlderThan``; a list takes
  no ``sendInitialEvents``. Anything else is a 422 on ``ListOptions``.
* **resourceVersion of a list**: a list must be at least as fresh as the resourceVersion
  it names. The watch cache waits up to 3 s (``blockTimeout``) for a revision it has not
  seen, then answers 504 ``Too large resource version`` (retry after 1 s).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from kubesched.api.schema import json_kind as _json_type
from kubesched.server.apiserver import errors as E
from kubesched.server.store import Store

if TYPE_CHECKING:
    from kubesched.server.apiserver.http.target import Target

FRESHNESS_WAIT = 3.0  # seconds: the watch cache's blockTimeout
_VERB_OF = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_OPTIONS_KIND = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions", "DELETE": "DeleteOptions"}


def check_method(t: "Target", method: str) -> None:
    """405 unless the path ``t`` serves ``method``."""
    res = t.resource
    verb = _VERB_OF.get(method)
    if t.subresource:
        sub = res.subresource(t.subresource)
        ok = sub is not None and verb in sub.verbs
    elif t.name is not None:
        ok = method != "POST" and verb in res.verbs
    elif res.namespaced and t.namespace is None:
        ok = verb == "get"  # list and watch across namespaces; nothing else
    else:
        want = {"get": "list", "create": "create", "delete": "deletecollection"}.get(verb or "")
        ok = want is not None and want in res.verbs
    if not ok:
        raise E.method_not_allowed()


def dry_run(values: list[str], method: str) -> bool:
    """Whether a write is a dry run; 422 for any value but ``All``."""
    if not values:
        return False
    if any(v != "All" for v in values):
        shown = ", ".join(json.dumps(v) for v in values)  # Go's %#v of a []string
        raise E.invalid_options(_OPTIONS_KIND.get(method, "CreateOptions"), "dryRun",
                                f'Unsupported value: []string{{{shown}}}: supported values: "All"')
    return True


_DELETE_FIELDS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "kind": (str, "string"), "apiVersion": (str, "string"),
    "gracePeriodSeconds": (int, "int64"), "propagationPolicy": (str, "v1.DeletionPropagation"),
    "orphanDependents": (bool, "bool"), "preconditions": (dict, "v1.Preconditions"),
    "dryRun": (list, "[]string"), "ignoreStoreReadErrorWithClusterBreakingPotential": (bool, "bool"),
}


def _wrong_type(field: str, value: Any, go_type: str) -> E.ApiError:
    got = _json_type(value)
    return E.bad_request(f"json: cannot unmarshal {got} into Go struct field DeleteOptions.{field} of type {go_type}")


def delete_options(body: Any, query: Any = None) -> dict[str, Any]:
    """DeleteOptions from a request's body (may be None) and query (a Starlette
    ``QueryParams``, or None), type-checked."""
    options: dict[str, Any] = {}
    if body is not None:
        if not isinstance(body, dict):
            raise E.bad_request("the body of a delete request must be a DeleteOptions object")
        for k, v in body.items():
            spec = _DELETE_FIELDS.get(k)
            if spec is None or v is None:
                continue
            want, go_type = spec
            if not isinstance(v, want) or (want is int and isinstance(v, bool)):
                raise _wrong_type(k, v, go_type)
            options[k] = v
        for k, v in (options.get("preconditions") or {}).items():
            if k in ("uid", "resourceVersion") and v is not None and not isinstance(v, str):
                raise _wrong_type(f"preconditions.{k}", v, "string")
        if not all(isinstance(v, str) for v in options.get("dryRun") or []):
            raise _wrong_type("dryRun", options["dryRun"], "[]string")
    if query is not None:
        _query_options(options, query)
    policy = options.get("propagationPolicy")
    if policy not in (None, "Orphan", "Background", "Foreground"):
        raise E.invalid("DeleteOptions", "", "", [("FieldValueNotSupported", "propagationPolicy",
                                                   f'Unsupported value: "{policy}": supported values: '
                                                   '"Foreground", "Background", "Orphan"')])
    if dry_run(list(options.get("dryRun") or []), "DELETE"):
        options["dryRun"] = ["All"]
    else:
        options.pop("dryRun", None)
    return options


def _query_options(options: dict[str, Any], query: Any) -> None:
    grace = query.get("gracePeriodSeconds")
    if grace not in (None, ""):
        try:
            options["gracePeriodSeconds"] = int(grace)
        except ValueError:
            raise E.bad_request(f"invalid gracePeriodSeconds: {grace!r}") from None
    if query.get("propagationPolicy"):
        options["propagationPolicy"] = query["propagationPolicy"]
    if query.getlist("dryRun"):
        options["dryRun"] = query.getlist("dryRun")


def _forbidden(field: str, detail: str) -> tuple[str, str, str]:
    return ("FieldValueForbidden", field, f"Forbidden: {detail}")


def _unsupported(value: str, supported: tuple[str, ...]) -> tuple[str, str, str]:
    shown = ", ".join(json.dumps(v) for v in supported)
    return ("FieldValueNotSupported", "resourceVersionMatch",
            f"Unsupported value: {json.dumps(value)}: supported values: {shown}")


def check_list_options(query: Any, watch: bool) -> None:
    """422 for the combinations of list/watch options kube-apiserver refuses."""
    match, rv = query.get("resourceVersionMatch") or "", query.get("resourceVersion") or ""
    initial, cont = query.get("sendInitialEvents"), query.get("continue") or ""
    errs: list[tuple[str, str, str]] = []
    if watch:
        if initial is not None and match != "NotOlderThan":
            errs.append(_forbidden("resourceVersionMatch",
                                   "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
        if match:
            if initial is None:
                errs.append(_forbidden("resourceVersionMatch",
                                       "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
            if match != "NotOlderThan":
                errs.append(_unsupported(match, ("NotOlderThan",)))
            if cont:
                errs.append(_forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
    else:
        if match:
            if not rv:
                errs.append(_forbidden("resourceVersionMatch",
                                       "resourceVersionMatch is forbidden unless resourceVersion is provided"))
            if cont:
                errs.append(_forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
            if match not in ("Exact", "NotOlderThan"):
                errs.append(_unsupported(match, ("Exact", "NotOlderThan", "")))
            if match == "Exact" and rv == "0":
                errs.append(_forbidden("resourceVersionMatch",
                                       'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
        if initial is not None:
            errs.append(_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    if errs:
        (reason, field, message), more = errs[0], errs[1:]
        raise E.invalid_options("ListOptions", field, message, reason, more)


def requested_rv(value: str | None) -> int:
    """A list's ``resourceVersion`` parameter (0 when unset); 400 when not a revision."""
    rv = (value or "").strip()
    if not rv:
        return 0
    if not rv.isdigit():
        raise E.bad_request(f"invalid resource version: {rv!r}")
    return int(rv)


async def wait_fresh(store: Store, rv: int) -> None:
    """Return once the store has reached revision ``rv``; after :data:`FRESHNESS_WAIT`
    seconds, 504 Too large resource version."""
    if rv <= store.rv:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + FRESHNESS_WAIT
    while store.rv < rv:
        if loop.time() >= deadline:
            raise E.too_large_resource_version(rv, store.rv)
        await asyncio.sleep(0.05)
