"""PriorityClasses, PodDisruptionBudgets and PodGroups: parsed with the scheduler's own
object model on every write, so what is stored is what the scheduler can read."""

from __future__ import annotations

from typing import Any

from kubesched.api.defaults import apply_priority_class_defaults, validate_priority_class
from kubesched.api.errors import DecodeError
from kubesched.api.policy import PodDisruptionBudget, PriorityClass
from kubesched.api.podgroup import PodGroup
from kubesched.server.apiserver.strategies.pod import parse_causes
from kubesched.server.apiserver.strategies.base import Admission, Context, StatusStrategy, Strategy
from kubesched.server.apiserver.strategies.validation import Cause, decode_cause, invalid


class PriorityClassStrategy(Strategy):
    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        out = apply_priority_class_defaults(obj)
        obj.clear()
        obj.update(out)

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        try:
            pc = PriorityClass.from_dict(obj)
            others = [p for n, p in ctx.priority_classes().items() if n != pc.name]
            validate_priority_class(pc, others)
        except DecodeError as exc:
            if "already marked as default" in exc.message:  # the Priority admission plugin
                raise Admission(exc.message) from None
            return [decode_cause(exc, obj)]
        return []

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        causes: list[Cause] = []
        for key in ("value", "preemptionPolicy"):
            if new.get(key) != old.get(key):
                causes.append(("FieldValueForbidden", key, "Forbidden: may not be changed in an update."))
        return causes


class PodDisruptionBudgetStrategy(StatusStrategy):
    tracks_generation = True
    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        causes = parse_causes(PodDisruptionBudget.from_dict, obj)
        spec = obj.get("spec") or {}
        if isinstance(spec, dict) and spec.get("minAvailable") is not None and \
                spec.get("maxUnavailable") is not None:
            causes.append(invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
        return causes


class PodGroupStrategy(StatusStrategy):
    tracks_generation = True
    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        return parse_causes(PodGroup.from_dict, obj)
