"""CEL device selectors, evaluated as upstream's DRA CEL environment does
(``k8s.io/dynamic-resource-allocation/cel``), behind this one module.

Why this exists: DeviceClasses and requests select devices with CEL expressions over
``device.driver``, ``device.attributes[domain].name``, ``device.capacity[domain].name`` and
``device.allowMultipleAllocations``.
The expressions are evaluated with ``cel-python`` (``celpy``), a maintained pure-Python
CEL implementation: it needs no compiler, accepts custom functions (for upstream's
``quantity`` and ``semver`` libraries) and dispatches member calls (``q.compareTo(x)``)
to them. Each expression is compiled once (``compile_selector`` caches the program), and
each (expression, device) result is cached too: devices are immutable values (a changed
ResourceSlice is a new object), so a selector is evaluated at most once per device, never
once per pod, which keeps the scheduling cycle fast.

As upstream: ``device.attributes["other.domain"]`` of a domain the device has nothing in
is an empty map (``newStringInterfaceMapWithDefault``), and then ``.name`` on it is the
runtime error ``no such key: name``. Errors are raised as :class:`CelError` with cel-go's
wording where it is known; the allocator wraps them in upstream's
``class X: selector #i: CEL runtime error: ...``.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import celpy
from celpy import celtypes
from celpy.evaluation import CELEvalError

from kubesched.api.dra import Device
from kubesched.api.quantity import parse_quantity

_MAX_CACHED_RESULTS = 1_000_000


class CelError(Exception):
    """A selector that does not compile, or fails while evaluating; the message is CEL's."""


class CelQuantity:
    """Upstream's ``quantity`` CEL type (``k8s.io/apiserver/pkg/cel/library/quantity.go``)."""

    __slots__ = ("amount",)

    def __init__(self, amount: Fraction) -> None:
        self.amount = amount

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelQuantity) and self.amount == other.amount

    def __hash__(self) -> int:
        return hash(self.amount)

    def __repr__(self) -> str:
        return f"quantity({self.amount})"


_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


class CelSemver:
    """Upstream's ``semver`` CEL type: major, minor, patch and an optional pre-release."""

    __slots__ = ("key", "parts")

    def __init__(self, text: str) -> None:
        m = _SEMVER.match(text)
        if m is None:
            raise CelError(f"could not parse {text!r} as semver")
        self.parts = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        pre = m.group(4)
        # a release sorts after its pre-releases; pre-release identifiers compare per semver 2.0
        ids = tuple((0, int(x), "") if x.isdigit() else (1, 0, x) for x in pre.split(".")) if pre else ()
        self.key: tuple[Any, ...] = (self.parts, 0 if pre else 1, ids)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelSemver) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def _cmp(a: Any, b: Any) -> int:
    if isinstance(a, CelQuantity) and isinstance(b, CelQuantity):
        x, y = a.amount, b.amount
    elif isinstance(a, CelSemver) and isinstance(b, CelSemver):
        return (a.key > b.key) - (a.key < b.key)
    else:
        raise CelError(f"no such overload: {type(a).__name__}.compareTo({type(b).__name__})")
    return (x > y) - (x < y)


def _quantity(s: Any) -> CelQuantity:
    try:
        return CelQuantity(parse_quantity(str(s)).amount)
    except Exception as exc:  # noqa: BLE001 - any parse failure is CEL's error
        raise CelError(f"quantities must match the regular expression: {s}") from exc


def _is_quantity(s: Any) -> celtypes.BoolType:
    try:
        parse_quantity(str(s))
    except Exception:  # noqa: BLE001
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _is_semver(s: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_SEMVER.match(str(s)) is not None)


def _num(q: Any, what: str) -> Fraction:
    if not isinstance(q, CelQuantity):
        raise CelError(f"no such overload: {what}")
    return q.amount


FUNCTIONS: dict[str, Any] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": lambda s: CelSemver(str(s)),
    "isSemver": _is_semver,
    "compareTo": lambda a, b: celtypes.IntType(_cmp(a, b)),
    "isGreaterThan": lambda a, b: celtypes.BoolType(_cmp(a, b) > 0),
    "isLessThan": lambda a, b: celtypes.BoolType(_cmp(a, b) < 0),
    "sign": lambda a: celtypes.IntType((_num(a, "sign") > 0) - (_num(a, "sign") < 0)),
    "isInteger": lambda a: celtypes.BoolType(_num(a, "isInteger").denominator == 1),
    "asInteger": lambda a: celtypes.IntType(int(_num(a, "asInteger"))),
    "asApproximateFloat": lambda a: celtypes.DoubleType(float(_num(a, "asApproximateFloat"))),
    "add": lambda a, b: CelQuantity(_num(a, "add") + (b.amount if isinstance(b, CelQuantity) else Fraction(int(b)))),
    "sub": lambda a, b: CelQuantity(_num(a, "sub") - (b.amount if isinstance(b, CelQuantity) else Fraction(int(b)))),
    "major": lambda v: celtypes.IntType(v.parts[0]),
    "minor": lambda v: celtypes.IntType(v.parts[1]),
    "patch": lambda v: celtypes.IntType(v.parts[2]),
}


