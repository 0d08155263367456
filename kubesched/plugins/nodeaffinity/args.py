"""``NodeAffinityArgs``: the scheduler-enforced ``addedAffinity`` of a profile, parsed and
validated as upstream's ``ValidateNodeAffinityArgs`` and plugin constructor do.

The required part is ANDed with every pod's own node affinity (a node that fails it is
rejected with "didn't match scheduler-enforced node affinity"); the preferred terms add
their weights to every pod's score. By default there is no added affinity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import SelectorError
from kubesched.api.selectors import NodeSelectorTerm
from kubesched.framework.errors import ProfileError
from kubesched.plugins.nodeaffinity.selector import PreferredTerms, Terms
from kubesched.api.nodeaffinity import FieldError, is_empty_term, term_errors

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    """``added_required`` is None when not set (all nodes pass); ``added_preferred`` is None
    when there are no preferred terms (PreScore may then Skip)."""

    added_required: Terms | None = None
    added_preferred: PreferredTerms | None = None


def _fail(errs: list[FieldError]) -> ProfileError:
    """The first error (upstream lists them all; the profile is refused either way)."""
    field, message = errs[0]
    if len(errs) > 1:
        message += f" (and {len(errs) - 1} more error(s))"
    return ProfileError(message, field=field)


def _term(raw: Mapping[str, Any], path: str, errs: list[FieldError]) -> NodeSelectorTerm | None:
    """Parse one term; its parse errors go to ``errs`` (upstream reports them all)."""
    found = term_errors(raw, path)
    if found:
        errs.extend(found)
        return None
    try:
        return NodeSelectorTerm.parse(raw, path)
    except SelectorError as exc:
        raise ProfileError(exc.message, field=exc.field) from exc


def _required(raw: Any, path: str, errs: list[FieldError]) -> Terms:
    if not isinstance(raw, Mapping):
        raise ProfileError("must be an object", field=path)
    terms = raw.get("nodeSelectorTerms") or []
    if not isinstance(terms, list):
        raise ProfileError("must be a list", field=f"{path}.nodeSelectorTerms")
    parsed = [_term(t, f"{path}.nodeSelectorTerms[{i}]", errs)
              for i, t in enumerate(terms) if not is_empty_term(t)]
    return Terms(tuple(t for t in parsed if t is not None))


def _preferred(raw: Any, path: str, errs: list[FieldError]) -> PreferredTerms | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise ProfileError("must be a list", field=path)
    if not raw:
        return None
    out: list[tuple[int, NodeSelectorTerm]] = []
    for i, t in enumerate(raw):
        if not isinstance(t, Mapping):
            raise ProfileError("must be an object", field=f"{path}[{i}]")
        w = t.get("weight", 0)
        if isinstance(w, bool) or not isinstance(w, int):
            raise ProfileError(f"must be an integer, got {w!r}", field=f"{path}[{i}].weight")
        pref = t.get("preference") or {}
        # Upstream skips (and does not validate) zero-weight and empty terms.
        if w == 0 or is_empty_term(pref):
            continue
        parsed = _term(pref, f"{path}[{i}]", errs)
        if parsed is not None:
            out.append((w, parsed))
    return PreferredTerms(tuple(out))


def parse_args(raw: Mapping[str, Any] | None, path: str) -> NodeAffinityArgs:
    """Parse ``NodeAffinityArgs`` (``raw`` None: the defaults, no added affinity)."""
    if raw is None:
        return NodeAffinityArgs()
    if not isinstance(raw, Mapping):
        raise ProfileError("must be an object", field=path)
    added = raw.get("addedAffinity")
    if added is None:
        return NodeAffinityArgs()
    base = f"{path}.addedAffinity" if path else "addedAffinity"
    if not isinstance(added, Mapping):
        raise ProfileError("must be an object", field=base)
    errs: list[FieldError] = []
    req = added.get(_REQUIRED)
    args = NodeAffinityArgs(
        None if req is None else _required(req, f"{base}.{_REQUIRED}", errs),
        _preferred(added.get(_PREFERRED), f"{base}.{_PREFERRED}", errs),
    )
    if errs:
        raise _fail(errs)
    return args
