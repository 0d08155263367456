"""The three patch formats of PATCH requests, applied to plain JSON objects.

* ``application/merge-patch+json``: RFC 7386 (``null`` deletes, maps merge, lists replace);
* ``application/json-patch+json``: RFC 6902 operations on RFC 6901 pointers;
* ``application/strategic-merge-patch+json``: apimachinery's strategic merge patch for
  the built-in types this server serves. Lists with a ``patchMergeKey`` merge element by
  element (containers by ``name``, conditions by ``type``, ...), ``finalizers`` merge as a
  set, every other list is replaced; the directives ``$patch`` (replace / delete / merge),
  ``$retainKeys``, ``$setElementOrder/<list>`` and ``$deleteFromPrimitiveList/<list>``
  are honoured. That covers what kubectl sends (``apply``, ``cordon``, ``taint``,
  ``label``, ``annotate``, ``scale``, ``set image``, ``edit``).

A patch that cannot be applied raises a 422 :class:`ApiError` (upstream's response).
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.api.jsontext import dumpb
from kubesched.server.apiserver.errors import ApiError, bad_request, unsupported_media_type

MERGE = "application/merge-patch+json"
JSON = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"

# patchMergeKey of the list fields of the served types (k8s.io/api struct tags).
MERGE_KEYS: dict[str, str] = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "volumes": "name", "env": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
    "imagePullSecrets": "name", "conditions": "type", "addresses": "type",
    "ownerReferences": "uid", "hostAliases": "ip", "resourceClaims": "name",
    "schedulingGates": "name", "topologySpreadConstraints": "topologyKey",
    "podIPs": "ip", "hostIPs": "ip",
}
PRIMITIVE_MERGE = frozenset({"finalizers"})
# apiserver handlers/patch.go maxJSONPatchOperations; server.Config JSONPatchMaxCopyBytes
# (json-patch's AccumulatedCopySizeLimit), both kube-apiserver's defaults
MAX_JSON_PATCH_OPERATIONS = 10_000
MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024
_CONTAINER_LISTS = frozenset({"containers", "initContainers", "ephemeralContainers"})


def _invalid(message: str) -> ApiError:
    return ApiError(422, "Invalid", message)


def apply_patch(content_type: str, original: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply ``patch`` (already decoded from JSON) of the given media type."""
    ct = content_type.split(";")[0].strip().lower()
    if ct == MERGE:
        if not isinstance(patch, dict):
            raise bad_request("merge patch must be a JSON object")
        out = merge_patch(original, patch)
    elif ct == JSON:
        if not isinstance(patch, list):
            raise bad_request("json patch must be a JSON array of operations")
        out = json_patch(original, patch)
    elif ct == STRATEGIC:
        if not isinstance(patch, dict):
            raise bad_request("strategic merge patch must be a JSON object")
        out = strategic_merge(original, patch, ())
    else:
        raise unsupported_media_type(content_type)
    if not isinstance(out, dict):
        raise _invalid("the patched object is not a JSON object")
    return out


# -- RFC 7386 -----------------------------------------------------------------------------
def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# -- RFC 6902 -----------------------------------------------------------------------------
def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise _invalid(f"invalid JSON pointer: {path!r}")
    if path == "":
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], path: str) -> tuple[Any, str]:
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise _invalid(f"jsonpatch: path {path!r} not found")
    if not parts:
        raise _invalid("jsonpatch: operations on the whole document are not supported")
    return cur, parts[-1]


def _index(container: list[Any], key: str, path: str, *, adding: bool) -> int:
    if adding and key == "-":
        return len(container)
    if not key.isdigit():
        raise _invalid(f"jsonpatch: invalid array index {key!r} in {path!r}")
    i = int(key)
    if i > len(container) or (not adding and i == len(container)):
        raise _invalid(f"jsonpatch: array index {i} out of bounds in {path!r}")
    return i


def _get(doc: Any, path: str) -> Any:
    parent, key = _parent(doc, _pointer(path), path)
    if isinstance(parent, dict):
        if key not in parent:
            raise _invalid(f"jsonpatch: path {path!r} not found")
        return parent[key]
    if isinstance(parent, list):
        return parent[_index(parent, key, path, adding=False)]
    raise _invalid(f"jsonpatch: path {path!r} not found")


def _add(doc: Any, path: str, value: Any) -> None:
    parent, key = _parent(doc, _pointer(path), path)
    if isinstance(parent, dict):
        parent[key] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, key, path, adding=True), value)
    else:
        raise _invalid(f"jsonpatch: cannot add at {path!r}")


def _remove(doc: Any, path: str) -> Any:
    parent, key = _parent(doc, _pointer(path), path)
    if isinstance(parent, dict):
        if key not in parent:
            raise _invalid(f"jsonpatch: cannot remove missing path {path!r}")
        return parent.pop(key)
    if isinstance(parent, list):
        return parent.pop(_index(parent, key, path, adding=False))
    raise _invalid(f"jsonpatch: cannot remove {path!r}")


