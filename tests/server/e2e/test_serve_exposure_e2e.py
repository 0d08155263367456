"""Who can reach a real ``kubesched serve``: ``/version`` is public as upstream's is, a
non-loopback ``--host`` needs authentication or an explicit ``--insecure-allow-any-host``,
and the banner names the address really bound.

Upstream facts: kube-apiserver's bootstrap ClusterRole ``system:public-info-viewer``
(``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go``) grants ``get`` on
``/healthz``, ``/livez``, ``/readyz``, ``/version`` and ``/version/`` to
``system:unauthenticated``, so an anonymous ``GET /version`` answers 200 with the
``version.Info`` document, while other paths need credentials.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from serve_harness import API_ONLY, REPO, Server, free_port

pytestmark = pytest.mark.slow


def test_version_is_public_and_the_api_is_not(spawn: Callable[..., Server], tmp_path: Path) -> None:
    (tmp_path / "tokens").write_text("admintok,admin,1,system:masters\n")
    for args in (("--token-file", str(tmp_path / "tokens")),
                 ("--token-file", str(tmp_path / "tokens"), "--authorization-mode", "RBAC")):
        server = spawn(*args, *API_ONLY)
        for path in ("/version", "/version/"):
            code, body = server.request("GET", path, auth=False)
            assert code == 200 and body["gitVersion"].startswith("v1."), (args, path, body)
        for path in ("/api/v1/namespaces", "/version/x", "/metrics"):
            code, body = server.request("GET", path, auth=False)
            assert code == 401 and body["reason"] == "Unauthorized", (args, path, body)
        server.stop()


def test_a_non_loopback_host_without_authentication_does_not_start(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "serve", "--data-dir", str(tmp_path / "d"),
                          "--host", "0.0.0.0", "--port", str(free_port()), *API_ONLY],
                         cwd=REPO, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "--host 0.0.0.0 is not a loopback address" in lines[0], out.stderr
    assert "--insecure-allow-any-host" in lines[0] and "Traceback" not in out.stderr


def test_any_host_when_asked_and_the_banner_names_the_bound_address(spawn: Callable[..., Server]) -> None:
    server = spawn("--host", "0.0.0.0", "--insecure-allow-any-host", *API_ONLY)
    banner = next(line for line in server.output if "listening on " in line)
    assert banner.startswith(f"kubesched API server listening on http://0.0.0.0:{server.port} (every address of "
                             f"this machine; the kubeconfig names http://127.0.0.1:{server.port})"), banner
    assert server.request("GET", "/api/v1/namespaces")[0] == 200
    # any IP literal names a wildcard address; a DNS name other than this machine's does not
    assert server.request("GET", "/api/v1/namespaces", headers={"Host": f"10.1.2.3:{server.port}"})[0] == 200
    assert server.request("GET", "/api/v1/namespaces", headers={"Host": f"evil.example:{server.port}"})[0] == 403
    server.stop()
    secured = spawn("--host", "0.0.0.0", "--tls", *API_ONLY)
    banner = next(line for line in secured.output if "listening on " in line)
    assert f"listening on https://0.0.0.0:{secured.port} " in banner, banner
    assert secured.request("GET", "/api/v1/namespaces")[0] == 200
    assert secured.request("GET", "/api/v1/namespaces", auth=False)[0] == 401
