"""apimachinery ``util/validation``: the syntax of names, label keys and values.

Each ``is_*`` function returns upstream's list of messages (empty when the value is valid),
in upstream's order; callers report the first. The common case, a valid value, is decided
by one precompiled regular expression and remembered in a bounded set, so validating the
same label keys on 150,000 pods costs a set look-up each. Lengths are counted in bytes,
as Go's ``len`` counts them.
"""

from __future__ import annotations

import re

__all__ = [
    "DNS1123_LABEL_MAX", "DNS1123_SUBDOMAIN_MAX", "LABEL_VALUE_MAX", "QUALIFIED_NAME_MAX",
    "dns1123_label_ok", "dns1123_subdomain_ok", "inclusive_range_error", "is_dns1035_label",
    "is_dns1123_label", "is_dns1123_subdomain", "is_qualified_name", "is_valid_label_value",
    "is_valid_percent", "is_valid_port_name", "label_value_ok", "qualified_name_ok", "decimal_int64",
]

QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
DNS1035_LABEL_MAX = 63

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character")
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                      "and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character")
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
                      "an alphabetic character, and end with an alphanumeric character")
_PERCENT_FMT = "[0-9]+%"
_PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'"

_QNAME_RE = re.compile(_QNAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT)
_PERCENT_RE = re.compile(_PERCENT_FMT)
_PORT_NAME_CHARSET_RE = re.compile("[-a-z0-9]+")
_PORT_NAME_LETTER_RE = re.compile("[a-z]")
# A whole qualified name in one expression: optional DNS-1123 subdomain prefix and '/', then
# the name part (lengths are checked apart).
_QUALIFIED_RE = re.compile(f"(?:({_DNS1123_SUBDOMAIN_FMT})/)?{_QNAME_FMT}")

_CACHE_MAX = 1 << 16
_good_qnames: set[str] = set()
_good_label_values: set[str] = set()
_good_labels: set[str] = set()
_good_subdomains: set[str] = set()


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Upstream ``RegexError``."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def _blen(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-8", "surrogatepass"))


def _remember(cache: set[str], value: str) -> None:
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    cache.add(value)


# -- fast checks: True when upstream returns no message ---------------------------------------
def qualified_name_ok(value: str) -> bool:
    if value in _good_qnames:
        return True
    m = _QUALIFIED_RE.fullmatch(value)
    if m is None:
        return False
    prefix = m.group(1)
    name_len = len(value) - (len(prefix) + 1 if prefix is not None else 0)
    if name_len > QUALIFIED_NAME_MAX or (prefix is not None and len(prefix) > DNS1123_SUBDOMAIN_MAX):
        return False
    _remember(_good_qnames, value)
    return True


def label_value_ok(value: str) -> bool:
    if value in _good_label_values:
        return True
    if len(value) > LABEL_VALUE_MAX or not _LABEL_VALUE_RE.fullmatch(value):
        return False
    _remember(_good_label_values, value)
    return True


def dns1123_label_ok(value: str) -> bool:
    if value in _good_labels:
        return True
    if len(value) > DNS1123_LABEL_MAX or not _DNS1123_LABEL_RE.fullmatch(value):
        return False
    _remember(_good_labels, value)
    return True


def dns1123_subdomain_ok(value: str) -> bool:
    if value in _good_subdomains:
        return True
    if len(value) > DNS1123_SUBDOMAIN_MAX or not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        return False
    _remember(_good_subdomains, value)
    return True


# -- upstream's message lists ------------------------------------------------------------------
def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName``: ``[prefix/]name``, prefix a DNS-1123 subdomain, name up to 63."""
    if qualified_name_ok(value):
        return []
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [f"a qualified name {regex_error(_QNAME_MSG, _QNAME_FMT, 'MyName', 'my.name', '123-abc')} "
                "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif _blen(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX))
    if not _QNAME_RE.fullmatch(name):
        errs.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or up to 63 of ``[-A-Za-z0-9_.]`` between alphanumerics."""
    if label_value_ok(value):
        return []
    errs = []
    if _blen(value) > LABEL_VALUE_MAX:
        errs.append(max_len_error(LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``."""
    if dns1123_label_ok(value):
        return []
    errs = []
    if _blen(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    if dns1123_subdomain_ok(value):
        return []
    errs = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``."""
    errs = []
    if _blen(value) > DNS1035_LABEL_MAX:
        errs.append(max_len_error(DNS1035_LABEL_MAX))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_valid_port_name(port: str) -> list[str]:
    """``IsValidPortName`` (IANA_SVC_NAME)."""
    errs = []
    if _blen(port) > 15:
        errs.append(max_len_error(15))
    if not _PORT_NAME_CHARSET_RE.fullmatch(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER_RE.search(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_valid_percent(percent: str) -> list[str]:
    """``IsValidPercent``."""
    if _PERCENT_RE.fullmatch(percent):
        return []
    return [regex_error(_PERCENT_MSG, _PERCENT_FMT, "1%", "93%")]


def mask_trailing_dash(name: str) -> str:
    """``maskTrailingDash``: a generateName may end in '-' (upstream replaces the last two
    characters by 'a', as it does)."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def decimal_int64(text: str) -> int | None:
    """The value of ``text`` when it is a decimal integer in canonical form (apimachinery
    ``content.IsDecimalInteger``: ``0`` or an optional ``-`` then a digit 1-9 and digits)
    within int64, else None."""
    digits = text[1:] if text.startswith("-") else text
    if not digits or not digits.isascii() or not digits.isdigit() or (digits[0] == "0" and text != "0"):
        return None
    n = int(text)
    return n if -(1 << 63) <= n < (1 << 63) else None