def json_patch(original: dict[str, Any], ops: list[Any]) -> dict[str, Any]:
    """RFC 6902, bounded as kube-apiserver bounds it: at most :data:`MAX_JSON_PATCH_OPERATIONS`
    operations (413), and ``copy`` may not grow the document by more than
    :data:`MAX_JSON_PATCH_COPY_BYTES` in all (each copy doubling a list would otherwise make
    a few kilobytes of patch a terabyte of document)."""
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise ApiError(413, "RequestEntityTooLarge", "Request entity too large: The allowed maximum operations "
                       f"in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}")
    doc = copy.deepcopy(original)
    copied = 0
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise _invalid(f"jsonpatch: invalid operation {op!r}")
        kind, path = op["op"], op["path"]
        if kind in ("add", "replace", "test") and "value" not in op:
            raise _invalid(f"jsonpatch: {kind} operation on {path!r} has no value")
        if kind == "add":
            _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            _get(doc, path)
            parent, key = _parent(doc, _pointer(path), path)
            if isinstance(parent, list):
                parent[_index(parent, key, path, adding=False)] = copy.deepcopy(op["value"])
            else:
                parent[key] = copy.deepcopy(op["value"])
        elif kind in ("move", "copy"):
            src = op.get("from")
            if not isinstance(src, str):
                raise _invalid(f"jsonpatch: {kind} operation needs 'from'")
            if kind == "move":
                value = _remove(doc, src)
            else:
                value = _get(doc, src)
                copied += len(dumpb(value))  # json-patch counts the JSON of what it copies
                if copied > MAX_JSON_PATCH_COPY_BYTES:
                    raise _invalid("Unable to complete the copy, the accumulated size increase of copy is "
                                   f"{copied}, exceeding the limit {MAX_JSON_PATCH_COPY_BYTES}")
                value = copy.deepcopy(value)
            _add(doc, path, value)
        elif kind == "test":
            if _get(doc, path) != op["value"]:
                raise _invalid(f"jsonpatch: test operation for path {path!r} failed")
        else:
            raise _invalid(f"jsonpatch: unknown operation {kind!r}")
    return doc


# -- strategic merge patch ----------------------------------------------------------------
def _merge_key(path: tuple[str, ...], field: str) -> str | None:
    if field == "ports":
        return "containerPort" if path and path[-1] in _CONTAINER_LISTS else "port"
    return MERGE_KEYS.get(field)


def _strip(value: Any) -> Any:
    """A patch value with its directives removed (when it replaces instead of merging)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items()
                if not k.startswith("$") and v is not None}
    if isinstance(value, list):
        return [_strip(v) for v in value if not (isinstance(v, dict) and v.get("$patch") == "delete")]
    return value


def strategic_merge(original: Any, patch: dict[str, Any], path: tuple[str, ...]) -> Any:
    mode = patch.get("$patch")
    if mode == "replace":
        return _strip(patch)
    if mode == "delete":
        return None
    out = dict(original) if isinstance(original, dict) else {}
    orders: dict[str, list[Any]] = {}
    for k, v in patch.items():
        if k == "$patch":
            continue
        if k == "$retainKeys":
            continue
        if k.startswith("$setElementOrder/"):
            if isinstance(v, list):
                orders[k.split("/", 1)[1]] = v
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            if isinstance(out.get(field), list) and isinstance(v, list):
                out[field] = [x for x in out[field] if x not in v]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            merged = strategic_merge(out.get(k), v, path + (k,))
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        elif isinstance(v, list):
            out[k] = _merge_list(out.get(k), v, path, k)
        else:
            out[k] = v
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    for field, order in orders.items():
        if isinstance(out.get(field), list):
            out[field] = _reorder(out[field], order, _merge_key(path, field))
    return out


def _merge_list(original: Any, patch: list[Any], path: tuple[str, ...], field: str) -> list[Any]:
    orig = list(original) if isinstance(original, list) else []
    if any(isinstance(e, dict) and e.get("$patch") == "replace" for e in patch):
        return [_strip(e) for e in patch if not (isinstance(e, dict) and "$patch" in e)]
    if field in PRIMITIVE_MERGE:
        return orig + [x for x in patch if x not in orig]
    key = _merge_key(path, field)
    if key is None or not all(isinstance(e, dict) for e in patch):
        return [_strip(e) for e in patch]
    out = list(orig)
    for elem in patch:
        kv = elem.get(key)
        idx = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(key) == kv), None)
        if elem.get("$patch") == "delete":
            out = [o for o in out if not (isinstance(o, dict) and o.get(key) == kv)]
        elif idx is None:
            out.append(_strip(elem))
        else:
            out[idx] = strategic_merge(out[idx], elem, path + (field,))
    return out


def _reorder(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    def ident(x: Any) -> Any:
        return x.get(key) if key and isinstance(x, dict) else x

    wanted = [ident(o) for o in order]
    pos = {repr(w): i for i, w in enumerate(wanted)}
    ranked = sorted(enumerate(items), key=lambda p: (pos.get(repr(ident(p[1])), len(pos)), p[0]))
    return [x for _, x in ranked]
