"""The managed-fields entries of an object and the two operations that change them.

structured-merge-diff's ``merge/update.go``, in our words:

* **Update** (create, update, non-apply patch by ``manager``): the fields the write added
  or changed become the manager's; other managers lose them (an update never conflicts);
  removed fields leave every set.
* **Apply** (``application/apply-patch+yaml``): the applied configuration is merged into
  the live object; the manager's set becomes exactly the applied fields; fields it applied
  before and applies no more are removed from the object unless another manager owns them
  (or a field under them); fields the apply changes that other managers own are
  conflicts (409) unless ``force``, which takes them over.

Fields nobody owns on purpose are left out of every set, as upstream's field manager
does: ``apiVersion``, ``kind``, the identity and bookkeeping of ``metadata``, and
``status`` when written through the main resource (or ``spec`` through ``/status``).
An entry's ``time`` changes only when its set does, so a repeated apply is a no-op.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubesched.server.apiserver.apply.fieldpath import (Path, flatten, field_set, from_fields_v1, path_string,
                                                         to_fields_v1, with_descendants_owned)
from kubesched.server.apiserver.apply.merge import merge, remove
from kubesched.server.apiserver.errors import ApiError

_META_IGNORED = ("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "selfLink",
                 "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds", "generateName")


@dataclasses.dataclass
class Entry:
    manager: str
    operation: str
    api_version: str
    time: str
    subresource: str
    fields: set[Path]

    def key(self) -> tuple[str, str, str]:
        return self.manager, self.operation, self.subresource

    def encode(self) -> dict[str, Any]:
        out: dict[str, Any] = {"manager": self.manager, "operation": self.operation,
                               "apiVersion": self.api_version, "time": self.time,
                               "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(self.fields)}
        if self.subresource:
            out["subresource"] = self.subresource
        return out

    def printed(self) -> str:
        if self.operation == "Update":
            return f'"{self.manager}" using {self.api_version}'
        return f'"{self.manager}"'


def decode(obj: dict[str, Any] | None) -> list[Entry]:
    """The entries of ``obj``'s ``metadata.managedFields``; malformed entries are dropped."""
    raw = ((obj or {}).get("metadata") or {}).get("managedFields")
    out: list[Entry] = []
    for e in raw if isinstance(raw, list) else []:
        if not isinstance(e, dict) or not isinstance(e.get("manager"), str):
            continue
        try:
            fields = from_fields_v1(e.get("fieldsV1") or {})
        except ValueError:
            continue
        out.append(Entry(e["manager"], str(e.get("operation") or "Update"), str(e.get("apiVersion") or ""),
                         str(e.get("time") or ""), str(e.get("subresource") or ""), fields))
    return out


def _owned_view(obj: dict[str, Any] | None, subresource: str, has_status: bool) -> dict[str, Any]:
    out = {k: v for k, v in (obj or {}).items() if k not in ("apiVersion", "kind")}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: v for k, v in meta.items() if k not in _META_IGNORED}
        if not out["metadata"]:
            del out["metadata"]
    if subresource == "status":
        out.pop("spec", None)
    elif has_status:
        out.pop("status", None)
    return out


def _compare(old: dict[str, Any], new: dict[str, Any], root: str) -> tuple[set[Path], set[Path], set[Path]]:
    """(added, modified, removed) member paths from ``old`` to ``new``."""
    a = {p: (v, leaf) for p, v, leaf in flatten(old, (), (root,))}
    b = {p: (v, leaf) for p, v, leaf in flatten(new, (), (root,))}
    added = b.keys() - a.keys()
    removed = a.keys() - b.keys()
    modified = {p for p in a.keys() & b.keys() if b[p][1] and a[p][0] != b[p][0]}
    return set(added), modified, set(removed)


def _finish(entries: list[Entry], before: dict[tuple[str, str, str], Entry], now: str) -> list[dict[str, Any]]:
    out = []
    for e in entries:
        if not e.fields:
            continue
        old = before.get(e.key())
        if old is None or old.fields != e.fields or old.api_version != e.api_version or not e.time:
            e.time = now
        out.append(e.encode())
    return out


