"""events.k8s.io/v1 types, declared once.

Every field with its JSON name and type, whether it is required, its protobuf field number
and Go flags (the notation: :mod:`kubesched.api.types.grammar`).

Facts of ``k8s.io/api`` v0.34 (types.go, generated.proto).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "Event": (
        "apiVersion s; kind s; metadata @meta:ObjectMeta 1; eventTime! mt 2; series @events:EventSeries 3p; "
        "reportingController s 4; reportingInstance s 5; action s 6; reason s 7; regarding @core:ObjectReference 8; "
        "related @core:ObjectReference 9p; note s 10; type s 11; deprecatedSource @core:EventSource 12; "
        "deprecatedFirstTimestamp t 13; deprecatedLastTimestamp t 14; deprecatedCount i32 15"),
    "EventSeries": "count! i32 1; lastObservedTime! mt 2",
}

PROTOBUF_ONLY: frozenset[str] = frozenset()
