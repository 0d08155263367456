"""Running the API server: store, registry, uvicorn, housekeeping, and in-process components.

:class:`ApiServer` owns everything ``kubesched serve`` runs in one process:

* the store (``DATA_DIR/store.db``) and the registry over it;
* uvicorn serving the ASGI app on a socket bound before start-up (so ``--port 0`` works
  and the kubeconfig names the real port), over HTTPS with ``--tls`` or ``--token-file``
  (a token implies TLS: kubectl sends tokens only over HTTPS), asking clients for a
  certificate signed by the server's CA (:mod:`.clientcert`, :mod:`.auth`);
* the kubeconfig (``DATA_DIR/kubeconfig``, 0600) with the credentials it accepts;
* a housekeeping thread that removes pods whose graceful deletion period ended;
* :class:`Component` s: controllers, simulated nodes and the scheduler, added by their own
  packages. Each gets the :class:`Registry` (in-process, same semantics as HTTP, watches
  included) and the server's URL and kubeconfig (for those that must go through HTTP, like
  the scheduler's client); they are started after the API is ready and stopped before the
  store closes.

Limits protect the server from misbehaving clients: requests in flight are bounded per
kind, read-only, mutating and watches each on its own (429 + Retry-After beyond,
:mod:`.limits`); connections are bounded (open watches, requests in flight and
:data:`IDLE_CONNECTIONS` idle keep-alive ones), and kept below the file limit with room for
serve's own files; at the bound a new connection replaces the one idle longest
(:mod:`.http.connlimit`); 64 KiB of request headers,
which must arrive within 32 s (:mod:`.httpproto`), and closes idle keep-alive connections
after 30 s; request bodies are bounded in size and time by the handlers. Shutdown (SIGINT/SIGTERM, or :meth:`ApiServer.stop`) ends open
watches at once, then waits up to 5 s for requests in flight.
"""

from __future__ import annotations

import logging
import signal
import socket
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

import uvicorn
from starlette.routing import BaseRoute

from kubesched.api.kubeversion import default_minor
from kubesched.server.apiserver.app import DEFAULT_MAX_BODY, ApiConfig, build_app
from kubesched.server.apiserver.authn.authenticator import Authn, ensure_token_file
from kubesched.server.apiserver.authz.middleware import ALWAYS_ALLOW, RBAC
from kubesched.server.apiserver.authz.policy import ensure_bootstrap_policy
from kubesched.server.apiserver.authn.clientcert import server_ssl_options, with_client_identity
from kubesched.server.apiserver.registry.deletion import reap
from kubesched.server.apiserver.http.connlimit import ACCEPT_BATCH, ConnectionLimit, connection_limit
from kubesched.server.apiserver.http.httpproto import READ_HEADER_TIMEOUT, listen, with_header_timeout
from kubesched.server.apiserver.kubeconfig import write_kubeconfig
from kubesched.server.apiserver.http.inflight import DEFAULT_MAX_MUTATING, DEFAULT_MAX_READONLY, DEFAULT_MAX_WATCHES
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.registry.served import table_for
from kubesched.server.apiserver.registry.tokens import ISSUER
from kubesched.server.apiserver.authn.tls import TlsFiles, ensure_certificates
from kubesched.server.store import DEFAULT_HISTORY, Store, StoreError
from kubesched.server.store.integrity import verify

log = logging.getLogger(__name__)

IDLE_CONNECTIONS = 1000  # connections beyond those of requests and watches (kept-alive clients)
LISTEN_BACKLOG = 2048  # connections the kernel queues until they are accepted


class Component(Protocol):
    """Something that runs beside the API server, in the same process."""

    name: str

    def start(self, server: "ApiServer") -> None:
        """Start (threads of its own); return promptly."""

    def stop(self) -> None:
        """Stop and wait for its threads; called before the store closes."""