def track_update(cur: dict[str, Any] | None, new: dict[str, Any], manager: str | None, api_version: str,
                 subresource: str, has_status: bool, now: str, root: str = "") -> None:
    """Set ``new``'s managedFields after an Update by ``manager``. None: a component of this
    server (controllers, simulated nodes) whose writes are not attributed: the entries are
    carried over unchanged, which keeps those frequent writes cheap."""
    if manager is None:
        carried = (cur or {}).get("metadata", {}).get("managedFields")
        if carried:
            new["metadata"]["managedFields"] = carried
        else:
            new.get("metadata", {}).pop("managedFields", None)
        return
    if cur is None:  # a create: every owned field is the manager's, in one new entry
        fields = field_set(_owned_view(new, subresource, has_status), root)
        if fields:
            new["metadata"]["managedFields"] = [Entry(manager, "Update", api_version, now, subresource,
                                                      fields).encode()]
        else:
            new["metadata"].pop("managedFields", None)
        return
    entries = decode(cur)
    before = {e.key(): dataclasses.replace(e, fields=set(e.fields)) for e in entries}
    old_view, new_view = _owned_view(cur, subresource, has_status), _owned_view(new, subresource, has_status)
    if old_view == new_view and cur is not None:
        new["metadata"]["managedFields"] = (cur.get("metadata") or {}).get("managedFields")
        return
    added, modified, removed = _compare(old_view, new_view, root)
    mine = None
    for e in entries:
        if manager is not None and e.key() == (manager, "Update", subresource):
            mine = e
            continue
        e.fields -= removed
        if manager is not None:
            e.fields -= added | modified
    if manager is not None:
        if mine is None:
            mine = Entry(manager, "Update", api_version, "", subresource, set())
            entries.append(mine)
        mine.fields = (mine.fields - removed) | added | modified
        mine.api_version = api_version
    out = _finish(entries, before, now)
    if out:
        new["metadata"]["managedFields"] = out
    else:
        new["metadata"].pop("managedFields", None)


def _key_field(path: Path) -> bool:
    """Whether ``path`` is a key field of a list item (removed only with its item)."""
    return len(path) >= 2 and path[-2].startswith("k:") and path[-1].startswith("f:") and \
        f'"{path[-1][2:]}":' in path[-2]


def conflict_error(conflicts: list[tuple[Entry, Path]], plural: str, group: str, name: str) -> ApiError:
    """Upstream's 409 for an apply that changes fields other managers own."""
    if len(conflicts) == 1:
        e, p = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {e.printed()}: {path_string(p)}"
    else:
        by: dict[str, list[Path]] = {}
        for e, p in conflicts:
            by.setdefault(e.printed(), []).append(p)
        lines = []
        for who in sorted(by):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {path_string(p)}" for p in sorted(by[who]))
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    details: dict[str, Any] = {"name": name, "kind": plural, "causes": [
        {"reason": "FieldManagerConflict", "message": f"conflict with {e.printed()}", "field": path_string(p)}
        for e, p in conflicts]}
    if group:
        details["group"] = group
    return ApiError(409, "Conflict", message, details)


def apply_to(live: dict[str, Any] | None, config: dict[str, Any], manager: str, force: bool, api_version: str,
             subresource: str, has_status: bool, now: str, what: tuple[str, str, str],
             root: str = "") -> dict[str, Any]:
    """The object an apply of ``config`` by ``manager`` makes of ``live`` (None: absent), with its
    managedFields set; raises the 409 conflict error. ``what``: (plural, group, name) for errors;
    ``root``: the definition name of the kind (its list semantics)."""
    entries = decode(live)
    before = {e.key(): dataclasses.replace(e, fields=set(e.fields)) for e in entries}
    base = {k: v for k, v in (live or {}).items()}
    if isinstance(base.get("metadata"), dict):
        base["metadata"] = {k: v for k, v in base["metadata"].items() if k != "managedFields"}
    merged: dict[str, Any] = merge(base, config, (root,))
    applied = field_set(_owned_view(config, subresource, has_status), root)
    key = (manager, "Apply", subresource)
    mine = next((e for e in entries if e.key() == key), None)
    others = [e for e in entries if e.key() != key]
    if mine is not None:
        owned: set[Path] = set(applied)
        for e in others:
            owned |= e.fields
        gone = mine.fields - owned
        gone -= with_descendants_owned(gone, owned)
        gone = {p for p in gone if not _key_field(p)}
        for p in sorted(gone, key=len, reverse=True):
            remove(merged, p, root)
    added, modified, removed = _compare(_owned_view(base, subresource, has_status),
                                        _owned_view(merged, subresource, has_status), root)
    changed = added | modified
    conflicts = [(e, p) for e in others for p in sorted(e.fields & changed)]
    if conflicts and not force:
        raise conflict_error(conflicts, *what)
    for e in others:
        e.fields -= removed
        if force:
            e.fields -= changed
    if mine is None:
        mine = Entry(manager, "Apply", api_version, "", subresource, set())
        entries.append(mine)
    mine.fields, mine.api_version = applied, api_version
    merged.setdefault("metadata", {})["managedFields"] = _finish(entries, before, now)
    return merged
