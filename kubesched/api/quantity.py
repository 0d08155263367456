"""Exact resource quantities ("100m", "1Gi", "129e6"), as upstream's ``resource.Quantity``.

Why this exists: every request, limit and allocatable amount in a manifest is a quantity
string, and the scheduler's fit checks compare the int64s upstream derives from them
(``MilliValue()`` for cpu, ``Value()`` for everything else, see upstream
``pkg/scheduler/framework/types.go`` ``Resource.Add``). A float would round differently from
upstream, so the value is kept exact as a :class:`fractions.Fraction`.

Semantics follow apimachinery ``pkg/api/resource/{quantity,suffix,amount,math}.go`` (v1.34.1):
the accepted grammar (including upstream's leniencies: ``"."``, ``"+"``, ``"e3"`` and
``"Ki"`` all parse as zero), rounding away from zero to 1n on parse, the BinarySI cap at
2^63-1, and ``String()`` (including its reuse of an input string that is already canonical).
Deliberate differences, each a case where v1.34.1 is undefined or since fixed upstream:

* ``value()``/``milli_value()`` saturate at the int64 bounds; upstream's result there is
  an overflow artefact (``"10E"`` gives 0, ``"9Ei"`` milli gives -1000).
* Negative values always round away from zero (upstream issue #110653).
* Exponents outside +-(2^31-1) are rejected, not truncated (newer upstream does the same).
* Beyond 1e-9 a value is 1n; numbers with more than ``_MAX_DIGITS`` significant digits
  or at least 10**_MAX_DIGITS in size are rejected (ErrNumeric) to bound the work.
* DecimalSI past "E" and BinarySI past "Ei" print in exponent form ("1e21"), as newer
  upstream does, instead of losing the magnitude.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from functools import total_ordering

from kubesched.api.errors import QuantityError

__all__ = [
    "ERR_FORMAT_WRONG", "ERR_NUMERIC", "ERR_SUFFIX", "Format", "Quantity",
    "cpu_millis", "parse_quantity", "to_int64",
]

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{_SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

# The language upstream's hand-written scanner (parseQuantityString) accepts:
# sign, digits, optional "." and digits, suffix letters, optional sign, digits.
_SCAN = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_EXPONENT = re.compile(r"[eE]([+-]?)([0-9]+)")

MAX_INT64 = 2**63 - 1
MIN_INT64 = -(2**63)
_MAX_INT32 = 2**31 - 1
_NANO = 10**9
_MAX_DIGITS = 1000


class Format(StrEnum):
    """How a quantity is written back out; upstream's ``resource.Format`` values."""

    DECIMAL_EXPONENT = "DecimalExponent"  # 12e6
    BINARY_SI = "BinarySI"  # 12Mi
    DECIMAL_SI = "DecimalSI"  # 12M


_DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SI = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX = {e: s for s, e in _DECIMAL_SI.items()}
_BINARY_SUFFIX = {e // 10: s for s, e in _BINARY_SI.items()} | {0: ""}


@total_ordering
@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Quantity:
    """An exact amount (always a multiple of 1e-9, as after upstream's parse) and its format.

    Equality, ordering and hashing use the amount only, as upstream's ``Cmp``/``Equal`` do:
    ``parse_quantity("1Gi") == parse_quantity("1024Mi") == parse_quantity("1073741824")``.
    """

    amount: Fraction = Fraction(0)
    format: Format = Format.DECIMAL_SI
    _text: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "amount", Fraction(self.amount))
        if (self.amount * _NANO).denominator != 1:
            raise ValueError(f"quantity amount {self.amount} is not a multiple of 1e-9")

    def value(self) -> int:
        """Upstream ``Value()``: rounded away from zero to an integer, saturated to int64."""
        a = self.amount
        if a.denominator == 1:  # whole: no Fraction arithmetic (every pod's decode reads these)
            return _saturate(a.numerator)
        return _saturate(_round_away(a))

    def milli_value(self) -> int:
        """Upstream ``MilliValue()``: ``amount * 1000`` rounded away from zero, saturated."""
        a = self.amount
        n = a.numerator * 1000
        if n % a.denominator == 0:  # a whole number of millis: integer arithmetic only
            return _saturate(n // a.denominator)
        return _saturate(_round_away(a * 1000))

    def is_zero(self) -> bool:
        return self.amount == 0

    def __str__(self) -> str:
        return self._text if self._text is not None else _canonical(self.amount, self.format)

    def __add__(self, other: Quantity) -> Quantity:
        """Upstream ``Add``: keeps this format unless this is zero, then takes ``other``'s."""
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.amount == 0 else self.format
        return Quantity(amount=self.amount + other.amount, format=fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        """Upstream ``Sub``: same format rule as :meth:`__add__`."""
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other.format if self.amount == 0 else self.format
        return Quantity(amount=self.amount - other.amount, format=fmt)

    def __neg__(self) -> Quantity:
        return Quantity(amount=-self.amount, format=self.format)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.amount == other.amount

    def __hash__(self) -> int:
        return hash(self.amount)

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.amount < other.amount


_PARSED: dict[str, Quantity] = {}  # text -> its (immutable) Quantity: pods repeat "100m", "16Mi"...
_PARSED_MAX = 4096


def parse_quantity(s: str | int | float, *, field: str = "") -> Quantity:
    """Parse as upstream ``ParseQuantity``; raise :class:`QuantityError` where it errs.

    YAML ints and floats (``cpu: 2``, ``cpu: 0.5``) are parsed from their ``str``/``repr``.
    Texts that parsed are remembered (up to 4,096 of them): decoding a pod parses the same
    few quantities again and again (a watched pod is decoded at each of its changes), and
    the exact arithmetic costs tens of microseconds each. Errors are never remembered.
    """
    if type(s) is str:
        q = _PARSED.get(s)
        if q is None:
            q = _parse(s, field)
            if len(_PARSED) < _PARSED_MAX:
                _PARSED[s] = q
        return q
    return _parse(s, field)


def _parse(s: str | int | float, field: str) -> Quantity:
    if isinstance(s, bool) or not isinstance(s, (str, int, float)):
        raise QuantityError(ERR_FORMAT_WRONG, field=field)
    try:
        text = s if isinstance(s, str) else repr(s)
    except ValueError:  # an int past Python's int-to-str digit limit
        raise QuantityError(ERR_NUMERIC, field=field) from None
    m = _SCAN.fullmatch(text)
    if not text or m is None:
        raise QuantityError(ERR_FORMAT_WRONG, field=field)
    sign, raw_num, raw_denom, suffix = m.groups()
    denom = raw_denom or ""
    num = raw_num.lstrip("0") or "0"
    base, exponent, fmt = _interpret(suffix, field)
    fast = _int64_fast_path(num, denom, base, exponent)
    if not raw_num and not denom and not fast:
        # Upstream's slow path hands an empty number ("e-10", "Ei") to inf.Dec, which refuses it.
        raise QuantityError(ERR_NUMERIC, field=field)

    significant = (num + denom).lstrip("0")
    digits = significant.rstrip("0")
    e10 = (exponent if base == 10 else 0) - len(denom) + len(significant) - len(digits)
    if len(digits) > _MAX_DIGITS or (digits and len(digits) + e10 > _MAX_DIGITS):
        raise QuantityError(ERR_NUMERIC, field=field)
    if digits and len(digits) + e10 < -_MAX_DIGITS:
        exact = Fraction(1, 10**_MAX_DIGITS)  # far below 1n, even times 2^60
    else:
        exact = int(digits or "0") * Fraction(10) ** e10 * (2**exponent if base == 2 else 1)

    amount = Fraction(_round_away(exact * _NANO), _NANO)  # rounds a non-zero value up to 1n
    if fmt is Format.BINARY_SI:
        amount = min(amount, Fraction(MAX_INT64))
        if 0 < amount < 1:
            fmt = Format.DECIMAL_SI
    q = Quantity(amount=-amount if sign == "-" else amount, format=fmt)
    if fast and _kept_verbatim(num, denom, base, exponent):
        object.__setattr__(q, "_text", text)
    return q


def cpu_millis(q: Quantity) -> int:
    """The scheduler's MilliCPU for a cpu quantity (upstream ``MilliValue()``)."""
    return q.milli_value()


def to_int64(resource_name: str, q: Quantity) -> int:
    """How the scheduler stores a resource: milli-units for "cpu", ``value()`` otherwise."""
    return q.milli_value() if resource_name == "cpu" else q.value()


def _interpret(suffix: str, field: str) -> tuple[int, int, Format]:
    """Upstream ``quantitySuffixer.interpret``: (base, exponent, format) of a suffix."""
    if suffix in _DECIMAL_SI:
        return 10, _DECIMAL_SI[suffix], Format.DECIMAL_SI
    if suffix in _BINARY_SI:
        return 2, _BINARY_SI[suffix], Format.BINARY_SI
    m = _EXPONENT.fullmatch(suffix)
    magnitude = m.group(2).lstrip("0") if m else ""
    if m is None or len(magnitude) > 10 or int(magnitude or "0") > _MAX_INT32:
        raise QuantityError(ERR_SUFFIX, field=field)
    return 10, int(m.group(1) + m.group(2)), Format.DECIMAL_EXPONENT


def _int64_fast_path(num: str, denom: str, base: int, exponent: int) -> bool:
    """Whether upstream parses into its int64 form (digits to spare, scale of 1n or more)."""
    if base == 2:
        return not denom and 14 - len(num) - exponent * 3 // 10 >= 0
    return len(num) + len(denom) <= 18 and exponent - len(denom) >= -9


def _kept_verbatim(num: str, denom: str, base: int, exponent: int) -> bool:
    """Whether upstream's int64 fast path keeps the input string as its ``String()``."""
    if base == 2:
        return int(num) % 8 != 0
    shifted = num + denom
    return (exponent - len(denom)) % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


def _round_away(x: Fraction) -> int:
    magnitude = -(-abs(x.numerator) // x.denominator)
    return magnitude if x >= 0 else -magnitude


def _saturate(n: int) -> int:
    return max(MIN_INT64, min(MAX_INT64, n))


def _strip(n: int, base: int) -> tuple[int, int]:
    """Upstream ``removeInt64Factors``: ``n == result * base**times``."""
    times = 0
    while n != 0 and n % base == 0:
        n //= base
        times += 1
    return n, times


def _canonical(amount: Fraction, fmt: Format) -> str:
    """Upstream ``CanonicalizeBytes``: largest exponent, no fraction digits, no lost precision."""
    if amount == 0:
        return "0"
    if fmt is Format.BINARY_SI:
        if -1024 < amount < 1024 or amount.denominator != 1:
            fmt = Format.DECIMAL_SI
        else:
            mantissa, power = _strip(int(amount), 1024)
            if power in _BINARY_SUFFIX:
                return f"{mantissa}{_BINARY_SUFFIX[power]}"
            fmt = Format.DECIMAL_EXPONENT
    mantissa, exp = _strip(int(amount * _NANO), 10)
    exp -= 9
    mantissa, exp = mantissa * 10 ** (exp % 3), exp - exp % 3
    if fmt is Format.DECIMAL_SI and exp in _DECIMAL_SUFFIX:
        return f"{mantissa}{_DECIMAL_SUFFIX[exp]}"
    return f"{mantissa}e{exp}" if exp else str(mantissa)
