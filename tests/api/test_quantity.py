"""Tests for kubesched.api.quantity, ported from upstream's quantity_test.go tables.

Upstream file, unless a test says otherwise:
staging/src/k8s.io/apimachinery/pkg/api/resource/quantity_test.go (kubernetes/kubernetes).
Expected values are copied from those tables or computed by hand in a comment.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from functools import reduce

import pytest

from kubesched.api.errors import DecodeError, QuantityError
from kubesched.api.quantity import (
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    MAX_INT64,
    MIN_INT64,
    Format,
    Quantity,
    cpu_millis,
    parse_quantity,
    to_int64,
)

DSI, BSI, DEX = Format.DECIMAL_SI, Format.BINARY_SI, Format.DECIMAL_EXPONENT
KI = 1024


def dec(i: int, exponent: int) -> Fraction:
    """Upstream's ``decQuantity(i, exponent, _)`` amount: i * 10**exponent."""
    return i * Fraction(10) ** exponent


# TestQuantityParse's table: (input, i, exponent, format) as upstream's decQuantity(i, exponent, format).
PARSE_TABLE = [
    ("0", 0, 0, DSI), ("0n", 0, 0, DSI), ("0u", 0, 0, DSI), ("0m", 0, 0, DSI),
    ("0Ki", 0, 0, BSI), ("0k", 0, 0, DSI), ("0Mi", 0, 0, BSI), ("0M", 0, 0, DSI),
    ("0Gi", 0, 0, BSI), ("0G", 0, 0, DSI), ("0Ti", 0, 0, BSI), ("0T", 0, 0, DSI),
    # Quantity less numbers are allowed
    ("1", 1, 0, DSI),
    # Binary suffixes
    ("1Ki", KI, 0, BSI), ("8Ki", 8 * KI, 0, BSI), ("7Mi", 7 * KI**2, 0, BSI),
    ("6Gi", 6 * KI**3, 0, BSI), ("5Ti", 5 * KI**4, 0, BSI), ("4Pi", 4 * KI**5, 0, BSI),
    ("3Ei", 3 * KI**6, 0, BSI), ("10Ti", 10 * KI**4, 0, BSI), ("100Ti", 100 * KI**4, 0, BSI),
    # Decimal suffixes
    ("5n", 5, -9, DSI), ("4u", 4, -6, DSI), ("3m", 3, -3, DSI), ("9", 9, 0, DSI),
    ("8k", 8, 3, DSI), ("50k", 5, 4, DSI), ("7M", 7, 6, DSI), ("6G", 6, 9, DSI),
    ("5T", 5, 12, DSI), ("40T", 4, 13, DSI), ("300T", 3, 14, DSI), ("2P", 2, 15, DSI),
    ("1E", 1, 18, DSI),
    # Decimal exponents
    ("1E-3", 1, -3, DEX), ("1e3", 1, 3, DEX), ("1E6", 1, 6, DEX), ("1e9", 1, 9, DEX),
    ("1E12", 1, 12, DEX), ("1e15", 1, 15, DEX), ("1E18", 1, 18, DEX),
    # Nonstandard but still parsable
    ("1e14", 1, 14, DEX), ("1e13", 1, 13, DEX), ("100.035k", 100035, 0, DSI),
    # Things that look like floating point
    ("0.001", 1, -3, DSI), ("0.0005k", 5, -1, DSI), ("0.005", 5, -3, DSI),
    ("0.05", 5, -2, DSI), ("0.5", 5, -1, DSI), ("0.00050k", 5, -1, DSI),
    ("0.00500", 5, -3, DSI), ("0.05000", 5, -2, DSI), ("0.50000", 5, -1, DSI),
    ("0.5e0", 5, -1, DEX), ("0.5e-1", 5, -2, DEX), ("0.5e-2", 5, -3, DEX),
    ("10.035M", 10035, 3, DSI), ("1.2e3", 12, 2, DEX), ("1.3E+6", 13, 5, DEX),
    ("1.40e9", 14, 8, DEX), ("1.53E12", 153, 10, DEX), ("1.6e15", 16, 14, DEX),
    ("1.7E18", 17, 17, DEX), ("9.01", 901, -2, DSI), ("8.1k", 81, 2, DSI),
    ("7.123456M", 7123456, 0, DSI), ("6.987654321G", 6987654321, 0, DSI),
    ("5.444T", 5444, 9, DSI), ("40.1T", 401, 11, DSI), ("300.2T", 3002, 11, DSI),
    ("2.5P", 25, 14, DSI), ("1.01E", 101, 16, DSI),
    # Things that saturate/round
    ("3.001n", 4, -9, DSI), ("1.1E-9", 2, -9, DEX), ("0.0000000001", 1, -9, DSI),
    ("0.0000000005", 1, -9, DSI), ("0.00000000050", 1, -9, DSI), ("0.5e-9", 1, -9, DEX),
    ("0.9n", 1, -9, DSI), ("0.00000012345", 124, -9, DSI), ("0.00000012354", 124, -9, DSI),
    ("9Ei", MAX_INT64, 0, BSI), ("9223372036854775807Ki", MAX_INT64, 0, BSI),
    ("12E", 12, 18, DSI),
    # We'll accept fractional binary stuff, too.
    ("100.035Ki", 10243584, -2, BSI), ("0.5Mi", KI**2 // 2, 0, BSI),
    ("0.05Gi", 536870912, -1, BSI), ("0.025Ti", 274877906944, -1, BSI),
    # Things written by trolls
    ("0.000000000001Ki", 2, -9, DSI),  # rounds up, changes format
    (".001", 1, -3, DSI), (".0001k", 100, -3, DSI), ("1.", 1, 0, DSI), ("1.G", 1, 9, DSI),
]


@pytest.mark.parametrize("sign", ["", "-", "+"], ids=["plain", "negated", "explicit-plus"])
@pytest.mark.parametrize(("text", "i", "exponent", "fmt"), PARSE_TABLE, ids=[r[0] for r in PARSE_TABLE])
def test_parse(sign: str, text: str, i: int, exponent: int, fmt: Format) -> None:
    """TestQuantityParse (quantity_test.go), incl. its "-" and "+" prefixed re-runs."""
    q = parse_quantity(sign + text)
    expected = dec(i, exponent)
    assert q.amount == (-expected if sign == "-" else expected)
    assert q.format is fmt


# (input, error message). Which of upstream's three errors is raised is traced by hand
# through parseQuantityString / quantitySuffixer.interpret / inf.Dec.SetString.
INVALID = [
    # TestQuantityParse's invalid table and its empty-string check.
    ("", ERR_FORMAT_WRONG),
    ("1.1.M", ERR_FORMAT_WRONG),  # second "." is no suffix letter, sign or digit
    ("1+1.0M", ERR_FORMAT_WRONG),  # "." after the exponent digits
    ("0.1mi", ERR_SUFFIX),  # "mi" is in no suffix table and is not e<int>
    ("0.1am", ERR_FORMAT_WRONG),  # "a" is not a suffix letter
    ("aoeu", ERR_FORMAT_WRONG),
    (".5i", ERR_SUFFIX),
    ("1i", ERR_SUFFIX),
    ("-3.01i", ERR_SUFFIX),
    ("-3.01e-", ERR_SUFFIX),  # exponent "-" has no digits
    ("1e4294967297", ERR_SUFFIX),  # exponent outside int32: rejected, not truncated
    (" 1", ERR_FORMAT_WRONG),
    ("1 ", ERR_FORMAT_WRONG),
    # TestQuantityParseNonNumericPanic
    ("Non-Numeric", ERR_FORMAT_WRONG),
    # TestInterpretExponentInt32Bounds: exponents past +-MaxInt32 are refused.
    ("1E2147483648", ERR_SUFFIX),
    ("1E-2147483648", ERR_SUFFIX),
    ("1E9223372036854775807", ERR_SUFFIX),
    ("1E9223372036854775808", ERR_SUFFIX),
    # By hand: the int64 path is skipped (scale -10 < -9; for Pi/Ei precision
    # 15-1-15-1 < 0), and inf.Dec refuses a number part with no digits.
    ("e-10", ERR_NUMERIC),
    ("Pi", ERR_NUMERIC),
    (".Ei", ERR_NUMERIC),
    # By hand, other inputs the scanner stops on.
    ("1.2.3", ERR_FORMAT_WRONG),
    ("1Kib", ERR_FORMAT_WRONG),  # "b" is not a suffix letter
    ("1KB", ERR_FORMAT_WRONG),
    ("1 Gi", ERR_FORMAT_WRONG),
    ("\t1", ERR_FORMAT_WRONG),
    ("1\n", ERR_FORMAT_WRONG),
    ("1e1.5", ERR_FORMAT_WRONG),
    ("0x10", ERR_FORMAT_WRONG),
    ("1_000", ERR_FORMAT_WRONG),
    ("\uff11", ERR_FORMAT_WRONG),  # full-width digit one: the scanner takes ASCII only
    ("1kk", ERR_SUFFIX),
    ("1e", ERR_SUFFIX),  # "e" alone is neither a table suffix nor e<int>
    ("1Ki2", ERR_SUFFIX),
    ("1KI", ERR_FORMAT_WRONG),  # capital "I" is not a suffix letter
    ("1K", ERR_SUFFIX),  # kilo is lower-case "k"
]


@pytest.mark.parametrize(("text", "message"), INVALID, ids=[repr(r[0]) for r in INVALID])
def test_parse_rejects(text: str, message: str) -> None:
    """TestQuantityParse's invalid inputs (quantity_test.go) and hand-traced rejects."""
    with pytest.raises(QuantityError) as info:
        parse_quantity(text, field="spec.containers[0].resources.requests.cpu")
    assert info.value.message == message
    assert info.value.field == "spec.containers[0].resources.requests.cpu"
    assert isinstance(info.value, DecodeError)


def test_error_messages_are_upstreams() -> None:
    """ErrFormatWrong / ErrNumeric / ErrSuffix text from quantity.go."""
    assert ERR_FORMAT_WRONG == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )
    assert ERR_NUMERIC == "unable to parse numeric part of quantity"
    assert ERR_SUFFIX == "unable to parse quantity's suffix"


