"""What a web page in a browser on this machine may not make ``serve`` do.

A browser sends requests wherever a page tells it to, with the user's network position:
a page on ``evil.example`` can reach a ``serve`` on 127.0.0.1, which by default has no
authentication. Two attacks follow, and this ASGI middleware (outside authentication, so
it sees every request) refuses both with a 403 ``Status``:

* **DNS rebinding**: the page re-points its own name at 127.0.0.1, after which the browser
  treats serve's answers as the page's own and lets it read them. Such requests carry the
  page's name in ``Host``. Without authentication, a request whose ``Host`` is not a name
  of the address serve listens on is refused: ``localhost``, ``127.0.0.1`` and ``[::1]``
  for a loopback address, the address itself for another one, and for a wildcard address
  (``0.0.0.0``, ``::``) any IP literal, ``localhost`` and this machine's own name. The
  port is not compared (a tunnel or a proxy may change it); rebinding needs a name. The
  public health and version paths answer any ``Host`` (probes; they tell a page nothing).
  With authentication the page has no credentials to send, and TLS would not accept its
  name anyway.
* **Cross-site request forgery**: a page on another origin cannot read serve's answers,
  but it can *send* a "simple" request (a POST with no or a ``text/plain`` body, a form)
  without asking first. Every state-changing request (any method but GET and HEAD) that
  the browser marks as coming from another site (``Sec-Fetch-Site: cross-site`` or
  ``same-site``; a page on another port of 127.0.0.1 is same-site), or, from a browser
  that sends no fetch metadata, whose ``Origin`` is not serve's own, is refused; with
  authentication too, as a browser holding a client certificate would present it for any
  page. Clients that are not browsers (kubectl, client-go, the Python client) send
  neither header and are not affected.

The web UI's own writes also require a content type no page can send without asking
(:mod:`kubesched.ui.routes`).
"""

from __future__ import annotations

import ipaddress
import socket

from starlette.types import ASGIApp, Receive, Scope, Send

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.authn.authenticator import public_path
from kubesched.server.store import dumps

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_SAFE_METHODS = frozenset({"GET", "HEAD"})
_OTHER_SITE = frozenset({"cross-site", "same-site"})


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` (an address or a name) is reachable from this machine only."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    ip = _ip(name)
    if ip is not None:
        return ip.is_loopback
    try:
        infos = socket.getaddrinfo(name, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(i[4][0]).split("%")[0]).is_loopback for i in infos)


def is_wildcard(host: str) -> bool:
    ip = _ip(host.strip("[]"))
    return host == "" or (ip is not None and ip.is_unspecified)


def host_name(header: str) -> str:
    """The name in a ``Host`` header (``name:port``, ``[v6]:port``), lower-cased."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    if header.count(":") == 1:
        header = header.partition(":")[0]
    return header.rstrip(".")


class AllowedHosts:
    """The ``Host`` names a request to a server listening on ``listen_host`` may carry."""

    def __init__(self, listen_host: str) -> None:
        host = listen_host.strip("[]").lower()
        self.any_ip = is_wildcard(host)
        if self.any_ip:
            self.names = LOOPBACK_NAMES | {socket.gethostname().lower()}
        elif is_loopback(host):
            self.names = LOOPBACK_NAMES | {host}
        else:
            self.names = frozenset({host})

    def allows(self, header: str) -> bool:
        name = host_name(header)
        return name in self.names or (self.any_ip and _ip(name) is not None)


class BrowserGuard:
    """ASGI middleware: 403 for a DNS-rebinding ``Host`` (when ``check_host``, i.e. without
    authentication) and for state-changing requests from another site."""

    def __init__(self, app: ASGIApp, hosts: AllowedHosts, check_host: bool) -> None:
        self.app = app
        self.hosts = hosts
        self.check_host = check_host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            body = dumps(E.ApiError(403, "Forbidden", f"forbidden: {refusal}", {}).status()).encode()
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> str | None:
        """Why the request is refused, or None."""
        host = origin = fetch_site = None
        for name, value in scope.get("headers") or ():
            if name == b"host" and host is None:
                host = value.decode("latin-1")
            elif name == b"origin" and origin is None:
                origin = value.decode("latin-1")
            elif name == b"sec-fetch-site" and fetch_site is None:
                fetch_site = value.decode("latin-1").strip().lower()
        if self.check_host and host is not None and not self.hosts.allows(host) and not public_path(scope["path"]):
            return (f'the Host header "{host}" does not name an address this server listens on '
                    "(a DNS rebinding page?); use localhost, the listen address or its IP address")
        if scope.get("method") in _SAFE_METHODS:
            return None
        if fetch_site is not None:
            if fetch_site in _OTHER_SITE:
                return f"a browser sent this {scope.get('method')} from another site (Sec-Fetch-Site: {fetch_site})"
            return None
        if origin is not None and origin.strip().lower() != f"{scope.get('scheme', 'http')}://{(host or '').lower()}":
            return f"a browser sent this {scope.get('method')} from another origin ({origin})"
        return None
