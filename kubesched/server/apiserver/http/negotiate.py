"""Choosing the response's media type from ``Accept``, as kube-apiserver's negotiation does
for built-in kinds: protobuf when the client lists it first and the object has a complete
field table (:mod:`.protobuf_encode`), JSON when the client accepts JSON, else 406.

client-go sends ``application/vnd.kubernetes.protobuf, application/json``, so an object
the table cannot express still reaches it in JSON; a client that accepts only protobuf gets
upstream's ``406 NotAcceptable`` ("only the following media types are accepted: ...") for
such an object, as it does from kube-apiserver for a kind with no protobuf form (CRDs).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.protobuf.decode import MEDIA_TYPE
from kubesched.server.apiserver.protobuf.encode import CannotEncode, encode, prefers_protobuf
from kubesched.server.store import dumpb

JSON_RANGES = ("application/json", "application/*", "*/*", "application/yaml")


def accepts_json(accept: str) -> bool:
    """Whether any media range of ``Accept`` (or an absent header) admits a JSON answer."""
    ranges = [r.split(";")[0].strip().lower() for r in accept.split(",") if r.strip()]
    return not ranges or any(r in JSON_RANGES for r in ranges)


def not_acceptable() -> E.ApiError:
    return E.ApiError(406, "NotAcceptable",
                      "only the following media types are accepted: application/json, application/yaml")


def respond(accept: str, obj: Any, code: int = 200) -> Response:
    """``obj`` in the form the client asked for first among those the server can give."""
    if prefers_protobuf(accept) and isinstance(obj, dict):
        try:
            return Response(encode(obj), status_code=code, media_type=MEDIA_TYPE)
        except CannotEncode:
            if not accepts_json(accept):
                raise not_acceptable() from None
    return Response(dumpb(obj), status_code=code, media_type="application/json")
