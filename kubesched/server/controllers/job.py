"""The Job controller (batch/v1): pods until enough have succeeded, or too many failed.

As upstream's ``pkg/controller/job``:

* it keeps ``min(parallelism, completions - succeeded)`` pods active (for a work-queue
  Job without ``completions``: ``parallelism`` until one pod has succeeded), each named
  ``<job>-<5 characters>`` from the template, owned by the Job (:func:`.podmaking.job_pod`);
  an ``Indexed`` Job's pods take the lowest completion indexes that have no active or
  succeeded pod, named ``<job>-<index>-<5 characters>``;
* ``status.active``/``ready``/``succeeded``/``failed`` count the Job's pods by phase
  (``succeeded``/``failed`` never go down, so a pod deleted after it finished still counts);
  ``startTime`` is set on the first sync, ``completionTime`` on success;
* when ``succeeded`` reaches ``completions`` any pod still active is deleted and the Job
  gets ``SuccessCriteriaMet`` and ``Complete`` (reason ``CompletionsReached``, "Reached expected
  number of succeeded pods"); when ``failed`` exceeds ``backoffLimit`` it gets
  ``FailureTarget``, its active pods are deleted, and then ``Failed`` (reason
  ``BackoffLimitExceeded``, "Job has reached the specified backoff limit"). So
  ``kubectl wait --for=condition=complete job/x`` works as against a real cluster.

Pods finish on simulated nodes after their ``kubesched.io/run-duration`` annotation
(:mod:`kubesched.server.nodes.lifecycle`). Not modelled: suspend,
``activeDeadlineSeconds``, pod failure and success policies, the pod-recreation backoff
delay and the ``batch.kubernetes.io/job-tracking`` finalizer (counts come from the pods
still stored and never decrease).
"""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Callable
from typing import Any

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import (
    Controller, controller_ref, deleting, key_of, meta, owner_key, pod_active, pod_ready, timestamp, uid_of,
    update_with_retry,
)
from kubesched.server.controllers.events import NORMAL, WARNING, EventRecorder
from kubesched.server.controllers.informer import Informer, Key, Obj
from kubesched.server.controllers.naming import random_suffix
from kubesched.server.controllers.podmaking import JOB_KIND, completion_index, is_indexed, job_pod

log = logging.getLogger(__name__)

JOBS = "jobs.batch"
COMPLETE_REASON, COMPLETE_MESSAGE = "CompletionsReached", "Reached expected number of succeeded pods"
FAILED_REASON, FAILED_MESSAGE = "BackoffLimitExceeded", "Job has reached the specified backoff limit"


