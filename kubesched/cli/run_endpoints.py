"""The endpoints of ``kubesched run`` (and of its ``--shadow`` mode, :mod:`.run_shadow`):
served with delegated authentication when the API server answers the reviews, else on the
loopback address only."""

from __future__ import annotations

import argparse
import ipaddress
from collections.abc import Callable
from typing import TYPE_CHECKING

from kubesched.api.errors import KubeschedError

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from kubesched.cluster.kube import KubeClient
    from kubesched.live.delegation import PathMatcher
    from kubesched.live.endpoints import EndpointHooks, EndpointServer


def start_endpoints(args: argparse.Namespace, hooks: "EndpointHooks", client: "KubeClient",
                    allow: "PathMatcher") -> "EndpointServer":
    """Serve the scheduler's endpoints (health, metrics, explain) as ``--port``, ``--bind-address``
    and the TLS flags ask, behind the API server's delegated authentication where it answers."""
    from kubesched.live.endpoints import EndpointServer

    host, auth = _endpoint_auth(args, client, allow)
    tls = (args.tls_cert_file, args.tls_private_key_file) if args.tls_cert_file else None
    try:
        endpoints = EndpointServer(hooks, host, args.port, auth, tls)
    except ValueError as exc:  # the TLS files changed since they were checked
        raise KubeschedError(f"--tls-cert-file: {exc}") from None
    except OSError as exc:
        raise KubeschedError(f"cannot serve on {host}:{args.port}: {exc.strerror or exc}") from None
    endpoints.start()
    print(f"serving /healthz, /readyz, /metrics, /debug/explain on {endpoints.url} "
          f"(listening on {endpoints.bound})", flush=True)
    if args.ui:
        print(f"web UI (read-only): {endpoints.url}/", flush=True)
    return endpoints


def _endpoint_auth(args: argparse.Namespace, client: "KubeClient",
                   allow: "PathMatcher") -> tuple[str, "Callable[[ASGIApp], ASGIApp] | None"]:
    """The address the endpoints listen on and the delegated authentication in front of
    them; the loopback address and none when the API server will not answer the reviews."""
    from kubesched.cluster.kube import KubeClient
    from kubesched.live.delegation import DelegatedAuth, Delegation

    # its own rate limit, as upstream's delegating clients (200 qps, burst 400)
    delegation = Delegation(KubeClient(client.api, qps=200, burst=400))
    reason = delegation.probe()
    if reason is None:
        print("endpoints: authentication and authorization delegated to the API server "
              f"(open to anyone: {args.authorization_always_allow_paths})", flush=True)
        return args.bind_address, lambda app: DelegatedAuth(app, delegation, allow)
    host = args.bind_address if _is_loopback(args.bind_address) else "127.0.0.1"
    print(f"endpoints: delegated authentication is not possible ({reason}); serving them on {host} only, "
          "without authentication", flush=True)
    return host, None


def _is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