@dataclass(slots=True)
class ServeOptions:
    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 6443
    tls: bool = False
    token_file: Path | None = None
    watch_history: int = DEFAULT_HISTORY
    bookmark_interval: float = 60.0
    min_request_timeout: float = 1800.0
    max_body_bytes: int = DEFAULT_MAX_BODY
    max_requests_inflight: int = DEFAULT_MAX_READONLY
    max_mutating_requests_inflight: int = DEFAULT_MAX_MUTATING
    max_watches: int = DEFAULT_MAX_WATCHES
    reap_interval: float = 0.5
    autoprovision_namespaces: bool = True
    header_timeout: float = READ_HEADER_TIMEOUT  # seconds a client has to send a request head
    authorization_mode: str = ALWAYS_ALLOW  # or RBAC: the bootstrap roles are created at start
    api_audiences: tuple[str, ...] = ()  # --api-audiences; none: the service-account issuer
    extra_routes: list[BaseRoute] = field(default_factory=list)  # more endpoints (the web UI)
    self_authorized: Callable[[str], bool] | None = None  # their paths that authorize themselves
    kubernetes_version: str = field(default_factory=default_minor)  # the release /version reports
    clear_nominated_on_binding: bool = False  # the release's ClearingNominatedNodeNameAfterBinding

    @property
    def uses_tls(self) -> bool:
        """``--tls``, or ``--token-file`` or ``--authorization-mode RBAC`` (which imply it: RBAC
        needs to know who asks)."""
        return self.tls or self.token_file is not None or self.authorization_mode == RBAC


class _Terminated(Exception):
    """SIGTERM, re-raised by uvicorn after its graceful shutdown."""


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated()


class _Uvicorn(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_exit: "ApiServer") -> None:
        super().__init__(config)
        self._owner = on_exit

    # SIGTERM/SIGINT: uvicorn's own handler only notes the signal, and its main loop then calls
    # shutdown() on the event loop. The shutdown's work (ending the open watches, which takes
    # the watch hub's lock) is done there, never in the signal handler: CPython runs that
    # between two bytecodes of the main thread, which may be inside the hub's lock (a watch
    # closing) -- a CI run caught serve waiting forever for that lock on its own thread.
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._owner._begin_shutdown()  # ends open watches now, not after the graceful timeout
        await super().shutdown(sockets)

    # asyncio accepts up to ``backlog`` connections in a row before any is counted (and each
    # holds a file), so uvicorn is given the small ACCEPT_BATCH; the kernel's queue of
    # connections waiting to be accepted is then widened again
    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        for sock in sockets or ():
            sock.listen(LISTEN_BACKLOG)


def _open_store(data: Path, history: int) -> Store:
    """The store of ``data``, refused in one line (:class:`StoreError`) if it is damaged, or
    missing or empty in a data directory that held a cluster (serve writes the kubeconfig
    once its store is open)."""
    path = data / "store.db"
    verify(path, held_cluster=(data / "kubeconfig").exists())
    try:
        return Store(path, history=history)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: {exc}") from None