# Inputs upstream's scanner lets through with no digits: parseQuantityString returns
# num "0" (TestParseQuantityString lists "." and "-."), the int64 path reads 0.
LENIENT_ZEROS = [(".", DSI), ("-.", DSI), ("+", DSI), ("-", DSI), ("e3", DEX), ("E", DSI),
                 ("Ki", BSI), ("Ti", BSI), ("00", DSI), ("0.0Ki", BSI), ("-0", DSI)]


@pytest.mark.parametrize(("text", "fmt"), LENIENT_ZEROS, ids=[r[0] for r in LENIENT_ZEROS])
def test_lenient_inputs_parse_as_zero(text: str, fmt: Format) -> None:
    """TestParseQuantityString (quantity_test.go) plus a hand trace of ParseQuantity."""
    q = parse_quantity(text)
    assert q.is_zero() and q.format is fmt and str(q) == "0"


def test_parse_zero() -> None:
    """TestQuantityParseZero (quantity_test.go)."""
    assert str(parse_quantity("0")) == "0"


PARSE_EMIT = [
    ("1Ki", "1Ki"), ("1Mi", "1Mi"), ("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("1000M", "1G"),
    (".001Ki", "1024m"), (".000001Ki", "1024u"), (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
]


@pytest.mark.parametrize("sign", ["", "-"], ids=["plain", "negated"])
@pytest.mark.parametrize(("text", "expect"), PARSE_EMIT, ids=[r[0] for r in PARSE_EMIT])
def test_parse_emit(sign: str, text: str, expect: str) -> None:
    """TestQuantityParseEmit (quantity_test.go), incl. its negated re-run."""
    assert str(parse_quantity(sign + text)) == sign + expect


# TestQuantityString's (expect, alternate) pairs; "" = no alternate. The rows whose
# exponent passes "E" / "Ei" ("1e21", "10e69") are the fallback newer upstream added.
STRING_TABLE = [
    ("1Gi", "1024Mi"), ("300Mi", "307200Ki"), ("6Ki", ""), ("1001Gi", "1025024Mi"),
    ("1Ti", "1024Gi"), ("5", "5000m"), ("500m", "0.5"), ("1G", "1000M"), ("1G", "0.001T"),
    ("1m", "1000u"), ("80m", ""), ("1080m", "1.08"), ("1080m", "1080000000n"),
    ("300M", ""), ("1T", ""), ("1E", ""), ("1e21", "1000E"), ("5e21", "5000E"),
    ("1e24", "1000000E"), ("10e69", ""), ("20e69", ""), ("1e72", ""), ("1234567M", ""),
    ("1234567m", ""), ("3k", ""), ("1025", ""), ("0", "00"), ("1e9", ".001e12"),
    ("1e-3", "0.001e0"), ("1e-9", "1000e-12"), ("80e-3", ""), ("300e6", ""), ("1e12", ""),
    ("1e3", ""), ("3e3", ""), ("1n", ""), ("80n", ""), ("1080n", ""), ("1u", ""),
    ("80u", ""), ("1080u", ""),
]


@pytest.mark.parametrize(("expect", "alternate"), STRING_TABLE,
                         ids=[f"{e}<-{a or e}" for e, a in STRING_TABLE])
def test_string(expect: str, alternate: str) -> None:
    """TestQuantityString (quantity_test.go): canonical form survives a parse, alternates map to it."""
    assert str(parse_quantity(expect)) == expect
    if alternate:
        assert str(parse_quantity(alternate)) == expect
    if expect != "0":
        assert str(parse_quantity("-" + expect)) == "-" + expect


# Upstream's String() returns the input itself when its int64 parse path finds it
# canonical (quantity.go ParseQuantity, "reuse the string"); traced by hand.
VERBATIM = [("+1Ki", "+1Ki"), ("01Ki", "01Ki"), ("1E-3", "1E-3"), ("1e+3", "1e+3"),
            ("1.500k", "1.500k"), ("1.5k", "1500"), ("1024Ki", "1Mi"), ("100.0m", "100m"),
            ("1.1Ki", "1126400m"), ("0.5Ki", "512"), ("2000Ki", "2000Ki"), ("1.50", "1500m")]


@pytest.mark.parametrize(("text", "expect"), VERBATIM, ids=[r[0] for r in VERBATIM])
def test_string_reuses_canonical_input(text: str, expect: str) -> None:
    """quantity.go ParseQuantity: cached s when scale%3==0, no "000" tail (or value&7 != 0 for Ki..Ei)."""
    assert str(parse_quantity(text)) == expect


def test_binary_past_ei_prints_exactly() -> None:
    """TestBinarySIPastEiArithmeticRoundTrip (quantity_test.go): 1Ei * 1024 = 2^70."""
    ei = parse_quantity("1Ei")
    q = reduce(lambda a, b: a + b, [ei] * 1024)
    assert q.format is BSI
    assert str(q) == "1180591620717411303424"
    assert parse_quantity(str(q)) == q


CMP_TABLE = [("0", "0", 0), ("100m", "50m", 1), ("50m", "100m", -1), ("10000T", "100Gi", 1),
             ("1Gi", "1024Mi", 0), ("1G", "1Gi", -1)]


@pytest.mark.parametrize(("x", "y", "expect"), CMP_TABLE, ids=[f"{x}_vs_{y}" for x, y, _ in CMP_TABLE])
def test_compare(x: str, y: str, expect: int) -> None:
    """TestQuantityCmp (quantity_test.go); the last two rows by hand (2^30 = 1024 * 2^20 > 10^9)."""
    a, b = parse_quantity(x), parse_quantity(y)
    assert (a > b) - (a < b) == expect
    assert (a == b) is (expect == 0)
    assert (a <= b) is (expect <= 0) and (a >= b) is (expect >= 0)
    if expect == 0:
        assert hash(a) == hash(b)


@pytest.mark.parametrize("text", ["100m", "1Gi"])
def test_add_sub_zero_preserves_suffix(text: str) -> None:
    """TestQuantityAddZeroPreservesSuffix / TestQuantitySubZeroPreservesSuffix (quantity_test.go)."""
    value, zero = parse_quantity(text), parse_quantity("0")
    assert str(value + zero) == text and str(zero + value) == text
    assert str(value - zero) == text
    assert str(zero - value) == str(-value) == "-" + text


SUB_TABLE = [
    (dec(10, 0), DSI, dec(1, 1), DSI, dec(0, 0)),
    (dec(10, 0), DSI, dec(1, 0), BSI, dec(9, 0)),
    (dec(10, 0), BSI, dec(1, 0), DSI, dec(9, 0)),
    (dec(0, 0), DSI, dec(50, 0), DSI, dec(-50, 0)),
    (dec(50, 0), DSI, dec(0, 0), DSI, dec(50, 0)),
    (dec(0, 0), DSI, dec(0, 0), DSI, dec(0, 0)),
]


@pytest.mark.parametrize(("a", "fa", "b", "fb", "expect"), SUB_TABLE, ids=[str(i) for i in range(len(SUB_TABLE))])
def test_sub(a: Fraction, fa: Format, b: Fraction, fb: Format, expect: Fraction) -> None:
    """TestSub (quantity_test.go)."""
    assert (Quantity(amount=a, format=fa) - Quantity(amount=b, format=fb)).amount == expect


def test_neg() -> None:
    """TestQuantityNeg (quantity_test.go): 9.01 negated prints "-9010m"; the source is unchanged."""
    q = parse_quantity("9.01")
    assert str(-q) == "-9010m" and str(q) == "9010m"


# (input, value(), milli_value())
VALUE_TABLE = [
    # TestNegativeValueRoundsAwayFromZero
    ("-.484785E-7466", -1, -1), (".484785E-7466", 1, 1), ("-.484785E-1", -1, -49),
    (".484785E-1", 1, 49), ("-0.0005", -1, -1), ("0.0005", 1, 1), ("-1500m", -2, -1500),
    ("1500m", 2, 1500), ("-9.5000000001Gi", -10200547329, -10200547328108),
    ("9.5000000001Gi", 10200547329, 10200547328108), ("-1", -1, -1000), ("1", 1, 1000),
    ("0", 0, 0),
    # TestNewSet / TestMilliNewSet round trips: q2.Value() / q2.MilliValue() of String().
    ("1k", 1000, 1000000), ("1234k", 1234000, 1234000000), ("1Ki", 1024, 1024000),
    ("1e6", 1000000, 1000000000), ("1Mi", 1048576, 1048576000), ("1m", 1, 1), ("1234", 1234, 1234000),
    # TestScaledValue rows scaling 1n/1u/1m to Milli and to 0: all 1.
    ("1n", 1, 1), ("1u", 1, 1),
    # By hand: 100m -> ceil(0.1) = 1 and 100; 0.1m = 1e-4 -> 1 and ceil(0.1) = 1;
    # 1.5 -> ceil(1.5) = 2 and 1500; -100m -> -1 (away from zero) and -100.
    ("100m", 1, 100), ("0.1m", 1, 1), ("1.5", 2, 1500), ("-100m", -1, -100),
]


@pytest.mark.parametrize(("text", "value", "milli"), VALUE_TABLE, ids=[r[0] for r in VALUE_TABLE])
def test_value_and_milli_value(text: str, value: int, milli: int) -> None:
    """TestNegativeValueRoundsAwayFromZero, TestNewSet, TestMilliNewSet, TestScaledValue (quantity_test.go)."""
    q = parse_quantity(text)
    assert q.value() == value
    assert q.milli_value() == milli


# Our choice where upstream overflows int64 (its result there is an overflow artefact):
# saturate. By hand: 10E = 1e19 > 2^63-1 ~ 9.22e18; 9Ei caps at 2^63-1, times 1000 exceeds.
SATURATE = [("10E", MAX_INT64, MAX_INT64), ("-10E", MIN_INT64, MIN_INT64),
            ("9Ei", MAX_INT64, MAX_INT64), ("-9Ei", -MAX_INT64, MIN_INT64),
            ("9223372036854775807", MAX_INT64, MAX_INT64), ("1e999", MAX_INT64, MAX_INT64)]


@pytest.mark.parametrize(("text", "value", "milli"), SATURATE, ids=[r[0] for r in SATURATE])
def test_value_saturates_at_int64(text: str, value: int, milli: int) -> None:
    """MaxInt64 handling: quantity.go caps BinarySI on parse; Value()/MilliValue() overflow, we saturate."""
    q = parse_quantity(text)
    assert (q.value(), q.milli_value()) == (value, milli)


@pytest.mark.parametrize("text", ["1e1000", "1" + "0" * 1001, "1" * 1001 + "m"])
def test_absurd_magnitudes_rejected(text: str) -> None:
    """Our bound (module docstring), not upstream's: a value of 10**1000 or more, or 1001 significant digits."""
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert info.value.message == ERR_NUMERIC


def test_tiny_exponent_rounds_to_one_nano() -> None:
    """TestInterpretExponentInt32Bounds accepts E-2147483647; by hand it is below 1n, so 1n."""
    q = parse_quantity("1E-2147483647")
    assert q.amount == dec(1, -9) and str(q) == "1e-9"


# kubernetes.io/docs/concepts/configuration/manage-resources-containers/#meaning-of-memory:
# "128974848, 129e6, 129M, 128974848000m, 123Mi" are roughly the same value. By hand:
# 123 * 2^20 = 128974848; 129e6 = 129M = 129000000; 128974848000m = 128974848.
DOCS_MEMORY = [("128974848", 128974848), ("129e6", 129000000), ("129M", 129000000),
               ("128974848000m", 128974848), ("123Mi", 128974848),
               ("400m", 1)]  # same page: "400m" of memory is 0.4 bytes; Value() rounds up to 1


@pytest.mark.parametrize(("text", "value"), DOCS_MEMORY, ids=[r[0] for r in DOCS_MEMORY])
def test_docs_memory_examples(text: str, value: int) -> None:
    """kubernetes.io "Resource Management for Pods and Containers", meaning of memory."""
    assert to_int64("memory", parse_quantity(text)) == value


def test_docs_cpu_examples() -> None:
    """kubernetes.io same page, meaning of CPU: "0.1" is equivalent to "100m"; 1 CPU = 1000m."""
    assert parse_quantity("0.1") == parse_quantity("100m")
    assert cpu_millis(parse_quantity("0.1")) == 100
    assert cpu_millis(parse_quantity("1")) == 1000
    assert str(parse_quantity("0.1")) == "100m"


# YAML gives ints and floats: read as their repr (as upstream reads a JSON number).
# By hand: 2 -> "2"; 0.5 -> "0.5" = 500m; 1e16 -> "1e+16" = 10e15; 1e-07 -> 100e-9.
YAML_SCALARS = [(2, "2", 2000), (0.5, "500m", 500), (1e16, "10e15", MAX_INT64),
                (1e-07, "100e-9", 1), (-0.0, "0", 0), (110, "110", 110000)]


@pytest.mark.parametrize(("raw", "text", "milli"), YAML_SCALARS, ids=[repr(r[0]) for r in YAML_SCALARS])
def test_yaml_numbers(raw: int | float, text: str, milli: int) -> None:
    """quantity.go UnmarshalJSON parses a JSON number's text; we parse the Python number's repr."""
    q = parse_quantity(raw)
    assert str(q) == text and q.milli_value() == milli


@pytest.mark.parametrize("raw", [True, None, float("inf"), float("nan"), [1]], ids=repr)
def test_non_numbers_rejected(raw: object) -> None:
    """By hand: "inf"/"nan" stop the scanner; non-scalars are never quantities (ErrFormatWrong)."""
    with pytest.raises(QuantityError) as info:
        parse_quantity(raw)  # type: ignore[arg-type]
    assert info.value.message == ERR_FORMAT_WRONG


# pkg/scheduler/framework/types.go Resource.Add: cpu uses MilliValue(); memory, pods,
# ephemeral-storage and scalar resources use Value(). Values by hand (64Mi = 64 * 2^20).
TO_INT64 = [("cpu", "250m", 250), ("cpu", "1", 1000), ("cpu", "0.5", 500),
            ("memory", "64Mi", 67108864), ("memory", "1", 1), ("pods", "110", 110),
            ("ephemeral-storage", "1Gi", 1073741824), ("hugepages-2Mi", "4Mi", 4194304),
            ("example.com/gpu", "2", 2)]


@pytest.mark.parametrize(("name", "text", "expect"), TO_INT64, ids=[f"{n}={t}" for n, t, _ in TO_INT64])
def test_to_int64(name: str, text: str, expect: int) -> None:
    """How upstream framework.Resource stores each resource (types.go, Resource.Add)."""
    assert to_int64(name, parse_quantity(text)) == expect


def test_cpu_millis_is_milli_value() -> None:
    """types.go: MilliCPU += rQuant.MilliValue(); by hand 1.5 -> 1500, 1n -> ceil(1e-6) = 1."""
    assert cpu_millis(parse_quantity("1.5")) == 1500
    assert cpu_millis(parse_quantity("1n")) == 1


def test_quantity_is_immutable_value() -> None:
    """Conventions: frozen value type; Equal() compares amounts only (quantity.go Equal)."""
    q = parse_quantity("1Gi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.amount = Fraction(1)  # type: ignore[misc]
    assert {parse_quantity("1Gi"), parse_quantity("1024Mi"), parse_quantity("1073741824")} == {q}
    assert Quantity(amount=Fraction(3, 1000)) == parse_quantity("3m")
    with pytest.raises(ValueError):
        Quantity(amount=Fraction(1, 3))


def test_a_text_parsed_again_is_the_same_quantity_and_errors_are_never_remembered() -> None:
    """parse_quantity remembers the texts it parsed (pods repeat a few): the same value,
    format and String() as the first parse (upstream quantity_test.go: "100m" is 100
    milli-units, "1Gi" is 2^30 and prints as given), and a bad text fails every time with
    its own field."""
    for text, milli, printed in (("100m", 100, "100m"), ("1Gi", 2**30 * 1000, "1Gi"), ("0.5", 500, "500m")):
        first, again = parse_quantity(text), parse_quantity(text)
        assert again is first
        assert (again.milli_value(), str(again)) == (milli, printed)
    for field in ("spec.a", "spec.b"):
        with pytest.raises(QuantityError) as info:
            parse_quantity("12x", field=field)
        assert info.value.field == field
