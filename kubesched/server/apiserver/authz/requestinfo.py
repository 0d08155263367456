"""An HTTP request as authorization attributes, as upstream's ``RequestInfoFactory``
(``k8s.io/apiserver/pkg/endpoints/request/requestinfo.go``) reads it.

* ``/api/<version>/...`` and ``/apis/<group>/<version>/...`` are resource requests;
  everything else (``/api``, ``/apis/<group>``, ``/version``, ``/metrics``, ...) is a
  non-resource request whose verb is the lower-cased HTTP method;
* ``.../watch/...`` (the legacy watch prefix) makes the verb ``watch``;
* ``namespaces/<ns>/<resource>...`` names the namespace; ``namespaces/<ns>/status``
  and ``/finalize`` are subresources of the namespace itself;
* GET is ``get`` (with a name) or ``list`` (``watch`` with ``watch=true|1``); POST
  ``create``, PUT ``update``, PATCH ``patch``, DELETE ``delete`` or ``deletecollection``;
* a list or watch with ``fieldSelector=metadata.name=<n>`` carries the name ``n``, so a
  ``resourceNames`` rule can allow it.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from kubesched.server.apiserver.authz.rbac import Attributes

_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                 "DELETE": "delete"}
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


def request_attributes(user: str, groups: tuple[str, ...], method: str, path: str,
                       query: str) -> Attributes:
    parts = [p for p in path.split("/") if p]
    non_resource = Attributes(user, groups, method.lower(), False, path=path)
    if not parts or parts[0] not in ("api", "apis"):
        return non_resource
    if parts[0] == "api":
        if len(parts) < 2:
            return non_resource
        group, rest = "", parts[2:]
    else:
        if len(parts) < 3:
            return non_resource
        group, rest = parts[1], parts[3:]
    if not rest:
        return non_resource  # the group-version's discovery document
    verb = _METHOD_VERBS.get(method, method.lower())
    if rest[0] == "watch":
        rest, verb = rest[1:], "watch"
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    q = parse_qs(query)
    if not name and verb == "get":
        verb = "list"
    if not name and verb == "delete":
        verb = "deletecollection"
    if verb == "list" and (q.get("watch") or [""])[0].lower() in ("true", "1"):
        verb = "watch"
    if verb in ("list", "watch") and not name:
        for sel in (q.get("fieldSelector") or [""])[0].split(","):
            key, eq, value = sel.partition("=")
            if eq and key.strip() == "metadata.name":
                name = value.lstrip("=").strip()
    return Attributes(user, groups, verb, True, namespace=namespace, api_group=group, resource=resource,
                      subresource=subresource, name=name, path=path)