def _open_files() -> int:
    """The soft limit on open files (the caller raised it as far as it could)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return 1 << 20
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return 1 << 20 if soft == resource.RLIM_INFINITY else soft


class ApiServer:
    def __init__(self, opts: ServeOptions, components: Sequence[Component] = ()) -> None:
        self.opts = opts
        self.components = list(components)
        data = opts.data_dir
        if not data.exists():
            data.mkdir(mode=0o700, parents=True)  # it holds the store, keys and credentials
        tokens = ensure_token_file(opts.token_file) if opts.token_file else {}  # before the store opens
        self.store = _open_store(data, opts.watch_history)
        self.registry = Registry(self.store, table=table_for(opts.kubernetes_version),
                                 autoprovision_namespaces=opts.autoprovision_namespaces,
                                 clear_nominated_on_binding=opts.clear_nominated_on_binding)
        self.registry.bootstrap()
        if opts.authorization_mode == RBAC:
            ensure_bootstrap_policy(self.registry)
        self.token = sorted(tokens)[0] if tokens else None
        # kubectl never sends a bearer token over plain HTTP: a token implies TLS
        self.tls: TlsFiles | None = ensure_certificates(data / "pki", opts.host) if opts.uses_tls else None
        self.sock, address = listen(opts.host, opts.port)
        self.port = self.sock.getsockname()[1]
        self.url = f"{'https' if self.tls else 'http'}://{address}"
        self.kubeconfig = write_kubeconfig(
            # under RBAC the kubeconfig (kubectl's, and the scheduler's inside) carries the client
            # certificate, whose group is system:masters: a token file's first token may be anyone's
            data / "kubeconfig", self.url, ca_file=self.tls.ca_cert if self.tls else None,
            token=self.token if opts.authorization_mode != RBAC else None,
            client_cert=(self.tls.client_cert, self.tls.client_key) if self.tls else None)
        wanted = (opts.max_requests_inflight + opts.max_mutating_requests_inflight + opts.max_watches
                  + IDLE_CONNECTIONS)
        self.connections = ConnectionLimit(connection_limit(_open_files(), wanted))
        # when the file limit binds, watches may hold at most half of the connections
        self.max_watches = opts.max_watches if self.connections.limit >= wanted else \
            max(1, min(opts.max_watches, self.connections.limit // 2))
        self.app, self.state = build_app(self.registry, ApiConfig(
            server_address=address, max_body_bytes=opts.max_body_bytes,
            bookmark_interval=opts.bookmark_interval, min_request_timeout=opts.min_request_timeout,
            authn=Authn(tokens=tokens, client_certs=self.tls is not None),
            max_readonly=opts.max_requests_inflight, max_mutating=opts.max_mutating_requests_inflight,
            max_watches=self.max_watches, authorization_mode=opts.authorization_mode,
            api_audiences=opts.api_audiences or (ISSUER,),
            extra_routes=opts.extra_routes, self_authorized=opts.self_authorized, listen_host=opts.host,
            kubernetes_version=opts.kubernetes_version))
        protocol = with_header_timeout(opts.header_timeout, connections=self.connections)
        ssl_options: dict[str, Any] = {}
        if self.tls is not None:
            protocol = with_client_identity(protocol)
            ssl_options = {"ssl_certfile": str(self.tls.cert), "ssl_keyfile": str(self.tls.key),
                           **server_ssl_options(str(self.tls.ca_cert))}
        config = uvicorn.Config(
            self.app, http=protocol, loop="asyncio", lifespan="off", access_log=False, log_level="warning",
            # no limit_concurrency: self.connections bounds connections (and so requests) without
            # a 503 for every connection over it; backlog: the accept batch (re-listened wider below)
            backlog=ACCEPT_BATCH, timeout_keep_alive=30, timeout_graceful_shutdown=5,
            server_header=False, proxy_headers=False, **ssl_options)
        self._server = _Uvicorn(config, self)
        self._housekeeper: threading.Thread | None = None
        self._thread: threading.Thread | None = None
        self._started_components: list[Component] = []

    # -- running ----------------------------------------------------------------------------
    def serve(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve until SIGINT/SIGTERM (main thread) or :meth:`stop`; then clean up.
        ``on_ready`` is called (from another thread) once requests are accepted."""
        if on_ready is not None:
            threading.Thread(target=self._when_ready, args=(on_ready,), daemon=True).start()
        self._housekeeper = threading.Thread(target=self._housekeeping, name="apiserver-housekeeping",
                                             daemon=True)
        self._housekeeper.start()
        self.state.ready.set()
        # uvicorn handles SIGINT/SIGTERM while serving, then re-raises the signal once it
        # has shut down; make that re-raised SIGTERM an exception so clean-up still runs.
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _terminated) if main else None
        try:
            for c in self.components:
                c.start(self)
                self._started_components.append(c)
            self._server.run(sockets=[self.sock])
        except (KeyboardInterrupt, _Terminated):
            pass
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)
            self._begin_shutdown()
            self._close()

    def _when_ready(self, fn: Callable[[], None]) -> None:
        while not self._server.started:
            if self.state.stopping.wait(0.01):
                return
        fn()

    def start_in_thread(self) -> threading.Thread:
        """Serve in a background thread (tests, embedding); returns once it accepts requests."""
        self._thread = threading.Thread(target=self.serve, name="apiserver", daemon=True)
        self._thread.start()
        for _ in range(200):
            if self._server.started or not self._thread.is_alive():
                break
            threading.Event().wait(0.025)
        return self._thread

    def stop(self) -> None:
        self._begin_shutdown()
        self._server.should_exit = True
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=15)

    def _begin_shutdown(self) -> None:
        if self.state.stopping.is_set():
            return
        log.info("API server shutting down")
        self.state.stopping.set()
        self.store.hub.close_all()  # ends open watches now, not after the graceful timeout

    def _close(self) -> None:
        for c in reversed(self._started_components):
            try:
                c.stop()
            except Exception:  # pragma: no cover - a component's bug must not keep the store open
                log.exception("stopping %s", getattr(c, "name", c))
        if self._housekeeper is not None:
            self._housekeeper.join(timeout=5)
        self.store.close()
        self.sock.close()

    def _housekeeping(self) -> None:
        while not self.state.stopping.wait(self.opts.reap_interval):
            try:
                n = reap(self.registry)
                if n:
                    log.info("removed %d pod(s) whose grace period ended", n)
            except Exception:  # pragma: no cover - keep housekeeping alive
                if not self.store.closed:
                    log.exception("housekeeping")
