"""One attempt of kubesched against one attempt upstream recorded, for the fidelity drivers
(tests/fidelity*/): per-node filter verdicts (plugin and reasons, and the status code where a
corpus records it), per-node weighted scores, the chosen node, the message verbatim (upstream's
DynamicResources PostFilter phrase included), the nominated node and the victims as a set."""

from __future__ import annotations

from typing import Any


def _verdict(v: Any, with_code: bool) -> Any:
    if v == "ok":
        return "ok"
    reasons = tuple(v.get("reasons") or ())
    return (v.get("plugin"), v.get("code"), reasons) if with_code else (v.get("plugin"), reasons)


def compare_attempt(exp: dict[str, Any], got: dict[str, Any], *, with_code: bool = False) -> list[str]:
    """The differences, each ``field[node]: want X got Y``; empty when identical."""
    diffs = []
    for key, norm in (("filter", lambda v: _verdict(v, with_code)), ("scores", lambda v: v)):
        e = {n: norm(v) for n, v in (exp.get(key) or {}).items()}
        g = {n: norm(v) for n, v in (got.get(key) or {}).items()}
        diffs += [f"{key}[{n}]: want {e.get(n)} got {g.get(n)}" for n in sorted(set(e) | set(g))
                  if e.get(n) != g.get(n)]
    for key, want, have in (("chosen", exp.get("chosen"), got.get("chosen")),
                            ("message", exp.get("message"), got.get("message")),
                            ("nominatedNode", exp.get("nominatedNode") or None, got.get("nominatedNode") or None),
                            ("victims", sorted(exp.get("victims") or []), sorted(got.get("victims") or []))):
        if want != have:
            diffs.append(f"{key}: want {want!r} got {have!r}")
    return diffs
