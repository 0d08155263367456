"""The verified client certificate of a TLS connection, handed to the ASGI app.

uvicorn does not put TLS details in the ASGI scope, and the scope of a request is built
deep inside its HTTP protocol. What it does copy into every request's scope is the
protocol's ``app_state`` (as ``scope["state"]``), so this protocol, once the handshake is
done (asyncio calls ``connection_made`` after it), gives each connection its own copy of
that state with the certificate's user (:func:`.auth.peer_user`) under
:data:`.auth.PEER_KEY`. The TLS layer has already verified the certificate against the
server's CA (``CERT_OPTIONAL``: a client without a certificate is let through, to be
authenticated by token or refused by :class:`.auth.Authenticator`).
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kubesched.server.apiserver.authn.authenticator import PEER_KEY, peer_user


def with_client_identity(base: type[HttpToolsProtocol]) -> type[HttpToolsProtocol]:
    """``base`` (an httptools protocol class) that records the connection's client certificate."""

    parent: Any = base  # a class made at run time (with_header_timeout): no static base type

    class ClientIdentityProtocol(parent):  # type: ignore[misc]
        def connection_made(self, transport: asyncio.Transport) -> None:
            user = peer_user(transport.get_extra_info("peercert"))  # verified by the handshake
            if user is not None:
                state: dict[str, Any] = getattr(self, "app_state")  # noqa: B009 - set by HttpToolsProtocol
                self.app_state = {**state, PEER_KEY: user}
            super().connection_made(transport)

    return cast("type[HttpToolsProtocol]", ClientIdentityProtocol)


def server_ssl_options(ca_file: str) -> dict[str, Any]:
    """uvicorn ``Config`` arguments that ask clients for a certificate signed by ``ca_file``."""
    return {"ssl_ca_certs": ca_file, "ssl_cert_reqs": ssl.CERT_OPTIONAL}
