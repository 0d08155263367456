"""The request object of the ``/api`` hot path: Starlette's ``Request`` with headers and
query parameters looked up in plain dicts.

Why this exists: every write reads a handful of headers (``accept``, ``content-type``,
``content-length``, ``user-agent``) and query parameters (``dryRun``, ``fieldManager``,
``fieldValidation``, ...). Starlette's ``Headers.get`` goes through ``Mapping.get`` and
``__getitem__``, which lower-cases and encodes the key and scans the raw header list on
every call; ``QueryParams`` parses the query string with ``urllib`` even when it is empty;
and ``request.url`` builds a whole ``URL`` (host header parsing included) where only the
path is read. Together that was ~10% of the API server's CPU in a burst of creates.

:class:`ApiRequest` answers the same questions:

* a header is the *first* value sent under its (case-insensitive) name, as
  ``Headers.__getitem__`` finds it; ``getlist`` and the other methods are Starlette's own;
* the query parameters are the request's one parse (:func:`.authz.requestinfo.query_of`):
  a parameter is the *first* value of its name, as Go's ``url.Values.Get`` and the
  authorizer read it, so a handler never serves another value than the one authorized;
* :func:`url_path` is ``request.url.path`` (the scope's path with ``?``, ``#`` and ``\\``
  escaped as ``URL`` escapes them) without building the URL.
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from kubesched.server.apiserver.authz.requestinfo import query_of

_MISSING: Any = object()


class DictHeaders(Headers):
    """Starlette ``Headers`` whose lookups by name are one dict lookup."""

    def __init__(self, scope: Scope) -> None:
        super().__init__(scope=scope)
        first: dict[str, str] = {}
        for key, value in self._list:  # names as sent (uvicorn lower-cases them), as Headers compares
            name = key.decode("latin-1")
            if name not in first:
                first[name] = value.decode("latin-1")
        self._first = first

    def get(self, key: str, default: Any = None) -> Any:
        return self._first.get(key.lower(), default)

    def __getitem__(self, key: str) -> str:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return str(value)

    def __contains__(self, key: Any) -> bool:
        return isinstance(key, str) and self.get(key, _MISSING) is not _MISSING


class ApiRequest(Request):
    """A ``Request`` with :class:`DictHeaders` and the query parameters of the request's one parse."""

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        super().__init__(scope, receive, send)
        self._headers = DictHeaders(scope)

    @property
    def query_params(self) -> QueryParams:
        return query_of(self.scope)


def url_path(request: Request) -> str:
    """``request.url.path``, without building the URL."""
    path: str = request.scope["path"]
    if "?" in path or "#" in path or "\\" in path:
        path = path.replace("?", "%3F").replace("#", "%23").replace("\\", "%5C")
    return path
