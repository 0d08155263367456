"""What a pod's runtime would answer, for nodes that have none: ``log``, ``exec``,
``attach``, ``portforward``.

``kubectl logs`` gets a short simulated log built from the pod's status: what the
simulated node agent did (image pulled, container started, restarts and failures,
finished with which exit code), one line per step, with kubelet's RFC 3339 timestamps
when ``timestamps=true``. The query parameters upstream validates are validated the same
way (``container`` required for a pod with several, ``tailLines``/``limitBytes``
positive); ``follow`` ends at the last line, since nothing more will come.

``exec``, ``attach`` and ``portforward`` (and so ``kubectl cp``, which is exec of
``tar``) answer 400 ``kubesched simulates nodes: no container runtime`` rather than a 404
that would read as "the pod is missing".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.server.apiserver import errors as E

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry

NO_RUNTIME = "kubesched simulates nodes: no container runtime"
STREAMING = ("exec", "attach", "portforward")


def no_runtime(subresource: str, name: str) -> E.ApiError:
    return E.bad_request(f"{NO_RUNTIME} (pods/{subresource} of {name} cannot be served)")


def _container(pod: dict[str, Any], wanted: str | None) -> str:
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    names = [str(c.get("name")) for c in spec.get("containers") or [] if isinstance(c, dict)]
    init = [str(c.get("name")) for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    if wanted:
        if wanted not in names + init:
            raise E.bad_request(f"container {wanted} is not valid for pod {name}")
        return wanted
    if len(names) == 1:
        return names[0]
    raise E.bad_request(f"a container name must be specified for pod {name}, choose one of: "
                        f"[{' '.join(names)}]" + (f" or one of the init containers: [{' '.join(init)}]" if init else ""))


def _status_of(pod: dict[str, Any], container: str) -> dict[str, Any] | None:
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(key) or []:
            if isinstance(cs, dict) and cs.get("name") == container:
                return cs
    return None


def _lines(pod: dict[str, Any], container: str, cs: dict[str, Any], previous: bool) -> list[tuple[str, str]]:
    node = (pod.get("spec") or {}).get("nodeName")
    image = cs.get("image") or ""
    state = (cs.get("lastState") if previous else cs.get("state")) or {}
    start = (pod.get("status") or {}).get("startTime") or ""
    out = [(start, f"kubesched: simulated container {container!r} on node {node} (no container runtime)"),
           (start, f"kubesched: pulled image {image!r}")]
    restarts = int(cs.get("restartCount") or 0)
    if restarts and not previous:
        out.append((start, f"kubesched: container restarted {restarts} time(s)"))
    if "running" in state:
        out.append((state["running"].get("startedAt") or start, f"kubesched: started container {container!r}"))
    term = state.get("terminated")
    if isinstance(term, dict):
        out.append((term.get("startedAt") or start, f"kubesched: started container {container!r}"))
        out.append((term.get("finishedAt") or start, f"kubesched: container {container!r} finished: exit code "
                    f"{term.get('exitCode', 0)} ({term.get('reason') or 'Completed'})"))
    return out


def logs(reg: "Registry", namespace: str, name: str, query: Any) -> str:
    pod = reg.get("pods", namespace, name)
    container = _container(pod, query.get("container"))
    limits: dict[str, int] = {}
    for key in ("tailLines", "limitBytes", "sinceSeconds"):
        raw = query.get(key)
        if raw in (None, ""):
            continue
        try:
            value = int(raw)
        except ValueError:
            raise E.bad_request(f"invalid {key}: {raw!r}") from None
        if value < (0 if key == "tailLines" else 1):
            raise E.invalid("PodLogOptions", "", name, [
                ("FieldValueInvalid", key, f"Invalid value: {value}: must be greater than "
                 f"{'or equal to 0' if key == 'tailLines' else '0'}")])
        limits[key] = value
    previous = str(query.get("previous", "")).lower() == "true"
    cs = _status_of(pod, container)
    if cs is None or (not previous and "waiting" in (cs.get("state") or {})):
        reason = ((cs or {}).get("state") or {}).get("waiting", {}).get("reason") or "ContainerCreating"
        raise E.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    if previous and not (cs.get("lastState") or {}).get("terminated"):
        raise E.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
    lines = _lines(pod, container, cs, previous)
    if "tailLines" in limits:
        lines = lines[len(lines) - limits["tailLines"]:] if limits["tailLines"] else []
    stamps = str(query.get("timestamps", "")).lower() == "true"
    text = "".join(f"{ts} {msg}\n" if stamps else f"{msg}\n" for ts, msg in lines)
    if "limitBytes" in limits:
        text = text.encode()[:limits["limitBytes"]].decode(errors="ignore")
    return text
