"""What a request addresses (:class:`Target`) and the query-parameter readers the REST
handlers (:mod:`.handlers`) and the watch endpoint (:mod:`.watch`) share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.registry.resources import Resource


@dataclass(frozen=True, slots=True)
class Target:
    resource: Resource
    namespace: str | None
    name: str | None
    subresource: str


def _flag(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


def _int(q: Any, key: str) -> int | None:
    v = q.get(key)
    if v in (None, ""):
        return None
    try:
        return int(v)
    except ValueError:
        raise E.bad_request(f"invalid {key}: {v!r}") from None


def wants_table(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "as=Table" in accept.replace(" ", "")
