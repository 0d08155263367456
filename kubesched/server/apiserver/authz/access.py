"""What the user of a request may do, for routes that answer from more than one object and
so cannot be authorized by their path alone: the web UI's views and writes.

The authorization layer (:mod:`.middleware`) puts an :class:`Access` in every request's
scope (:data:`ACCESS_KEY`). A route that authorizes itself asks it the question the
equivalent API request would ask (``list pods in ns-a``, ``get nodes/n1``) and answers with
upstream's 403 ``Status`` text when the answer is no, or leaves out the rows of namespaces
the user may not read. Under ``AlwaysAllow`` every answer is yes.

The RBAC policy is read from its cache, which may read the store when a role changed:
call :meth:`Access.check` off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.authn.authenticator import ANONYMOUS_USER, UserInfo
from kubesched.server.apiserver.authz.rbac import Attributes, Policy

ACCESS_KEY = "kubesched.access"  # in the scope: the request's Access


def forbidden(attrs: Attributes, reason: str) -> E.ApiError:
    """Upstream's 403 for a refused request (``responsewriters.Forbidden``)."""
    if not attrs.resource_request:
        msg = f'User "{attrs.user}" cannot {attrs.verb} path "{attrs.path}"'
    else:
        resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        where = (f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope")
        msg = (f'User "{attrs.user}" cannot {attrs.verb} resource "{resource}" '
               f'in API group "{attrs.api_group}" {where}')
    if reason:
        msg += ": " + reason
    if not attrs.resource_request or not attrs.resource:
        return E.ApiError(403, "Forbidden", f"forbidden: {msg}", {})
    return E.forbidden(attrs.resource, attrs.api_group, attrs.name, msg)


@dataclass(slots=True)
class Access:
    """The authorizer's answers for one user. ``policy`` is None under ``AlwaysAllow``."""

    user: UserInfo = ANONYMOUS_USER
    policy: Callable[[], Policy] | None = None
    _memo: dict[Attributes, tuple[bool, str]] = field(default_factory=dict)

    @property
    def allows_all(self) -> bool:
        return self.policy is None

    def check(self, verb: str, resource: str, *, namespace: str = "", name: str = "",
              group: str = "") -> tuple[Attributes, bool, str]:
        """May the user ``verb`` ``resource`` (in ``namespace``, named ``name``)?"""
        attrs = Attributes(self.user.name, self.user.groups, verb, True, namespace=namespace,
                           api_group=group, resource=resource, name=name)
        if self.policy is None:
            return attrs, True, ""
        answer = self._memo.get(attrs)
        if answer is None:
            answer = self._memo[attrs] = self.policy().authorize(attrs)
        return attrs, answer[0], answer[1]

    def allowed(self, verb: str, resource: str, *, namespace: str = "", name: str = "",
                group: str = "") -> bool:
        return self.check(verb, resource, namespace=namespace, name=name, group=group)[1]

    def require(self, verb: str, resource: str, *, namespace: str = "", name: str = "",
                group: str = "") -> None:
        """Raise upstream's 403 unless the user may do it."""
        attrs, ok, reason = self.check(verb, resource, namespace=namespace, name=name, group=group)
        if not ok:
            raise forbidden(attrs, reason)


ALLOW_ALL = Access()
