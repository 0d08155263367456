"""``--result-annotations``: kube-scheduler-simulator's result annotations on each pod after
its attempt (:mod:`kubesched.explanation.kssresults` builds them), written by one background thread with
one merge patch per pod, so the scheduling cycle only appends to a dict.

An attempt still binding (or waiting at Permit) is written once its binding ended, or after
``settle`` seconds with what is known then. Pending writes are coalesced per pod (the latest
attempt wins) and bounded (``max_pending``: the oldest are dropped, and counted in
``dropped``). The pod's earlier results come from its ``result-history`` annotation.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping

from kubesched.api.objects import Pod
from kubesched.cluster.kube.client import MERGE_PATCH, KubeClient
from kubesched.cluster.kube.errors import ApiStatusError, FencedError, KubeClientError
from kubesched.cluster.kube.resources import PODS
from kubesched.explanation.kssresults import DEFAULT_BUDGET, HISTORY, ProfilePlugins, result_annotations
from kubesched.explanation.attempt import Attempt

log = logging.getLogger(__name__)

UNSETTLED = ("Binding", "Waiting")


class ResultAnnotator:
    def __init__(self, client: KubeClient, plugins: Mapping[str, ProfilePlugins],
                 current_pod: Callable[[Pod], Pod | None], guard: Callable[[], None] | None = None,
                 budget: int = DEFAULT_BUDGET, settle: float = 30.0, max_pending: int = 10_000) -> None:
        self.client = client
        self.plugins = dict(plugins)
        self.current_pod = current_pod
        self.guard = guard
        self.budget = budget
        self.settle = settle
        self.max_pending = max_pending
        self.written = 0
        self.dropped = 0
        self._pending: OrderedDict[str, tuple[Pod, Attempt, float]] = OrderedDict()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="result-annotations", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def on_attempt(self, pod: Pod, att: Attempt, seconds: float) -> None:
        """The loop's attempt hook: remember the attempt; the writer thread does the rest."""
        with self._cond:
            self._pending.pop(pod.uid, None)
            self._pending[pod.uid] = (pod, att, time.monotonic())
            if len(self._pending) > self.max_pending:
                self._pending.popitem(last=False)
                self.dropped += 1
            self._cond.notify()

    def _next(self) -> tuple[Pod, Attempt] | None:
        with self._cond:
            while not self._stopping:
                now = time.monotonic()
                for uid, (pod, att, since) in self._pending.items():
                    if att.result not in UNSETTLED or now - since >= self.settle:
                        del self._pending[uid]
                        return pod, att
                self._cond.wait(0.2 if self._pending else None)
            return None

    def _run(self) -> None:
        while True:
            item = self._next()
            if item is None:
                return
            try:
                self._write(*item)
            except Exception:  # noqa: BLE001 - an annotation must never stop the writer
                log.exception("writing the result annotations of %s", item[0].key)

    def _write(self, pod: Pod, att: Attempt) -> None:
        cur = self.current_pod(pod)
        if cur is None:
            return  # deleted meanwhile
        previous = ((cur.raw.get("metadata") or {}).get("annotations") or {}).get(HISTORY)
        history = _history(previous)
        plugins = self.plugins.get(pod.scheduler_name, ProfilePlugins())
        ann = result_annotations(att, plugins, history, self.budget)
        body = {"metadata": {"annotations": ann}}
        path = PODS.object_path(pod.namespace, pod.name)
        try:
            self.client.request("PATCH", path, body=body, content_type=MERGE_PATCH, guard=self.guard)
            self.written += 1
        except FencedError:
            return
        except ApiStatusError as exc:
            log.log(logging.DEBUG if exc.not_found else logging.WARNING,
                    "result annotations of %s: %s", pod.key, exc.message)
        except KubeClientError as exc:
            log.warning("result annotations of %s: %s", pod.key, exc)


def _history(value: object) -> list[dict[str, str]]:
    if not isinstance(value, str):
        return []
    try:
        doc = json.loads(value)
    except ValueError:
        return []
    return [h for h in doc if isinstance(h, dict)] if isinstance(doc, list) else []
