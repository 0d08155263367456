"""``kubesched explain --kubeconfig K NS/POD`` (or ``--scheduler-url URL``): ask a running
``serve`` (through its API server, ``/debug/explain/<ns>/<pod>``) or ``run`` (its endpoint
port) for a pod's explanation, and print it as ``explain -f`` prints a simulated one.

Also the explain flags ``serve`` and ``run`` share: how many attempts are kept per pod and
in all, and the opt-in result annotations.
"""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from kubesched.api.errors import KubeschedError

REMOTE_TIMEOUT = 30.0


def add_live_flags(p: argparse.ArgumentParser) -> None:
    """``--explain-attempts-per-pod``, ``--explain-max-attempts``, ``--result-annotations``."""
    from kubesched.explanation.limits import DEFAULT_MAX_ATTEMPTS, DEFAULT_PER_POD

    p.add_argument("--explain-attempts-per-pod", type=int, default=DEFAULT_PER_POD, metavar="N",
                   help=f"scheduling attempts kept per pod for /debug/explain (default {DEFAULT_PER_POD})")
    p.add_argument("--explain-max-attempts", type=int, default=DEFAULT_MAX_ATTEMPTS, metavar="N",
                   help=f"attempts kept in all; the least recently tried pods' oldest go first "
                        f"(default {DEFAULT_MAX_ATTEMPTS})")
    p.add_argument("--result-annotations", action="store_true",
                   help="write kube-scheduler-simulator's result annotations "
                        "(kube-scheduler-simulator.sigs.k8s.io/filter-result, ...) on each pod after its attempt")


def live_options(args: argparse.Namespace) -> dict[str, Any]:
    """The LiveOptions fields of the flags of :func:`add_live_flags` (checked)."""
    for flag in ("explain_attempts_per_pod", "explain_max_attempts"):
        if getattr(args, flag) < 1:
            raise KubeschedError(f"--{flag.replace('_', '-')} must be at least 1")
    return {"explain_attempts_per_pod": args.explain_attempts_per_pod,
            "explain_max_attempts": args.explain_max_attempts,
            "result_annotations": args.result_annotations}


def _path(pod: str) -> tuple[str, str, str]:
    ns, _, name = pod.rpartition("/")
    ns = ns or "default"
    if not name or "/" in ns:
        raise KubeschedError(f"pod {pod!r}: expected NAMESPACE/NAME or NAME")
    quote = urllib.parse.quote
    return ns, name, f"/debug/explain/{quote(ns, safe='')}/{quote(name, safe='')}"


def fetch_from_kubeconfig(kubeconfig: str, pod: str, query: str = "") -> dict[str, Any]:
    """The explain document from a ``serve`` API server, with the kubeconfig's credentials
    (``query``: e.g. ``?fixes=10``, the fix search's document instead)."""
    from kubesched.cluster.kube import KubeClient
    from kubesched.cluster.kube.errors import ApiStatusError, KubeClientError

    ns, name, path = _path(pod)
    path += query
    try:
        client = KubeClient.connect(kubeconfig)
    except KubeClientError as exc:
        raise KubeschedError(str(exc)) from None
    server = client.api.configuration.host
    try:
        doc = client.request("GET", path, timeout=REMOTE_TIMEOUT)
    except ApiStatusError as exc:
        if exc.code == 404:
            raise KubeschedError(f"pod {ns}/{name}: no scheduling attempt known to the scheduler of {server} "
                                 f"({_message(exc.body) or exc.message})") from None
        raise KubeschedError(f"{server}{path}: {exc}") from None
    except KubeClientError as exc:
        raise KubeschedError(f"cannot reach the API server {server}: {exc}") from None
    finally:
        client.close()
    if not isinstance(doc, dict):
        raise KubeschedError(f"{server}{path}: not an explain document")
    return doc


def fetch_from_url(url: str, pod: str, query: str = "") -> dict[str, Any]:
    """The explain document from ``kubesched run``'s endpoint port (``--scheduler-url``)."""
    ns, name, path = _path(pod)
    full = url.rstrip("/") + path + query
    try:
        with urllib.request.urlopen(full, timeout=REMOTE_TIMEOUT) as resp:  # noqa: S310 - a URL the user gave
            body = resp.read()
    except urllib.error.HTTPError as exc:
        detail = _message(_json(exc.read()))
        if exc.code == 404:
            raise KubeschedError(f"pod {ns}/{name}: no scheduling attempt known to the scheduler at {url}"
                                 + (f" ({detail})" if detail else "")) from None
        raise KubeschedError(f"{full}: HTTP {exc.code}" + (f": {detail}" if detail else "")) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise KubeschedError(f"cannot reach the scheduler at {url}: {reason}") from None
    doc = _json(body)
    if not isinstance(doc, dict):
        raise KubeschedError(f"{full}: not an explain document")
    return doc


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _message(body: Any) -> str:
    if isinstance(body, dict):
        return str(body.get("error") or body.get("message") or "")
    return ""


def run(args: argparse.Namespace) -> int:
    from kubesched.cli import render_fixes
    from kubesched.cli.render import _console, print_document

    def fetch(query: str = "") -> dict[str, Any]:
        if args.scheduler_url:
            return fetch_from_url(args.scheduler_url, args.pod, query)
        return fetch_from_kubeconfig(args.kubeconfig, args.pod, query)

    doc = fetch()
    fixes = fetch(f"?fixes={args.fix_limit}") if getattr(args, "fix", False) else None
    if fixes is not None:
        doc["blockers"] = fixes.pop("blockers", doc.get("blockers"))
        doc["fixes"], doc["fixSearch"] = fixes.get("fixes", []), fixes
    if getattr(args, "output", "table") == "json":
        print(json.dumps(doc, indent=1))
        return 0
    con = _console()
    print_document(con, doc)  # with its blockers
    if fixes is not None:
        render_fixes.print_fixes(con, fixes)
    return 0
