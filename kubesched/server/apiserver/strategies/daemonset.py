"""apps/v1 DaemonSets and batch/v1 CronJobs: upstream's defaulting and validation.

DaemonSet (``SetDefaults_DaemonSet``, ``ValidateDaemonSet``): a workload without
``replicas``; ``updateStrategy`` defaults to ``RollingUpdate`` with ``maxUnavailable: 1``
and ``maxSurge: 0``, ``revisionHistoryLimit`` to 10; ``OnDelete`` is the other strategy.

CronJob (``SetDefaults_CronJob``, ``ValidateCronJob``): ``concurrencyPolicy: Allow``,
``suspend: false``, history limits 3 successful / 1 failed; ``schedule`` must parse as a
standard cron expression (five fields or a ``@hourly``-style macro; ``TZ=`` inside the
schedule is refused in favour of ``spec.timeZone``), the job template's pod template must
be valid with ``restartPolicy`` ``OnFailure`` or ``Never``.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from kubesched.server.apiserver.strategies.apps import WorkloadStrategy
from kubesched.server.apiserver.strategies.pod import default_pod_spec, validate_pod_spec
from kubesched.server.apiserver.strategies.base import Context, StatusStrategy, spec_of
from kubesched.server.apiserver.strategies.validation import Cause, invalid, required

DS_STRATEGIES = ("RollingUpdate", "OnDelete")
CONCURRENCY = ("Allow", "Forbid", "Replace")
RESTART_POLICIES = ("OnFailure", "Never")


class DaemonSetStrategy(WorkloadStrategy):
    scaled = False

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        strategy = spec.setdefault("updateStrategy", {})
        if isinstance(strategy, dict):
            strategy.setdefault("type", "RollingUpdate")
            if strategy["type"] == "RollingUpdate":
                ru = strategy.setdefault("rollingUpdate", {})
                if isinstance(ru, dict):
                    ru.setdefault("maxUnavailable", 1)
                    ru.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        causes = super().validate(obj, ctx)
        strategy = spec_of(obj).get("updateStrategy") or {}
        kind = strategy.get("type") if isinstance(strategy, dict) else strategy
        if kind not in DS_STRATEGIES:
            causes.append(("FieldValueNotSupported", "spec.updateStrategy.type",
                           f'Unsupported value: "{kind}": supported values: "OnDelete", "RollingUpdate"'))
        restart = ((spec_of(obj).get("template") or {}).get("spec") or {}).get("restartPolicy")
        if restart not in (None, "Always"):
            causes.append(("FieldValueNotSupported", "spec.template.spec.restartPolicy",
                           f'Unsupported value: "{restart}": supported values: "Always"'))
        return causes

    def to_scale(self, obj: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError("DaemonSets have no scale subresource")


def schedule_problem(schedule: Any) -> str | None:
    """Why a CronJob schedule is refused, or None."""
    if not isinstance(schedule, str) or not schedule.strip():
        return "Required value"
    if "TZ=" in schedule or "CRON_TZ=" in schedule:
        return "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
    if not croniter.is_valid(schedule) or len(schedule.split()) not in (1, 5):
        return f"unparseable schedule: {schedule!r}"
    return None


class CronJobStrategy(StatusStrategy):
    tracks_generation = True

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        self._default_template(spec)

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], subresource: str) -> dict[str, Any]:
        out = super().prepare_update(new, old, subresource)
        if subresource == "":
            self._default_template(spec_of(out))
        return out

    @staticmethod
    def _default_template(spec: dict[str, Any]) -> None:
        pod = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
        if isinstance(pod, dict) and isinstance(pod.get("spec"), dict):
            default_pod_spec(pod["spec"])

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [required("spec")]
        causes: list[Cause] = []
        problem = schedule_problem(spec.get("schedule"))
        if problem == "Required value":
            causes.append(required("spec.schedule"))
        elif problem:
            causes.append(invalid("spec.schedule", spec.get("schedule"), problem))
        tz = spec.get("timeZone")
        if tz is not None:
            try:
                ZoneInfo(str(tz))
            except (ZoneInfoNotFoundError, ValueError):
                causes.append(invalid("spec.timeZone", tz, "unknown time zone " + str(tz)))
        if spec.get("concurrencyPolicy") not in CONCURRENCY:
            causes.append(("FieldValueNotSupported", "spec.concurrencyPolicy",
                           f'Unsupported value: "{spec.get("concurrencyPolicy")}": supported values: '
                           '"Allow", "Forbid", "Replace"'))
        for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit", "startingDeadlineSeconds"):
            v = spec.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                causes.append(invalid(f"spec.{key}", v, "must be greater than or equal to 0"))
        template = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template")
        if not isinstance(template, dict):
            return causes + [required("spec.jobTemplate.spec.template")]
        pod_spec = template.get("spec")
        causes += validate_pod_spec(pod_spec, "spec.jobTemplate.spec.template.spec")
        restart = (pod_spec or {}).get("restartPolicy") if isinstance(pod_spec, dict) else None
        if restart not in RESTART_POLICIES:
            causes.append(("FieldValueNotSupported", "spec.jobTemplate.spec.template.spec.restartPolicy",
                           f'Unsupported value: "{restart}": supported values: "OnFailure", "Never"'))
        return causes
