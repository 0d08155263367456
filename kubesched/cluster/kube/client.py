"""``KubeClient``: JSON requests and watch streams to a Kubernetes API server.

Configuration and authentication belong to the official ``kubernetes`` client library,
as they do for any maintained client: kubeconfig files (contexts, bearer tokens, client
certificates, exec credential plugins with token refresh) and the in-cluster service
account (its token re-read as it rotates). Requests take their credentials from
that library's configuration and go through its urllib3 pool (TLS, client certificates;
a plain-HTTP server's requests, not its watches, use the leaner :mod:`.httppool`), but
requests and bodies are plain JSON: the scheduler decodes objects with
:mod:`kubesched.api`, not with the library's generated models (which are slow, and
change with the library's generator).

Every request first takes a token from the client-side rate limiter (``clientConnection``
``qps``/``burst``); then a request's ``guard`` (a fence) runs, as the last thing before the
request is sent, and may refuse it by raising. Failures are raised as :class:`ApiStatusError` or
:class:`TransportError`; :func:`call_with_retries` retries the transient ones with a
bounded exponential backoff.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import urllib3

from kubesched.cluster.kube.errors import ApiStatusError, KubeClientError, TransportError, retriable
from kubesched.cluster.kube.httppool import HttpPool
from kubesched.cluster.kube.ratelimit import TokenBucket
from kubesched.api.jsontext import dumpb
from kubesched.api.jsontext import loads as jsontext_loads

log = logging.getLogger(__name__)

USER_AGENT = "kubesched/0.1.0"
DEFAULT_TIMEOUT = 30.0
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"

T = TypeVar("T")


class KubeClient:
    def __init__(self, api: Any, *, qps: float = 50.0, burst: int = 100) -> None:
        """``api``: a ``kubernetes.client.ApiClient`` (its configuration holds the server,
        the credentials and the TLS settings)."""
        self.api = api
        self.limiter = TokenBucket(qps, burst)
        self.host: str = api.configuration.host
        self._plain = _plain_pool(api.configuration)

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def connect(cls, kubeconfig: str = "", *, context: str | None = None, in_cluster: bool | None = None,
                qps: float = 50.0, burst: int = 100) -> "KubeClient":
        """A client as kube-scheduler builds one: ``kubeconfig`` if given; else the in-cluster
        service account when running in a pod (``in_cluster`` None: detect it from
        ``KUBERNETES_SERVICE_HOST``); else the default kubeconfig ($KUBECONFIG, ~/.kube/config)."""
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException

        cfg = client.Configuration()
        if in_cluster is None:
            in_cluster = not kubeconfig and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        try:
            if in_cluster:
                config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
            else:
                config.load_kube_config(config_file=kubeconfig or None, context=context,
                                        client_configuration=cfg, persist_config=False)  # type: ignore[no-untyped-call]
        except (ConfigException, OSError, ValueError) as exc:
            where = "in-cluster configuration" if in_cluster else f"kubeconfig {kubeconfig or '(default)'}"
            raise KubeClientError(f"cannot load the {where}: {exc}") from exc
        return cls(cls._api_client(cfg), qps=qps, burst=burst)

    @staticmethod
    def _api_client(cfg: Any) -> Any:
        from kubernetes import client

        cfg.retries = False  # connection errors are retried here, with backoff, where safe
        cfg.connection_pool_maxsize = 32  # watches hold connections; binds run in parallel
        return client.ApiClient(cfg)

    def close(self) -> None:
        if self._plain is not None:
            self._plain.close()
        self.api.rest_client.close()

    # -- requests ----------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        """The credentials, from the library's configuration (which refreshes expiring
        exec-plugin and service-account tokens as it hands them out)."""
        headers = {"Accept": JSON, "User-Agent": USER_AGENT}
        for auth in self.api.configuration.auth_settings().values():
            if auth.get("in") == "header" and auth.get("value"):
                headers[str(auth["key"])] = str(auth["value"])
        return headers

    def _send(self, method: str, path: str, query: Mapping[str, str] | None, body: Any,
              content_type: str, timeout: Any, guard: Callable[[], None] | None = None) -> Any:
        """One request through the library's connection pool (TLS settings, client
        certificate); the raw urllib3 response, not yet read. ``guard`` runs just before the
        request is sent (after the rate limiter's wait): it raises to refuse it."""
        self.limiter.wait()
        headers = self._headers()
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(body).encode()
        url = self.host + path + ("?" + urllib.parse.urlencode(query) if query else "")
        if isinstance(timeout, tuple):
            to = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        else:
            to = urllib3.Timeout(connect=min(10.0, timeout), read=timeout)
        if guard is not None:
            guard()
        try:
            return self.api.rest_client.pool_manager.request(method, url, body=data, headers=headers, timeout=to,
                                                             preload_content=False, retries=False)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransportError(f"{method} {path}: {exc}") from exc

    def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None, body: Any = None,
                content_type: str = JSON, timeout: float = DEFAULT_TIMEOUT,
                guard: Callable[[], None] | None = None) -> Any:
        """Send one request; return the decoded JSON answer (None if empty). ``guard``: called
        right before the request is sent; what it raises is raised and nothing is sent."""
        if self._plain is not None:  # a plain-HTTP server: the lean keep-alive pool (httppool.py)
            status, decoded = self._send_plain(method, path, query, body, content_type, timeout, guard)
        else:
            # the response is drained in a helper: an exception raised here must not keep it
            # (and its socket) alive through this frame
            status, decoded = _drain(self._send(method, path, query, body, content_type, timeout, guard),
                                     method, path)
        if not 200 <= status < 300:
            raise ApiStatusError.from_body(status, decoded, f"{method} {path}")
        return decoded

    def _send_plain(self, method: str, path: str, query: Mapping[str, str] | None, body: Any,
                    content_type: str, timeout: float, guard: Callable[[], None] | None) -> tuple[int, Any]:
        """:meth:`_send` and :func:`_drain` for a plain-HTTP server, through :attr:`_plain`."""
        assert self._plain is not None
        self.limiter.wait()
        headers = self._headers()
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = dumpb(body)
        target = path + ("?" + urllib.parse.urlencode(query) if query else "")
        if guard is not None:
            guard()
        status, raw = self._plain.request(method, target, data, headers, timeout)
        try:
            return status, (loads(raw) if raw else None)
        except ValueError:
            return status, raw.decode(errors="replace")

    def get(self, path: str, **query: str) -> Any:
        return self.request("GET", path, query=query or None)

    def watch(self, path: str, query: Mapping[str, str], read_timeout: float) -> "WatchConnection":
        """Open a watch (``watch=true`` is added); raises for a failure status."""
        resp = self._send("GET", path, {**query, "watch": "true"}, None, JSON, (10.0, read_timeout))
        if not 200 <= resp.status < 300:
            status, decoded = _drain(resp, "GET", path)
            del resp
            raise ApiStatusError.from_body(status, decoded, f"watch {path}")
        return WatchConnection(resp)


