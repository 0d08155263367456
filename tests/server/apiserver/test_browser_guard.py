"""The browser guard's decisions, request by request (the end-to-end behaviour is in
tests/ui/test_ui_browser_guard_e2e.py).

Expected values come from the specifications the guard reads: the ``Host`` header is
``uri-host [ ":" port ]`` with IPv6 literals in brackets (RFC 7230 section 5.4, RFC 3986
section 3.2.2); ``Sec-Fetch-Site`` is ``cross-site``, ``same-site``, ``same-origin`` or
``none`` (W3C Fetch Metadata Request Headers); an ``Origin`` is ``scheme://host[:port]``
or ``null`` (RFC 6454); 127.0.0.0/8 and ::1 are loopback (RFC 1122, RFC 4291).
"""

from __future__ import annotations

import socket

import pytest

from kubesched.server.apiserver.http.browser import AllowedHosts, BrowserGuard, host_name, is_loopback


@pytest.mark.parametrize("header, name", [
    ("evil.example:6443", "evil.example"), ("[::1]:6443", "::1"), ("LOCALHOST:1", "localhost"),
    ("localhost.", "localhost"), ("127.0.0.1", "127.0.0.1"), ("[fe80::1]", "fe80::1"),
])
def test_host_name(header: str, name: str) -> None:
    assert host_name(header) == name


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("192.0.2.1", False),
])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("listen, header, allowed", [
    ("127.0.0.1", "localhost:6443", True), ("127.0.0.1", "127.0.0.1:1", True), ("127.0.0.1", "[::1]:6443", True),
    ("127.0.0.1", "evil.example:6443", False), ("127.0.0.1", "10.0.0.1:6443", False),
    ("127.0.0.1", "127.0.0.1.nip.io", False),
    ("::1", "[::1]:6443", True), ("::1", "localhost", True),
    ("0.0.0.0", "10.0.0.1:6443", True), ("0.0.0.0", "[fe80::1]:6443", True), ("0.0.0.0", "localhost", True),
    ("0.0.0.0", "evil.example:6443", False),
    ("192.0.2.10", "192.0.2.10:6443", True), ("192.0.2.10", "192.0.2.11:6443", False),
    ("192.0.2.10", "localhost:6443", False),
])
def test_allowed_hosts(listen: str, header: str, allowed: bool) -> None:
    assert AllowedHosts(listen).allows(header) is allowed


def test_a_wildcard_listen_allows_this_machines_name() -> None:
    assert AllowedHosts("0.0.0.0").allows(socket.gethostname() + ":6443")


def _scope(method: str, path: str = "/api/v1/namespaces/default/configmaps", **headers: str) -> dict[str, object]:
    return {"type": "http", "method": method, "path": path, "scheme": "http",
            "headers": [(k.replace("_", "-").lower().encode(), v.encode()) for k, v in headers.items()]}


GUARD = BrowserGuard(lambda *a: None, AllowedHosts("127.0.0.1"), check_host=True)  # type: ignore[arg-type,return-value]
OWN = "http://127.0.0.1:6443"


@pytest.mark.parametrize("scope, refused", [
    (_scope("POST", host="127.0.0.1:6443"), False),  # kubectl, client-go
    (_scope("POST", host="127.0.0.1:6443", sec_fetch_site="cross-site", origin="http://evil.example"), True),
    (_scope("POST", host="127.0.0.1:6443", sec_fetch_site="same-site", origin="http://127.0.0.1:8080"), True),
    (_scope("DELETE", host="127.0.0.1:6443", sec_fetch_site="cross-site"), True),
    (_scope("POST", host="127.0.0.1:6443", sec_fetch_site="same-origin", origin=OWN), False),
    (_scope("POST", host="127.0.0.1:6443", sec_fetch_site="none"), False),
    (_scope("POST", host="127.0.0.1:6443", origin="http://evil.example"), True),  # no fetch metadata
    (_scope("POST", host="127.0.0.1:6443", origin="null"), True),
    (_scope("POST", host="127.0.0.1:6443", origin=OWN), False),
    (_scope("GET", host="127.0.0.1:6443", sec_fetch_site="cross-site"), False),  # reads: the browser hides them
    (_scope("GET", host="evil.example:6443"), True),  # DNS rebinding
    (_scope("GET", "/readyz", host="evil.example:6443"), False),  # public paths: probes
    (_scope("GET", host="localhost:6443"), False),
], ids=["no-browser", "cross-site", "same-site", "cross-site-delete", "same-origin", "typed", "origin-only",
        "null-origin", "own-origin", "cross-site-read", "rebinding", "rebinding-health", "localhost"])
def test_refusals(scope: dict[str, object], refused: bool) -> None:
    assert (GUARD.refusal(scope) is not None) is refused


def test_with_authentication_the_host_is_not_checked_but_other_sites_still_cannot_write() -> None:
    guard = BrowserGuard(lambda *a: None, AllowedHosts("127.0.0.1"), check_host=False)  # type: ignore[arg-type,return-value]
    assert guard.refusal(_scope("GET", host="evil.example:6443")) is None
    assert guard.refusal(_scope("POST", host="127.0.0.1:6443", sec_fetch_site="cross-site")) is not None