class _DomainMap(celtypes.MapType):
    """``device.attributes`` / ``device.capacity``: a missing domain is an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType({})


def _value(kind: str, v: Any) -> Any:
    if kind == "int":
        return celtypes.IntType(v)
    if kind == "bool":
        return celtypes.BoolType(v)
    if kind == "version":
        return CelSemver(v)
    return celtypes.StringType(v)


def _domains(items: dict[str, Any]) -> _DomainMap:
    out: dict[Any, dict[Any, Any]] = {}
    for qname, v in items.items():
        domain, _, ident = qname.rpartition("/")
        out.setdefault(celtypes.StringType(domain), {})[celtypes.StringType(ident)] = v
    return _DomainMap({k: celtypes.MapType(v) for k, v in out.items()})


def device_activation(driver: str, device: Device) -> dict[str, Any]:
    """The ``device`` variable upstream's environment binds for one device."""
    attrs = _domains({k: _value(kind, v) for k, (kind, v) in device.attributes.items()})
    caps = _domains({k: CelQuantity(q.amount) for k, q in device.capacity.items()})
    dev = celtypes.MapType({celtypes.StringType("driver"): celtypes.StringType(driver),
                            celtypes.StringType("attributes"): attrs,
                            celtypes.StringType("capacity"): caps,
                            celtypes.StringType("allowMultipleAllocations"):
                                celtypes.BoolType(device.allow_multiple_allocations)})
    return {"device": dev}


class CompiledSelector:
    """One compiled CEL selector; ``matches`` caches its result per device."""

    _env = celpy.Environment()

    def __init__(self, expression: str) -> None:
        self.expression = expression
        try:
            self._program = self._env.program(self._env.compile(expression), functions=FUNCTIONS)
        except Exception as exc:  # noqa: BLE001 - celpy's parse errors have several classes
            raise CelError(" ".join(str(exc).split())) from exc
        self._results: dict[Device, bool] = {}

    def matches(self, driver: str, device: Device) -> bool:
        hit = self._results.get(device)
        if hit is not None:
            return hit
        try:
            out = self._program.evaluate(_activation(driver, device))
        except CelError:
            raise
        except CELEvalError as exc:
            raise CelError(_eval_message(exc)) from exc
        except Exception as exc:  # noqa: BLE001 - an error raised inside a library function
            raise CelError(str(exc)) from exc
        if isinstance(out, CELEvalError):
            raise CelError(_eval_message(out))
        if not isinstance(out, celtypes.BoolType):
            raise CelError(f"must evaluate to bool, got {type(out).__name__}")
        if len(self._results) > _MAX_CACHED_RESULTS:
            self._results.clear()
        self._results[device] = bool(out)
        return bool(out)


_activations: dict[tuple[str, Device], dict[str, Any]] = {}


def _activation(driver: str, device: Device) -> dict[str, Any]:
    key = (driver, device)
    act = _activations.get(key)
    if act is None:
        if len(_activations) > _MAX_CACHED_RESULTS:
            _activations.clear()
        act = _activations[key] = device_activation(driver, device)
    return act


def _eval_message(exc: Any) -> str:
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    if len(args) >= 3 and args[0] == "no such key" and args[2]:
        return f"no such key: {args[2][0]}"
    if args and isinstance(args[0], str) and args[0].startswith("no such member in mapping: "):
        return "no such key: " + args[0].rsplit(": ", 1)[1].strip("'")
    if args:
        return str(args[0])
    return str(exc)


_compiled: dict[str, CompiledSelector | CelError] = {}


def compile_selector(expression: str) -> CompiledSelector:
    """The compiled selector for ``expression`` (compiled once; a compile error is cached too)."""
    got = _compiled.get(expression)
    if got is None:
        try:
            got = CompiledSelector(expression)
        except CelError as exc:
            got = exc
        _compiled[expression] = got
    if isinstance(got, CelError):
        raise got
    return got