def _plain_pool(cfg: Any) -> HttpPool | None:
    """The keep-alive pool for an ``http://`` server reached without a proxy; None for
    TLS or a proxy (the library's urllib3 pool handles those)."""
    url = urllib.parse.urlsplit(str(getattr(cfg, "host", "") or ""))
    if url.scheme != "http" or not url.hostname or getattr(cfg, "proxy", None):
        return None
    return HttpPool(url.hostname, url.port or 80, url.path.rstrip("/"))


def _drain(resp: Any, method: str, path: str) -> tuple[int, Any]:
    """Read a whole response, give its connection back to the pool, decode the JSON."""
    try:
        data = resp.data
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise TransportError(f"{method} {path}: {exc}") from exc
    finally:
        resp.release_conn()
    try:
        return resp.status, (json.loads(data) if data else None)
    except ValueError:
        return resp.status, data.decode(errors="replace")


def loads(data: bytes) -> Any:
    """The JSON of a response or watch event, by the stored objects' rule
    (:func:`kubesched.api.jsontext.loads`: orjson unless a run of 19 digits or a
    refusal calls for the standard library)."""
    return jsontext_loads(data)


class WatchConnection:
    """The events of one watch response, decoded line by line as they arrive."""

    def __init__(self, resp: Any) -> None:
        self._resp = resp
        self._closed = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        buf = b""
        try:
            for chunk in self._resp.stream(amt=None, decode_content=True):
                if b"\n" not in chunk:
                    buf += chunk
                    continue
                # every complete line of the chunk at once (a chunk may carry many events:
                # splitting one line off at a time would copy the rest each time)
                lines = (buf + chunk).split(b"\n")
                buf = lines.pop()
                for line in lines:
                    if line.strip():
                        yield loads(line)  # orjson where it gives the same values
            if buf.strip():
                yield loads(buf)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if not self._closed:
                raise TransportError(f"watch stream: {exc}") from exc
        finally:
            self.close()

    def close(self) -> None:
        """Stop reading (from any thread: a blocked read returns)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._resp.shutdown()
        except Exception:  # noqa: BLE001 - already released, or no socket to shut down
            pass
        try:
            self._resp.release_conn()
        except Exception:  # noqa: BLE001
            pass


def backoff_delays(initial: float, factor: float, cap: float, jitter: float = 0.1) -> Iterator[float]:
    """``initial``, ``initial*factor``, ... up to ``cap``, each stretched by up to ``jitter``."""
    d = initial
    while True:
        yield d * (1 + random.random() * jitter)
        d = min(cap, d * factor)


def call_with_retries(fn: Callable[[], T], *, attempts: int = 5, initial: float = 0.05, factor: float = 4.0,
                      cap: float = 2.0, stop: threading.Event | None = None,
                      should_retry: Callable[[BaseException], bool] = retriable,
                      on_retry: Callable[[BaseException], None] | None = None) -> T:
    """Call ``fn``; retry transient failures (at most ``attempts`` calls in all) with an
    exponential backoff; give up early once ``stop`` is set. The last error is raised."""
    delays = backoff_delays(initial, factor, cap)
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except KubeClientError as exc:
            if attempt == attempts or not should_retry(exc) or (stop is not None and stop.is_set()):
                raise
            if on_retry is not None:
                on_retry(exc)
            delay = next(delays)
            log.debug("retrying in %.2fs after: %s", delay, exc)
            if stop is not None:
                if stop.wait(delay):
                    raise
            else:
                threading.Event().wait(delay)
    raise AssertionError("unreachable")
