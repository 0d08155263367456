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
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from kubesched.cluster.apiserver.auth import PEER_KEY, peer_user


def with_client_identity(base: type[H11Protocol]) -> type[H11Protocol]:
    """``base`` (an h11 protocol class) that records the connection's client certificate."""

    class ClientIdentityProtocol(base):
        app_state: dict[str, Any]

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            cert: Any = None
            try:
                cert = transport.get_extra_info("peercert")
            except (ssl.SSLError, ValueError):  # pragma: no cover - no handshake on this transport
                cert = None
            user = peer_user(cert)
            if user is not None:
                self.app_state = {**self.app_state, PEER_KEY: user}
            super().connection_made(transport)

    return ClientIdentityProtocol


def server_ssl_options(ca_file: str) -> dict[str, Any]:
    """uvicorn ``Config`` arguments that ask clients for a certificate signed by ``ca_file``."""
    return {"ssl_ca_certs": ca_file, "ssl_cert_reqs": ssl.CERT_OPTIONAL}
