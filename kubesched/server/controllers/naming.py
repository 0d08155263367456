"""Names the workload controllers generate: pod-template hashes and random pod suffixes.

* ``pod-template-hash``: upstream hashes the pod template with FNV-32a (plus the
  Deployment's ``collisionCount``) and writes the number's decimal digits in a
  vowel-free alphabet (``rand.SafeEncodeString``). Upstream feeds the hash a Go
  structure dump we cannot reproduce byte for byte, so we hash the template's canonical
  JSON instead: same alphabet, same length, same stability (one template, one hash), not
  the same value as a real cluster would compute.
* pod names: ``<replicaset>-<5 characters>`` from the same alphabet, drawn from the
  controller manager's seeded :class:`random.Random` (``--controller-seed``), so a run
  with the same seed and the same requests names its pods the same way.
"""

from __future__ import annotations

import json
import random
from typing import Any

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
HASH_LABEL = "pod-template-hash"

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv32a(data: bytes) -> int:
    h = _FNV_OFFSET
    for b in data:
        h ^= b
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
    return h


def safe_encode(s: str) -> str:
    """``rand.SafeEncodeString``: each byte mapped into :data:`ALPHANUMS`."""
    return "".join(ALPHANUMS[b % len(ALPHANUMS)] for b in s.encode())


def template_hash(template: Any, collision_count: int | None = None) -> str:
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += int(collision_count).to_bytes(4, "little", signed=False)
    return safe_encode(str(fnv32a(data)))


def random_suffix(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice(ALPHANUMS) for _ in range(n))


def without_hash_label(template: Any) -> Any:
    """The template without the ``pod-template-hash`` label (``EqualIgnoreHash``)."""
    if not isinstance(template, dict):
        return template
    out = dict(template)
    md = dict(out.get("metadata") or {})
    labels = {k: v for k, v in (md.get("labels") or {}).items() if k != HASH_LABEL}
    if labels:
        md["labels"] = labels
    else:
        md.pop("labels", None)
    out["metadata"] = md
    return out


def equal_ignore_hash(a: Any, b: Any) -> bool:
    return bool(without_hash_label(a) == without_hash_label(b))