def condition_true(job: Obj, type_: str) -> bool:
    return any(isinstance(c, dict) and c.get("type") == type_ and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def pods_wanted(job: Obj, succeeded: int) -> int:
    """How many pods the Job keeps active: ``parallelism``, bounded by the completions left."""
    spec = job.get("spec") or {}
    want = int(spec.get("parallelism", 1))
    completions = spec.get("completions")
    return want if completions is None else max(0, min(want, int(completions) - succeeded))


def pending_indexes(job: Obj, pods: list[Obj], count: int) -> list[int | None]:
    """What the next ``count`` pods are for: None each for a NonIndexed Job; for an Indexed
    one the lowest completion indexes with neither an active nor a succeeded pod
    (``firstPendingIndexes``, ``pkg/controller/job/indexed_job_utils.go``)."""
    if not is_indexed(job):
        return [None] * count
    taken = {completion_index(p) for p in pods
             if pod_active(p) or (p.get("status") or {}).get("phase") == "Succeeded"}
    completions = int((job.get("spec") or {}).get("completions") or 0)
    free: list[int | None] = [i for i in range(completions) if i not in taken]
    return free[:count]


def finished(job: Obj) -> bool:
    return condition_true(job, "Complete") or condition_true(job, "Failed")


class JobController(Controller[Key]):
    name = "job-controller"

    def __init__(self, registry: Registry, jobs: Informer, pods: Informer, rng: random.Random,
                 recorder: EventRecorder, *, clock: Callable[[], float] | None = None, workers: int = 1) -> None:
        super().__init__(workers)
        self.registry = registry
        self.jobs = jobs
        self.pods = pods
        self.rng = rng
        self.recorder = recorder
        self.clock: Callable[[], float] = clock if clock is not None else registry.clock
        jobs.add_handler(self._on_job)
        pods.add_handler(self._on_pod)

    def _on_job(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None:
            self.queue.add(key_of(new))

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        key = owner_key(new if new is not None else old, JOB_KIND)
        if key is not None:
            self.queue.add(key)

    def _pods_of(self, job: Obj) -> list[Obj]:
        uid = uid_of(job)
        return [p for p in self.pods.by_index("namespace", str(meta(job).get("namespace") or ""))
                if (controller_ref(p) or {}).get("uid") == uid]

    def sync(self, key: Key) -> None:
        job = self.jobs.get(*key)
        if job is None or deleting(job) or finished(job):
            return
        spec, status = job.get("spec") or {}, job.get("status") or {}
        pods = self._pods_of(job)
        active = [p for p in pods if pod_active(p)]
        phases = [(p.get("status") or {}).get("phase") for p in pods]
        succeeded = max(int(status.get("succeeded") or 0), phases.count("Succeeded"))
        failed = max(int(status.get("failed") or 0), phases.count("Failed"))
        completions = spec.get("completions")
        done = succeeded >= completions if completions is not None else succeeded > 0
        over_limit = failed > int(spec.get("backoffLimit", 6))
        if over_limit or (done and active):  # no more pods needed: stop the ones still running
            for p in active:
                self._delete_pod(job, p)
            active = []
        elif not done:
            want = pods_wanted(job, succeeded)
            if len(active) < want:
                active += self._create_pods(key, job, pending_indexes(job, pods, want - len(active)))
        self._write_status(key, job, active, succeeded, failed, done, over_limit)

    def _create_pods(self, key: Key, job: Obj, indexes: list[int | None]) -> list[Obj]:
        ns = key[0]
        out: list[Obj] = []
        for index in indexes:
            pod = job_pod(job, index)
            pmeta = pod["metadata"]
            created = None
            for _attempt in range(5):
                pmeta["name"] = f"{pmeta['generateName']}{random_suffix(self.rng)}"
                try:
                    created = self.registry.create("pods", ns, pod)
                    break
                except ApiError as exc:
                    if exc.reason == "AlreadyExists":
                        continue
                    self.recorder.event(job, WARNING, "FailedCreate", f"Error creating: {exc.message}")
                    return out
            if created is None:
                return out
            self.expect(key, self.pods, created)
            self.recorder.event(job, NORMAL, "SuccessfulCreate", f"Created pod: {meta(created).get('name')}")
            out.append(created)
        return out

    def _delete_pod(self, job: Obj, pod: Obj) -> None:
        try:
            self.registry.delete("pods", meta(pod).get("namespace"), str(meta(pod).get("name")))
            self.recorder.event(job, NORMAL, "SuccessfulDelete", f"Deleted pod: {meta(pod).get('name')}")
        except ApiError as exc:
            if exc.code != 404:
                raise

    def _write_status(self, key: Key, job: Obj, active: list[Obj], succeeded: int, failed: int,
                      done: bool, over_limit: bool) -> None:
        now = timestamp(self.clock())
        ns, name = key

        def mutate(cur: Obj) -> Obj | None:
            if uid_of(cur) != uid_of(job) or finished(cur):
                return None
            st = cur.setdefault("status", {})
            before = copy.deepcopy(st)
            st.setdefault("startTime", now)
            st.update({"active": len(active), "ready": sum(1 for p in active if pod_ready(p)),
                       "succeeded": succeeded, "failed": failed, "terminating": 0, "uncountedTerminatedPods": {}})
            for k in ("active", "succeeded", "failed"):
                if not st[k]:
                    st.pop(k)
            if over_limit:
                self._condition(st, "FailureTarget", FAILED_REASON, FAILED_MESSAGE, now)
                self._condition(st, "Failed", FAILED_REASON, FAILED_MESSAGE, now)
            elif done:
                self._condition(st, "SuccessCriteriaMet", COMPLETE_REASON, COMPLETE_MESSAGE, now)
                self._condition(st, "Complete", COMPLETE_REASON, COMPLETE_MESSAGE, now)
                st["completionTime"] = now
            return None if st == before else cur

        written = update_with_retry(lambda: self.registry.get(JOBS, ns, name), mutate,
                                    lambda o: self.registry.update(JOBS, ns, name, o, subresource="status"))
        if written is not None:
            self.expect(key, self.jobs, written)
            if finished(written):
                kind = "Completed" if condition_true(written, "Complete") else "BackoffLimitExceeded"
                self.recorder.event(job, NORMAL if kind == "Completed" else WARNING, kind,
                                    "Job completed" if kind == "Completed" else FAILED_MESSAGE)
                log.info("job %s/%s: %s", ns, name, kind)

    @staticmethod
    def _condition(status: dict[str, Any], type_: str, reason: str, message: str, now: str) -> None:
        conds = status.setdefault("conditions", [])
        if any(c.get("type") == type_ for c in conds if isinstance(c, dict)):
            return
        conds.append({"type": type_, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
                      "reason": reason, "message": message})
