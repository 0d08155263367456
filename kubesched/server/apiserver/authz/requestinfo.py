"""An HTTP request parsed once, as upstream's ``RequestInfoFactory``
(``k8s.io/apiserver/pkg/endpoints/request/requestinfo.go``) parses it, for everything that
reads the request after it: the in-flight limits, authorization, the REST handlers and the
web UI's routes. One parse, so that what is authorized is what is served: a query
parameter given twice (``?watch=false&watch=1``) has one value for all of them.

* Query parameters are Go's ``url.Values``: blank values are kept and a single-valued
  parameter is the *first* value given (``url.Values.Get``, and the conversions of
  ``apimachinery/pkg/runtime/conversion.go`` the handlers' ListOptions go through);
  :class:`Query` answers ``get`` that way, ``getlist`` with every value;
* ``/api/<version>/...`` and ``/apis/<group>/<version>/...`` are resource requests;
  everything else (``/api``, ``/apis/<group>``, ``/version``, ``/metrics``, ...) is a
  non-resource request whose verb is the lower-cased HTTP method;
* ``.../watch/...`` (the legacy watch prefix) makes the verb ``watch``;
* ``namespaces/<ns>/<resource>...`` names the namespace; ``namespaces/<ns>/status``
  and ``/finalize`` are subresources of the namespace itself;
* GET is ``get`` (with a name), else ``watch`` when the first ``watch`` value is anything
  but ``0`` or ``false`` (any case; ``watch=`` too: ``Convert_Slice_string_To_bool``),
  else ``list``; POST ``create``, PUT ``update``, PATCH ``patch``, DELETE ``delete`` or
  ``deletecollection``;
* a list or watch whose (first) ``fieldSelector`` requires ``metadata.name=<n>`` carries
  the name ``n`` (when ``n`` is a valid path segment name), so a ``resourceNames`` rule
  can allow it; the selector is split as the handlers split it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.datastructures import QueryParams
from starlette.types import Scope

from kubesched.server.apiserver.authz.rbac import Attributes
from kubesched.server.apiserver.registry.selectors import exact_match

INFO_KEY = "kubesched.requestinfo"  # in the scope: the one RequestInfo of the request
_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                 "DELETE": "delete"}
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


class Query(QueryParams):
    """Query parameters as Go's ``url.Values``: ``get`` (and ``[]``) is the first value of
    a name, ``getlist`` all of them, blank values kept."""

    def __init__(self, query_string: bytes | str) -> None:
        if query_string:
            super().__init__(query_string)  # parse_qsl(keep_blank_values=True)
            first: dict[str, str] = {}
            for key, value in self._list:
                first.setdefault(key, value)
            self._dict = first
        else:
            self._dict = {}
            self._list = []

    def get(self, key: Any, default: Any = None) -> Any:
        return self._dict.get(key, default)


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What a request asks for (upstream ``request.RequestInfo``), and its query."""

    path: str
    verb: str
    resource_request: bool
    query: Query
    api_group: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    legacy_watch: bool = False  # the verb came from a ``/watch/`` path prefix

    def attributes(self, user: str, groups: tuple[str, ...]) -> Attributes:
        """The authorization attributes of this request made by ``user``."""
        return Attributes(user, groups, self.verb, self.resource_request, namespace=self.namespace,
                          api_group=self.api_group, resource=self.resource, subresource=self.subresource,
                          name=self.name, path=self.path)


def request_info(scope: Scope) -> RequestInfo:
    """The request's RequestInfo, parsed on the first call and kept in the scope."""
    info: RequestInfo | None = scope.get(INFO_KEY)
    if info is None:
        info = parse(scope.get("method", "GET"), scope.get("path", ""), Query(scope.get("query_string", b"")))
        scope[INFO_KEY] = info
    return info


def query_of(scope: Scope) -> Query:
    """The request's query parameters, from its one parse."""
    return request_info(scope).query


def _valid_path_segment(name: str) -> bool:
    """Upstream ``path.IsValidPathSegmentName``."""
    return name not in (".", "..") and "/" not in name and "%" not in name


def parse(method: str, path: str, query: Query) -> RequestInfo:
    parts = [p for p in path.split("/") if p]
    non_resource = RequestInfo(path, method.lower(), False, query)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        if len(parts) < 4:
            return non_resource
        group, rest = parts[1], parts[3:]
    verb = _METHOD_VERBS.get(method, "")
    legacy = rest[0] == "watch"
    if legacy:
        if len(rest) < 2:
            return RequestInfo(path, verb, True, query, api_group=group)
        rest, verb = rest[1:], "watch"
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name and verb == "get":
        watch = query.getlist("watch")
        verb = "watch" if watch and watch[0].lower() not in ("false", "0") else "list"
        selected = exact_match(query.get("fieldSelector") or "", "metadata.name")
        if selected is not None and _valid_path_segment(selected):
            name = selected
    if not name and verb == "delete":
        verb = "deletecollection"
    return RequestInfo(path, verb, True, query, api_group=group, namespace=namespace, resource=resource,
                       subresource=subresource, name=name, legacy_watch=legacy)


def request_attributes(user: str, groups: tuple[str, ...], method: str, path: str, query: str) -> Attributes:
    """The authorization attributes of a request given by its parts."""
    return parse(method, path, Query(query)).attributes(user, groups)
