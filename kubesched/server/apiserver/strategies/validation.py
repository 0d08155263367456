"""Validation shared by every kind: object names, labels, annotations, and turning the
object model's :class:`~kubesched.api.errors.DecodeError` into 422 field causes.

Messages are apimachinery's (``validation.IsDNS1123Subdomain`` and friends), so a user
sees what a real cluster would tell them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from kubesched.api.errors import DecodeError

Cause = tuple[str, str, str]  # (reason, field, message)

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = rf"({_QUALIFIED_NAME})?"

_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                  "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                  f"regex used for validation is '{_DNS1123_SUBDOMAIN}')")
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
              "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
              f"regex used for validation is '{_DNS1123_LABEL}')")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
                "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
                f"'abc-123', regex used for validation is '{_DNS1035_LABEL}')")
_QNAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
              "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
              f"used for validation is '{_QUALIFIED_NAME}')")
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
              "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
              f"'my_value',  or '12345', regex used for validation is '{_LABEL_VALUE}')")
TOTAL_ANNOTATION_SIZE = 256 * 1024

NAME_RULES = ("subdomain", "label", "dns1035", "path")


def _q(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def invalid(field: str, value: Any, message: str) -> Cause:
    return ("FieldValueInvalid", field, f"Invalid value: {_q(value)}: {message}")


def required(field: str) -> Cause:
    return ("FieldValueRequired", field, "Required value")


def forbidden(field: str, message: str) -> Cause:
    return ("FieldValueForbidden", field, f"Forbidden: {message}")


def name_problems(name: str, rule: str) -> list[str]:
    if rule == "path":
        if name in (".", ".."):
            return [f"may not be '{name}'"]
        return [f"may not contain '{c}'" for c in ("/", "%") if c in name]
    limit, pattern, msg = {
        "subdomain": (253, _DNS1123_SUBDOMAIN, _SUBDOMAIN_MSG),
        "label": (63, _DNS1123_LABEL, _LABEL_MSG),
        "dns1035": (63, _DNS1035_LABEL, _DNS1035_MSG),
    }[rule]
    out = []
    if len(name) > limit:
        out.append(f"must be no more than {limit} characters")
    if not re.fullmatch(pattern, name):
        out.append(msg)
    return out


def qualified_name_problems(key: str) -> list[str]:
    prefix, _, name = key.rpartition("/")
    out = []
    if "/" in prefix:
        return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character with an optional DNS subdomain prefix "
                "and '/' (e.g. 'example.com/MyName')"]
    if prefix:
        out += [f"prefix part {p}" for p in name_problems(prefix, "subdomain")]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > 63:
        out.append("name part must be no more than 63 characters")
    elif not re.fullmatch(_QUALIFIED_NAME, name):
        out.append(_QNAME_MSG)
    return out


def validate_metadata(obj: Mapping[str, Any], name_rule: str, *, namespaced: bool) -> list[Cause]:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return [required("metadata")]
    causes: list[Cause] = []
    name = meta.get("name")
    if not name:
        causes.append(("FieldValueRequired", "metadata.name", "Required value: name or generateName is required"))
    elif not isinstance(name, str):
        causes.append(invalid("metadata.name", name, "must be a string"))
    else:
        causes += [invalid("metadata.name", name, m) for m in name_problems(name, name_rule)]
    if namespaced and isinstance(meta.get("namespace"), str):
        causes += [invalid("metadata.namespace", meta["namespace"], m)
                   for m in name_problems(meta["namespace"], "label")]
    labels = meta.get("labels")
    if labels is not None:
        if not isinstance(labels, Mapping):
            causes.append(invalid("metadata.labels", labels, "must be a map of strings"))
        else:
            for k, v in labels.items():
                causes += [invalid("metadata.labels", k, m) for m in qualified_name_problems(str(k))]
                if not isinstance(v, str):
                    causes.append(invalid("metadata.labels", v, "label values must be strings"))
                elif len(v) > 63:
                    causes.append(invalid("metadata.labels", v, "must be no more than 63 characters"))
                elif not re.fullmatch(_LABEL_VALUE, v):
                    causes.append(invalid("metadata.labels", v, _VALUE_MSG))
    ann = meta.get("annotations")
    if ann is not None:
        if not isinstance(ann, Mapping) or not all(isinstance(v, str) for v in ann.values()):
            causes.append(invalid("metadata.annotations", ann, "must be a map of strings"))
        else:
            size = 0
            for k, v in ann.items():
                causes += [invalid("metadata.annotations", k, m) for m in qualified_name_problems(str(k))]
                size += len(k) + len(v)
            if size > TOTAL_ANNOTATION_SIZE:
                causes.append(("FieldValueTooLong", "metadata.annotations",
                               f"Too long: must have at most {TOTAL_ANNOTATION_SIZE} bytes"))
    return causes


_PATH_RE = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def value_at(obj: Any, path: str) -> Any:
    """The value at a field path such as ``spec.containers[0].resources.requests.cpu``."""
    cur = obj
    for m in _PATH_RE.finditer(path):
        key, idx = m.group(1), m.group(2)
        if key is not None and isinstance(cur, Mapping):
            cur = cur.get(key)
        elif idx is not None and isinstance(cur, list) and int(idx) < len(cur):
            cur = cur[int(idx)]
        else:
            return None
    return cur


_PREFIXES = (("Unsupported value", "FieldValueNotSupported"), ("Required value", "FieldValueRequired"),
             ("Forbidden", "FieldValueForbidden"), ("Invalid value", "FieldValueInvalid"),
             ("Duplicate value", "FieldValueDuplicate"))


def decode_cause(exc: DecodeError, obj: Any, prefix: str = "") -> Cause:
    """A 422 cause for an error raised by the object model while parsing ``obj``."""
    field = ".".join(p for p in (prefix, exc.field) if p)
    for start, reason in _PREFIXES:
        if exc.message.startswith(start):
            return (reason, field, exc.message)
    if exc.message in ("key is required", "name is required", "value is required") or \
            exc.message.startswith("name or generateName is required"):
        return ("FieldValueRequired", field, "Required value")
    if exc.field:
        return invalid(field, value_at(obj, exc.field), exc.message)
    return ("FieldValueInvalid", field, exc.message)
