"""A web page in a browser cannot use a local ``kubesched serve`` (no authentication, the
default on 127.0.0.1): real serve process, raw HTTP requests shaped as browsers send them.

* Cross-site request forgery: a page on another origin may send a "simple" request (a POST
  with no Content-Type, ``text/plain`` or a form) without a CORS preflight (Fetch standard,
  "CORS-safelisted request-header" and "simple" methods). Browsers mark such a request with
  ``Sec-Fetch-Site: cross-site`` (or ``same-site`` for another port of the same host; Fetch
  Metadata Request Headers, W3C) and an ``Origin`` header. Each is refused (403), on the
  API and on the web UI; the UI's writes also need a non-simple content type (415).
* DNS rebinding: the page's own name, resolved to 127.0.0.1, arrives in ``Host``; refused
  (403) unless it names the listen address (``localhost``, ``127.0.0.1``, ``[::1]``).

Requests without these headers (kubectl, client libraries) and the page's own same-origin
requests keep working.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest
from serve_harness import API_ONLY, Server, started

pytestmark = pytest.mark.slow

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from started(tmp_path_factory.mktemp("browser"), *API_ONLY)


def _send(server: Server, method: str, path: str, body: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """A request with exactly ``headers`` (http.client adds Host unless given, and no Content-Type)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        hdrs = dict(headers or {})
        skip_host = "Host" in hdrs
        conn.putrequest(method, path, skip_host=skip_host, skip_accept_encoding=True)
        for k, v in hdrs.items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    try:
        return resp.status, json.loads(raw)
    except ValueError:
        return resp.status, raw.decode(errors="replace")


def _configmap(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}).encode()


def _exists(server: Server, name: str) -> bool:
    return server.request("GET", f"{CONFIGMAPS}/{name}")[0] == 200


def _yaml(name: str) -> bytes:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n".encode()


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
    {"Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-site"},  # another local port
    {"Origin": "http://evil.example"},  # a browser that sends no fetch metadata
    {"Origin": "null"},
], ids=["cross-site", "same-site", "origin-only", "opaque-origin"])
def test_a_page_on_another_origin_cannot_write(local: Server, headers: dict[str, str]) -> None:
    name = "csrf-" + headers.get("Sec-Fetch-Site", "none") + str(len(headers["Origin"]))
    # the API: a POST without Content-Type is a simple request, sent without asking
    code, body = _send(local, "POST", CONFIGMAPS, _configmap(name), headers)
    assert code == 403 and body["reason"] == "Forbidden", body
    # the web UI's create, with the content type the page itself sends
    code, body = _send(local, "POST", "/ui/api/apply", _yaml(name + "-ui"),
                       {**headers, "Content-Type": "application/yaml"})
    assert code == 403, body
    assert not _exists(local, name) and not _exists(local, name + "-ui")


@pytest.mark.parametrize("content_type", [None, "text/plain", "text/plain;charset=UTF-8",
                                          "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])
def test_ui_writes_need_a_content_type_a_page_cannot_send_unasked(local: Server, content_type: str | None) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    code, body = _send(local, "POST", "/ui/api/apply", _yaml("simple-type"), headers)
    assert code == 415 and "application/yaml or application/json" in body["error"], body
    code, body = _send(local, "POST", "/ui/api/delete", json.dumps(
        {"kind": "ConfigMap", "namespace": "default", "name": "kept"}).encode(), headers)
    assert code == 415, body
    assert not _exists(local, "simple-type")


def test_the_pages_own_requests_and_other_clients_still_work(local: Server) -> None:
    own = f"http://127.0.0.1:{local.port}"
    code, body = _send(local, "POST", "/ui/api/apply", _yaml("from-the-page"),
                       {"Origin": own, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/yaml"})
    assert code == 200 and body["ok"] is True, body
    code, body = _send(local, "POST", CONFIGMAPS, _configmap("same-origin-fetch"),
                       {"Origin": own, "Content-Type": "application/json"})
    assert code == 201, body
    # a user typing the address (Sec-Fetch-Site: none) and clients that send no such header
    code, body = _send(local, "POST", CONFIGMAPS, _configmap("typed"), {"Sec-Fetch-Site": "none",
                                                                        "Content-Type": "application/json"})
    assert code == 201, body
    local.kubectl("create", "configmap", "by-kubectl")
    assert all(_exists(local, n) for n in ("from-the-page", "same-origin-fetch", "typed", "by-kubectl"))
    # reads from another origin are not refused here: the browser keeps their answers from the page
    assert _send(local, "GET", CONFIGMAPS, headers={"Sec-Fetch-Site": "cross-site"})[0] == 200


@pytest.mark.parametrize("host, code", [
    ("evil.example:{port}", 403), ("evil.example", 403), ("127.0.0.1.nip.io:{port}", 403),
    ("localhost:{port}", 200), ("127.0.0.1:{port}", 200), ("[::1]:{port}", 200), ("LOCALHOST:{port}", 200),
], ids=["rebinding", "rebinding-no-port", "rebinding-ip-name", "localhost", "ipv4", "ipv6", "case"])
def test_a_host_that_is_not_the_listen_address_is_refused(local: Server, host: str, code: int) -> None:
    for path in (CONFIGMAPS, "/ui/api/mode", "/"):
        status, body = _send(local, "GET", path, headers={"Host": host.format(port=local.port),
                                                          "Accept": "text/html"})
        assert status == code, (path, body)
        if code == 403:
            assert "does not name an address this server listens on" in body["message"]
    # the public health and version paths answer probes whatever their Host
    assert _send(local, "GET", "/readyz", headers={"Host": host.format(port=local.port)})[0] == 200
