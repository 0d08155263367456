"""kube-apiserver's validation of the objects the scheduler reads (kubesched.api.validation).

Cases are ported from upstream v1.34 tables:

* staging/src/k8s.io/apimachinery/pkg/util/validation/validation_test.go: TestIsDNS1123Label,
  TestIsDNS1123Subdomain, TestIsDNS1035Label, TestIsValidPortName, TestIsQualifiedName,
  TestIsValidLabelValue, TestIsValidPercent (good and bad values, all of them);
* staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation_test.go: TestValidateLabels;
* pkg/apis/core/validation/validation_test.go: TestValidateContainers (names, host ports,
  resources), TestValidatePod (affinity, tolerations, extended resources, labels, namespace),
  TestValidatePodSpec (node and priority class names), TestValidateResourceRequirements.

Upstream's tables name the failing field (and often a message fragment); the full messages
here are upstream's texts for those fields, from the v1.34.1 sources (field.Error.ErrorBody(),
util/validation's messages). Upstream collects every error; kubesched reports the first in
upstream's order, so where an upstream case yields two errors on one field, the first is
asserted and the case says so. Cases without a table upstream (topology spread constraints,
nodes, PriorityClasses, PDBs) follow validateTopologySpreadConstraints, ValidateNode,
ValidatePriorityClass and ValidatePodDisruptionBudget directly.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.errors import DecodeError
from kubesched.api.objects import Node, Pod
from kubesched.api.policy import Namespace, PodDisruptionBudget, PriorityClass
from kubesched.api.podgroup import PodGroup
from kubesched.api.validation import (
    go_quote, is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name,
    is_valid_label_value, is_valid_percent, is_valid_port_name,
)

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
QNAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
             "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
PORT_RANGE = "must be between 1 and 65535, inclusive"
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


# -- util/validation tables ---------------------------------------------------------------
DNS1123_LABEL_GOOD = ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2",
                      "a" * 63]
DNS1123_LABEL_BAD = ["", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a", "a_b",
                     "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1", "1.2", " ", "a ", " a", "a b", "1 ", " 1",
                     "1 2", "a" * 64]
DNS1123_SUBDOMAIN_GOOD = ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2",
                          "a.a", "ab.a", "abc.a", "a1.a", "a-1.a", "a--1--2--b.a", "a.1", "ab.1", "abc.1", "a1.1",
                          "a-1.1", "a--1--2--b.1", "0.a", "01.a", "012.a", "1a.a", "1-a.a", "1--a--b--2", "0.1",
                          "01.1", "012.1", "1a.1", "1-a.1", "1--a--b--2.1", "a.b.c.d.e", "aa.bb.cc.dd.ee",
                          "1.2.3.4.5", "11.22.33.44.55", "a" * 253]
DNS1123_SUBDOMAIN_BAD = ["", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a",
                         "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a..b", "1.", ".1", "1..2", " ", "a ", " a", "a b",
                         "1 ", " 1", "1 2", "A.a", "aB.a", "ab.A", "A1.a", "a1.A", "A.1", "aB.1", "A1.1", "1A.1",
                         "0.A", "01.A", "012.A", "1A.a", "1a.A", "A.B.C.D.E", "AA.BB.CC.DD.EE", "a.B.c.d.e",
                         "aa.bB.cc.dd.ee", "a@b", "a,b", "a_b", "a;b", "a:b", "a%b", "a?b", "a$b", "a" * 254]
DNS1035_LABEL_GOOD = ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "a" * 63]
DNS1035_LABEL_BAD = ["0", "01", "012", "1a", "1-a", "1--a--b--2", "", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-",
                     "-a", "1-", "-1", "_", "a_", "_a", "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1",
                     "1.2", " ", "a ", " a", "a b", "1 ", " 1", "1 2", "a" * 64]
PORT_NAME_GOOD = ["telnet", "re-mail-ck", "pop3", "a", "a-1", "1-a", "a-1-b-2-c", "1-a-2-b-3"]
PORT_NAME_BAD = ["longerthan15characters", "", "a" * 16, "12345", "1-2-3-4", "-begin", "end-", "two--hyphens",
                 "whois++"]
QNAME_GOOD = ["simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple", "now-with-dashes/simple",
              "now-with-dashes/now-with-dashes", "now.with.dots/simple", "now-with.dashes-and.dots/simple",
              "1-num.2-num/3-num", "1234/5678", "1.2.3.4/5678", "Uppercase_Is_OK_123",
              "example.com/Uppercase_Is_OK_123", "requests.storage-foo", "a" * 63, "a" * 253 + "/" + "b" * 63]
QNAME_BAD = ["nospecialchars%^=@", "cantendwithadash-", "-cantstartwithadash-", "only/one/slash", "Example.com/abc",
             "example_com/abc", "example.com/", "/simple", "a" * 64, "a" * 254 + "/abc"]
LABEL_VALUE_GOOD = ["simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1", "1234", "a" * 63, ""]
LABEL_VALUE_BAD = ["nospecialchars%^=@", "Tama-nui-te-rā.is.Māori.sun", "\\backslashes\\are\\bad",
                   "-starts-with-dash", "ends-with-dash-", ".starts.with.dot", "ends.with.dot.", "a" * 64]
PERCENT_GOOD = ["0%", "00000%", "1%", "01%", "99%", "100%", "101%"]
PERCENT_BAD = ["", "0", "100", "0.0%", "99.9%", "hundred", " 1%", "1% ", "-0%", "-1%", "+1%"]


@pytest.mark.parametrize("fn, good, bad", [
    pytest.param(is_dns1123_label, DNS1123_LABEL_GOOD, DNS1123_LABEL_BAD, id="IsDNS1123Label"),
    pytest.param(is_dns1123_subdomain, DNS1123_SUBDOMAIN_GOOD, DNS1123_SUBDOMAIN_BAD, id="IsDNS1123Subdomain"),
    pytest.param(is_dns1035_label, DNS1035_LABEL_GOOD, DNS1035_LABEL_BAD, id="IsDNS1035Label"),
    pytest.param(is_valid_port_name, PORT_NAME_GOOD, PORT_NAME_BAD, id="IsValidPortName"),
    pytest.param(is_qualified_name, QNAME_GOOD, QNAME_BAD, id="IsQualifiedName"),
    pytest.param(is_valid_label_value, LABEL_VALUE_GOOD, LABEL_VALUE_BAD, id="IsValidLabelValue"),
    pytest.param(is_valid_percent, PERCENT_GOOD, PERCENT_BAD, id="IsValidPercent"),
])
def test_util_validation_tables(fn: Any, good: list[str], bad: list[str]) -> None:
    """apimachinery util/validation/validation_test.go: every good value passes, every bad one fails."""
    assert [v for v in good if fn(v)] == []
    assert [v for v in bad if not fn(v)] == []


@pytest.mark.parametrize("fn, value, want", [
    pytest.param(is_dns1123_subdomain, "A", [SUBDOMAIN_MSG], id="subdomain-regex"),
    pytest.param(is_dns1123_subdomain, "a" * 254, ["must be no more than 253 characters"], id="subdomain-length"),
    pytest.param(is_dns1123_label, "a.b", ["must not contain dots"], id="label-dots"),
    pytest.param(is_dns1123_label, "a_b", [LABEL_MSG], id="label-regex"),
    pytest.param(is_qualified_name, "/simple", ["prefix part must be non-empty"], id="qname-empty-prefix"),
    pytest.param(is_qualified_name, "example.com/", ["name part must be non-empty", QNAME_MSG], id="qname-empty-name"),
    pytest.param(is_qualified_name, "Example.com/abc", ["prefix part " + SUBDOMAIN_MSG], id="qname-bad-prefix"),
    pytest.param(is_qualified_name, "only/one/slash",
                 ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                  "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                  "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
                  "and '/' (e.g. 'example.com/MyName')"], id="qname-two-slashes"),
    pytest.param(is_qualified_name, "a" * 64, ["name part must be no more than 63 characters"], id="qname-long"),
    pytest.param(is_valid_label_value, "a" * 64, ["must be no more than 63 characters"], id="value-long"),
    # Lengths are bytes, as Go's len: 32 two-byte characters are 64 bytes.
    pytest.param(is_valid_label_value, "ā" * 32, ["must be no more than 63 characters", VALUE_MSG],
                 id="value-long-in-bytes"),
    pytest.param(is_valid_percent, "1", ["a valid percent string must be a numeric string followed by an ending '%' "
                                         "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"],
                 id="percent"),
])
def test_util_validation_messages(fn: Any, value: str, want: list[str]) -> None:
    """The messages of util/validation (RegexError, MaxLenError, EmptyError), in upstream's order."""
    assert fn(value) == want


@pytest.mark.parametrize("s, want", [
    ("plain", '"plain"'), ('a"b', '"a\\"b"'), ("a\\b", '"a\\\\b"'), ("a\tb\n", '"a\\tb\\n"'),
    ("\x01", '"\\x01"'), ("é", '"é"'), ("\u00a0", '"\\u00a0"'),
])
def test_values_print_as_go_quotes_them(s: str, want: str) -> None:
    """field.Error prints string values with Go's %q (strconv.Quote)."""
    assert go_quote(s) == want


# -- helpers ------------------------------------------------------------------------------
def pod(spec: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    spec = {"containers": [{"name": "c", "image": "img"}]} if spec is None else spec
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", **meta}, "spec": spec}


def ctr(name: str = "c", requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None,
        **extra: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "img", **extra}
    if requests is not None or limits is not None:
        c["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v is not None}
    return c


def spec(*containers: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"containers": list(containers) or [ctr()], **extra}


def error_of(fn: Any, raw: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(DecodeError) as exc:
        fn(raw)
    return exc.value.field, exc.value.message


def pod_error(raw: dict[str, Any]) -> tuple[str, str]:
    return error_of(Pod.from_dict, raw)


# -- metav1 ValidateLabels ----------------------------------------------------------------
@pytest.mark.parametrize("labels", [
    {"simple": "bar"}, {"now-with-dashes": "bar"}, {"1-starts-with-num": "bar"}, {"1234": "bar"},
    {"simple/simple": "bar"}, {"now-with-dashes/simple": "bar"}, {"now-with-dashes/now-with-dashes": "bar"},
    {"now.with.dots/simple": "bar"}, {"now-with.dashes-and.dots/simple": "bar"}, {"1-num.2-num/3-num": "bar"},
    {"1234/5678": "bar"}, {"1.2.3.4/5678": "bar"}, {"UpperCaseAreOK123": "bar"}, {"goodvalue": "123_-.BaR"},
])
def test_valid_labels(labels: dict[str, str]) -> None:
    """metav1 TestValidateLabels, successCases (on a pod's metadata.labels)."""
    assert Pod.from_dict(pod(labels=labels)).labels == labels


@pytest.mark.parametrize("labels, value, detail", [
    ({"nospecialchars^=@": "bar"}, "nospecialchars^=@", QNAME_MSG),
    ({"cantendwithadash-": "bar"}, "cantendwithadash-", QNAME_MSG),
    ({"a" * 254: "bar"}, "a" * 254, "name part must be no more than 63 characters"),
    ({"toolongvalue": "a" * 64}, "a" * 64, "must be no more than 63 characters"),
    ({"backslashesinvalue": "some\\bad\\value"}, "some\\bad\\value", VALUE_MSG),
    ({"nocommasallowed": "bad,value"}, "bad,value", VALUE_MSG),
    ({"strangecharsinvalue": "?#$notsogood"}, "?#$notsogood", VALUE_MSG),
    ({"my key": "v"}, "my key", QNAME_MSG),  # a label key with a space (found by fuzzing)
])
def test_invalid_labels(labels: dict[str, str], value: str, detail: str) -> None:
    """metav1 TestValidateLabels, labelNameErrorCases and labelValueErrorCases."""
    assert pod_error(pod(labels=labels)) == ("metadata.labels", f"Invalid value: {go_quote(value)}: {detail}")


@pytest.mark.parametrize("value, kind", [(1, "number"), (True, "bool"), (1.5, "number"), (["a"], "array")])
def test_non_string_label_values_are_decoding_errors(value: Any, kind: str) -> None:
    """A YAML number as a label value fails the API server's JSON decoding (found by fuzzing)."""
    assert pod_error(pod(labels={"version": value})) == (
        "metadata.labels", f"json: cannot unmarshal {kind} into Go struct field ObjectMeta.metadata.labels of type "
                           "string")


def test_annotations() -> None:
    """ValidateAnnotations: keys are qualified names in any case; 256 KiB in all."""
    assert Pod.from_dict(pod(annotations={"Example.com/Key": "v"})).annotations == {"Example.com/Key": "v"}
    assert pod_error(pod(annotations={"a b": "v"})) == ("metadata.annotations", f'Invalid value: "a b": {QNAME_MSG}')
    big = {"k": "x" * (256 * 1024)}
    assert pod_error(pod(annotations=big)) == ("metadata.annotations", "Too long: may not be more than 262144 bytes")


# -- object names ------------------------------------------------------------------------
@pytest.mark.parametrize("meta, want", [
    pytest.param({"name": "Web_1"}, ("metadata.name", f'Invalid value: "Web_1": {SUBDOMAIN_MSG}'), id="pod-name"),
    pytest.param({"name": "a" * 254}, ("metadata.name", f'Invalid value: "{"a" * 254}": must be no more than 253 '
                                                        "characters"), id="pod-name-too-long"),
    pytest.param({"namespace": "Bad_NS"}, ("metadata.namespace", f'Invalid value: "Bad_NS": {LABEL_MSG}'),
                 id="bad-namespace"),
    # maskTrailingDash: a generateName may end with '-'
    pytest.param({"generateName": "web-"}, None, id="generate-name-dash"),
    pytest.param({"generateName": "Web-"}, ("metadata.generateName", f'Invalid value: "Web-": {SUBDOMAIN_MSG}'),
                 id="generate-name"),
])
def test_pod_names(meta: dict[str, Any], want: tuple[str, str] | None) -> None:
    """TestValidatePod "bad namespace" and ValidateObjectMeta's name rules (pods: DNS-1123 subdomains)."""
    raw = pod()
    raw["metadata"].update(meta)
    if want is None:
        Pod.from_dict(raw)
    else:
        assert pod_error(raw) == want


# -- TestValidateContainers ----------------------------------------------------------------
@pytest.mark.parametrize("containers, want", [
    pytest.param([ctr("")], ("spec.containers[0].name", "Required value"), id="zero-length name"),
    pytest.param([ctr("a" * 64)], ("spec.containers[0].name", f'Invalid value: "{"a" * 64}": must be no more '
                                                              "than 63 characters"), id="name > 63 characters"),
    pytest.param([ctr("a.b.c")], ("spec.containers[0].name", 'Invalid value: "a.b.c": must not contain dots'),
                 id="name not a DNS label"),
    pytest.param([ctr("abc"), ctr("abc")], ("spec.containers[1].name", 'Duplicate value: "abc"'),
                 id="name not unique"),
    pytest.param([ctr("abc", ports=[{"containerPort": 80, "hostPort": 80, "protocol": "TCP"}]),
                  ctr("def", ports=[{"containerPort": 81, "hostPort": 80, "protocol": "TCP"}])],
                 ("spec.containers[1].ports[0].hostPort", 'Duplicate value: "TCP//80"'), id="host port not unique"),
    # upstream reports two Invalid errors on limits[disk]; this is the first
    pytest.param([ctr("abc-123", limits={"disk": "10G"})],
                 ("spec.containers[0].resources.limits[disk]",
                  'Invalid value: "disk": must be a standard resource type or fully qualified'),
                 id="invalid compute resource"),
    pytest.param([ctr("abc-123", limits={"cpu": "-10", "memory": "0"})],
                 ("spec.containers[0].resources.limits[cpu]", 'Invalid value: "-10": must be greater than or equal '
                                                              "to 0"), id="Resource CPU invalid"),
    pytest.param([ctr("abc-123", requests={"cpu": "-10", "memory": "0"})],
                 ("spec.containers[0].resources.requests[cpu]", 'Invalid value: "-10": must be greater than or '
                                                                "equal to 0"), id="Resource Requests CPU invalid"),
    pytest.param([ctr("abc-123", limits={"cpu": "0", "memory": "-10"})],
                 ("spec.containers[0].resources.limits[memory]", 'Invalid value: "-10": must be greater than or '
                                                                 "equal to 0"), id="Resource Memory invalid"),
    pytest.param([ctr("abc-123", limits={"cpu": "5", "memory": "3"}, requests={"cpu": "6", "memory": "3"})],
                 ("spec.containers[0].resources.requests", 'Invalid value: "6": must be less than or equal to cpu '
                                                           "limit of 5"), id="Request limit simple invalid"),
    pytest.param([ctr("abc-123", limits={"attachable-volumes-aws-ebs": 10})],
                 ("spec.containers[0].resources.limits[attachable-volumes-aws-ebs]",
                  'Invalid value: "attachable-volumes-aws-ebs": must be a standard resource type or fully qualified'),
                 id="Invalid storage limit request"),
    pytest.param([ctr("abc-123", limits={"cpu": "5", "memory": "3"}, requests={"cpu": "5", "memory": "4"})],
                 ("spec.containers[0].resources.requests", 'Invalid value: "4": must be less than or equal to memory '
                                                           "limit of 3"), id="Memory request limit multiple invalid"),
    pytest.param([ctr(restartPolicy="Always")],
                 ("spec.containers[0].restartPolicy", "Forbidden: may not be set for non-init containers"),
                 id="Forbidden RestartPolicy: Always"),
    pytest.param([ctr(terminationMessagePolicy="Unknown")],
                 ("spec.containers[0].terminationMessagePolicy", 'Unsupported value: "Unknown": supported values: '
                                                                 '"File", "FallbackToLogsOnError"'),
                 id="invalid message termination policy"),
    pytest.param([ctr(imagePullPolicy="PullThreeTimes")],
                 ("spec.containers[0].imagePullPolicy", 'Unsupported value: "PullThreeTimes": supported values: '
                                                        '"Always", "IfNotPresent", "Never"'),
                 id="invalid image pull policy"),
])
def test_validate_containers(containers: list[dict[str, Any]], want: tuple[str, str]) -> None:
    """core TestValidateContainers, errorCases (the fields kubesched reads)."""
    assert pod_error(pod(spec(*containers))) == want


def test_validate_containers_success() -> None:
    """core TestValidateContainers, successCase (the resource and port parts)."""
    raw = pod(spec(
        ctr("abc"), ctr("123"), ctr("abc-123"),
        ctr("resources-test", limits={"cpu": "10", "memory": "10G", "my.org/resource": "10"}),
        ctr("resources-test-with-request-and-limit", requests={"cpu": "10", "memory": "10G"},
            limits={"cpu": "10", "memory": "10G"}),
        ctr("resources-request-limit-simple", requests={"cpu": "8"}, limits={"cpu": "10"}),
        ctr("resources-request-limit-edge", requests={"cpu": "10", "memory": "10G", "my.org/resource": "10"},
            limits={"cpu": "10", "memory": "10G", "my.org/resource": "10"}),
        ctr("resources-request-limit-partials", requests={"cpu": "9.5", "memory": "10G"},
            limits={"cpu": "10", "my.org/resource": "10"}),
        ctr("resources-request", requests={"cpu": "9.5", "memory": "10G"}),
        ctr("same-host-port-different-protocol", ports=[{"containerPort": 80, "hostPort": 80, "protocol": "TCP"},
                                                        {"containerPort": 80, "hostPort": 80, "protocol": "UDP"}]),
        ctr("fallback-to-logs-termination-message", terminationMessagePolicy="FallbackToLogsOnError"),
    ))
    assert len(Pod.from_dict(raw).containers) == 11


@pytest.mark.parametrize("port, want", [
    pytest.param({"containerPort": 0}, ("spec.containers[0].ports[0].containerPort", "Required value"), id="zero"),
    pytest.param({"containerPort": 65536}, ("spec.containers[0].ports[0].containerPort",
                                            f"Invalid value: 65536: {PORT_RANGE}"), id="too-big"),
    pytest.param({"containerPort": 80, "hostPort": 70000}, ("spec.containers[0].ports[0].hostPort",
                                                            f"Invalid value: 70000: {PORT_RANGE}"), id="host-port"),
    pytest.param({"containerPort": 80, "protocol": "HTTP"},
                 ("spec.containers[0].ports[0].protocol", 'Unsupported value: "HTTP": supported values: "SCTP", '
                                                          '"TCP", "UDP"'), id="protocol"),
    pytest.param({"containerPort": 80, "name": "Http"},
                 ("spec.containers[0].ports[0].name", 'Invalid value: "Http": must contain only alpha-numeric '
                                                      "characters (a-z, 0-9), and hyphens (-)"), id="port-name"),
])
def test_container_ports(port: dict[str, Any], want: tuple[str, str]) -> None:
    """validateContainerPorts: ports 1..65535, host ports too, protocol, IANA service names."""
    assert pod_error(pod(spec(ctr(ports=[port])))) == want


def test_host_network_host_port_must_match() -> None:
    """validatePodHostNetworkDeps (TestValidatePodSpec "with hostNetwork hostPort not equal to containerPort")."""
    raw = pod(spec(ctr(ports=[{"containerPort": 2600, "hostPort": 8080, "protocol": "TCP"}]), hostNetwork=True))
    assert pod_error(raw) == ("spec.containers[0].ports[0].hostPort",
                              "Invalid value: 8080: must match `containerPort` when `hostNetwork` is true")


def test_init_containers() -> None:
    """validateInitContainers: names unique with the regular containers; only restartPolicy Always;
    probes only on sidecars; host ports checked one init container at a time (as index 0)."""
    assert pod_error(pod(spec(ctr("a"), initContainers=[ctr("a")]))) == ("spec.initContainers[0].name",
                                                                          'Duplicate value: "a"')
    assert pod_error(pod(spec(initContainers=[ctr("i", restartPolicy="Never")]))) == (
        "spec.initContainers[0].restartPolicy", 'Unsupported value: "Never": supported values: "Always"')
    assert pod_error(pod(spec(initContainers=[ctr("i", livenessProbe={"tcpSocket": {"port": 80}})]))) == (
        "spec.initContainers[0].livenessProbe", "Forbidden: may not be set for init containers without "
                                                "restartPolicy=Always")
    ports = [{"containerPort": 1, "hostPort": 9}, {"containerPort": 2, "hostPort": 9}]
    assert pod_error(pod(spec(initContainers=[ctr("i0"), ctr("i1", ports=ports)]))) == (
        "spec.initContainers[0].ports[1].hostPort", 'Duplicate value: "TCP//9"')
    Pod.from_dict(pod(spec(ctr(ports=[ports[0]]), initContainers=[ctr("i", ports=[ports[0]])])))


# -- resources ----------------------------------------------------------------------------
def test_the_brief_examples() -> None:
    """Negative requests and requests over limits, with upstream's texts."""
    assert pod_error(pod(spec(ctr(requests={"cpu": "-1"})))) == (
        "spec.containers[0].resources.requests[cpu]", 'Invalid value: "-1": must be greater than or equal to 0')
    assert pod_error(pod(spec(ctr(requests={"cpu": "2"}, limits={"cpu": "1"})))) == (
        "spec.containers[0].resources.requests", 'Invalid value: "2": must be less than or equal to cpu limit of 1')


@pytest.mark.parametrize("containers, inits, want", [
    # upstream's table expects "must be a standard resource for containers", the second
    # error on this field; the first is validateResourceName's
    pytest.param([ctr("invalid", requests={"invalid-name": "2"}, limits={"invalid-name": "2"})], [],
                 ("spec.containers[0].resources.limits[invalid-name]",
                  'Invalid value: "invalid-name": must be a standard resource type or fully qualified'),
                 id="invalid extended resource name in container request"),
    pytest.param([ctr("invalid", requests={"example.com/a": "2"}, limits={"example.com/a": "1"})], [],
                 ("spec.containers[0].resources.requests",
                  'Invalid value: "2": must be equal to example.com/a limit of 1'),
                 id="invalid extended resource requirement: request must be == limit"),
    pytest.param([ctr("invalid", requests={"example.com/a": "2"})], [],
                 ("spec.containers[0].resources.limits", "Required value: Limit must be set for non overcommitable "
                                                         "resources"),
                 id="invalid extended resource requirement without limit"),
    pytest.param([ctr("invalid", requests={"example.com/a": "500m"})], [],
                 ("spec.containers[0].resources.requests[example.com/a]", 'Invalid value: "500m": must be an integer'),
                 id="invalid fractional extended resource in container request"),
    pytest.param([ctr()], [ctr("invalid", requests={"example.com/a": "500m"})],
                 ("spec.initContainers[0].resources.requests[example.com/a]",
                  'Invalid value: "500m": must be an integer'),
                 id="invalid fractional extended resource in init container request"),
    pytest.param([ctr("invalid", requests={"example.com/a": "5"}, limits={"example.com/a": "2.5"})], [],
                 ("spec.containers[0].resources.limits[example.com/a]", 'Invalid value: "2500m": must be an integer'),
                 id="invalid fractional extended resource in container limit"),
    pytest.param([ctr()], [ctr("invalid", requests={"example.com/a": "2.5"}, limits={"example.com/a": "2.5"})],
                 ("spec.initContainers[0].resources.limits[example.com/a]",
                  'Invalid value: "2500m": must be an integer'),
                 id="invalid fractional extended resource in init container limit"),
    # a YAML float, as the brief's fuzzing found it
    pytest.param([ctr(requests={"example.com/foo": 0.5}, limits={"example.com/foo": 0.5})], [],
                 ("spec.containers[0].resources.limits[example.com/foo]", 'Invalid value: "500m": must be an integer'),
                 id="yaml-float-extended-resource"),
])
def test_extended_resources(containers: list[dict[str, Any]], inits: list[dict[str, Any]],
                            want: tuple[str, str]) -> None:
    """core TestValidatePod, the extended resource cases."""
    assert pod_error(pod(spec(*containers, initContainers=inits))) == want


@pytest.mark.parametrize("resources, want", [
    pytest.param({"limits": {"cpu": "10", "hugepages-2Mi": "2Mi"}, "requests": {"cpu": "10", "hugepages-2Mi": "2Mi"}},
                 None, id="limits and requests of hugepage resource are equal"),
    pytest.param({"limits": {"memory": "2Mi"}, "requests": {"memory": "2Mi"}}, None,
                 id="limits and requests of memory resource are equal"),
    pytest.param({"limits": {"cpu": "10"}, "requests": {"cpu": "10"}}, None,
                 id="limits and requests of cpu resource are equal"),
    pytest.param({"limits": {"hugepages-2Mi": "2Mi"}, "requests": {"hugepages-2Mi": "2Mi"}},
                 ("spec.containers[0].resources", "Forbidden: HugePages require cpu or memory"),
                 id="hugepage resource without cpu or memory"),
    pytest.param({"limits": {"cpu": "1", "hugepages-2Mi": "3Mi"}},
                 ("spec.containers[0].resources.limits[hugepages-2Mi]",
                  'Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi'),
                 id="hugepages-indivisible"),
])
def test_container_resource_requirements(resources: dict[str, Any], want: tuple[str, str] | None) -> None:
    """core TestValidateResourceRequirements with ValidateContainerResourceRequirements."""
    raw = pod(spec({"name": "c", "image": "img", "resources": resources}))
    if want is None:
        Pod.from_dict(raw)
    else:
        assert pod_error(raw) == want


@pytest.mark.parametrize("resources, want", [
    pytest.param({"limits": {"memory": "2Mi"}, "requests": {"memory": "2Mi"}}, None,
                 id="limits and requests of memory resource are equal"),
    pytest.param({"limits": {"cpu": "10"}, "requests": {"cpu": "10"}}, None,
                 id="limits and requests of cpu resource are equal"),
    pytest.param({"limits": {"hugepages-2Mi": "2Mi"}, "requests": {"hugepages-2Mi": "2Mi"}},
                 ("spec.resources", "Forbidden: HugePages require cpu or memory"), id="pod resource with hugepages"),
    pytest.param({"limits": {"ephemeral-storage": "2Mi"}},
                 ("spec.resources.limits[ephemeral-storage]", 'Unsupported value: "ephemeral-storage": supported '
                                                              'values: "cpu", "hugepages-", "memory"'),
                 id="pod resource with ephemeral-storage"),
    pytest.param({"limits": {"kubernetesio/cpu": "2"}},
                 ("spec.resources.limits[kubernetesio/cpu]", 'Unsupported value: "kubernetesio/cpu": supported '
                                                             'values: "cpu", "hugepages-", "memory"'),
                 id="pod resource with unsupported prefixed resources"),
    pytest.param({"limits": {"kubernetes.io/": "2"}},
                 ("spec.resources.limits[kubernetes.io/]", 'Invalid value: "kubernetes.io/": name part must be '
                                                           "non-empty"),
                 id="pod resource with unsupported empty native resource name"),
    pytest.param({"requests": {"cpu": "1"}},
                 ("spec.resources.requests[cpu]", 'Invalid value: "1": must be greater than or equal to aggregate '
                                                  "container requests of 2"), id="below-container-requests"),
])
def test_pod_level_resource_requirements(resources: dict[str, Any], want: tuple[str, str] | None) -> None:
    """core TestValidateResourceRequirements with validatePodResourceRequirements, and
    validatePodResourceConsistency (the container asks for 2 cpus)."""
    raw = pod(spec(ctr(requests={"cpu": "2"}) if want and "aggregate" in want[1] else ctr(), resources=resources))
    if want is None:
        Pod.from_dict(raw)
    else:
        assert pod_error(raw) == want


def test_overhead_is_checked_as_limits() -> None:
    """validateOverhead: ValidateContainerResourceRequirements of {Limits: overhead}."""
    assert pod_error(pod(spec(overhead={"cpu": "-1"}))) == (
        "spec.overhead.limits[cpu]", 'Invalid value: "-1": must be greater than or equal to 0')


# -- affinity (TestValidatePod) -----------------------------------------------------------
NA = "spec.affinity.nodeAffinity"
TERM0 = f"{NA}.{REQ}.nodeSelectorTerms[0]"


def node_required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {REQ: {"nodeSelectorTerms": list(terms)}}}


def with_affinity(affinity: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return pod(spec(affinity=affinity), **meta)


def term(**kw: Any) -> dict[str, Any]:
    t: dict[str, Any] = {"labelSelector": {"matchExpressions": [{"key": "key2", "operator": "In",
                                                                  "values": ["value1", "value2"]}]},
                         "namespaces": ["ns"], "topologyKey": "region"}
    t.update(kw)
    return t


@pytest.mark.parametrize("affinity, want", [
    pytest.param(node_required({"matchExpressions": [{"key": "key1"}]}),
                 (f"{TERM0}.matchExpressions[0].operator", 'Invalid value: "": not a valid selector operator'),
                 id="invalid node selector requirement in node affinity, operator can't be null"),
    pytest.param(node_required({"matchExpressions": [{"key": "invalid key ___@#", "operator": "Exists"}]}),
                 (f"{TERM0}.matchExpressions[0].key", f'Invalid value: "invalid key ___@#": {QNAME_MSG}'),
                 id="invalid node selector requirement in node affinity, key is invalid"),
    pytest.param(node_required({"matchFields": [{"key": "metadata.name", "operator": "In",
                                                 "values": ["host1", "host2"]}]}),
                 (f"{TERM0}.matchFields[0].values", "Required value: must be only one value when `operator` is 'In' "
                                                    "or 'NotIn' for node field selector"),
                 id="invalid node field selector requirement in node affinity, more values for field selector"),
    pytest.param(node_required({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}),
                 (f"{TERM0}.matchFields[0].operator", 'Invalid value: "Exists": not a valid selector operator'),
                 id="invalid node field selector requirement in node affinity, invalid operator"),
    pytest.param(node_required({"matchFields": [{"key": "metadata.namespace", "operator": "In", "values": ["ns1"]}]}),
                 (f"{TERM0}.matchFields[0].key", 'Invalid value: "metadata.namespace": not a valid field selector '
                                                 "key"),
                 id="invalid node field selector requirement in node affinity, invalid key"),
    pytest.param({"nodeAffinity": {PREF: [{"weight": 199, "preference": {"matchExpressions": [
        {"key": "foo", "operator": "In", "values": ["bar"]}]}}]}},
                 (f"{NA}.{PREF}[0].weight", "Invalid value: 199: must be in the range 1-100"),
                 id="invalid preferredSchedulingTerm in node affinity, weight should be in range 1-100"),
    pytest.param(node_required(),
                 (f"{NA}.{REQ}.nodeSelectorTerms", "Required value: must have at least one node selector term"),
                 id="invalid requiredDuringSchedulingIgnoredDuringExecution node selector, nodeSelectorTerms must "
                    "have at least one term"),
    pytest.param({"podAffinity": {PREF: [{"weight": 109, "podAffinityTerm": term()}]}},
                 (f"spec.affinity.podAffinity.{PREF}[0].weight", "Invalid value: 109: must be in the range 1-100"),
                 id="invalid weight in preferredDuringSchedulingIgnoredDuringExecution in pod affinity annotations, "
                    "weight should be in range 1-100"),
    pytest.param({"podAntiAffinity": {PREF: [{"weight": 10, "podAffinityTerm": term(labelSelector={
        "matchExpressions": [{"key": "key2", "operator": "Exists", "values": ["value1", "value2"]}]})}]}},
                 (f"spec.affinity.podAntiAffinity.{PREF}[0].podAffinityTerm.labelSelector.matchExpressions[0].values",
                  "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
                 id="invalid labelSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity "
                    "annotations, values should be empty if the operator is Exists"),
    pytest.param({"podAntiAffinity": {PREF: [{"weight": 10, "podAffinityTerm": term(
        labelSelector=None, namespaceSelector={"matchExpressions": [{"key": "key2", "operator": "In"}]})}]}},
                 (f"spec.affinity.podAntiAffinity.{PREF}[0].podAffinityTerm.namespaceSelector.matchExpressions[0]"
                  ".values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
                 id="invalid namespaceSelector in preferredDuringSchedulingIgnoredDuringExecution in podaffinity, "
                    "In operator must include Values"),
    pytest.param({"podAffinity": {PREF: [{"weight": 10, "podAffinityTerm": term(namespaces=["INVALID_NAMESPACE"])}]}},
                 (f"spec.affinity.podAffinity.{PREF}[0].podAffinityTerm.namespace",
                  f'Invalid value: "INVALID_NAMESPACE": {LABEL_MSG}'),
                 id="invalid name space in preferredDuringSchedulingIgnoredDuringExecution in podaffinity "
                    "annotations, namespace should be valid"),
    pytest.param({"podAffinity": {REQ: [term(topologyKey="")]}},
                 (f"spec.affinity.podAffinity.{REQ}[0].topologyKey", "Required value: can not be empty"),
                 id="invalid hard pod affinity, empty topologyKey is not allowed for hard pod affinity"),
    pytest.param({"podAntiAffinity": {REQ: [term(topologyKey="")]}},
                 (f"spec.affinity.podAntiAffinity.{REQ}[0].topologyKey", "Required value: can not be empty"),
                 id="invalid hard pod anti-affinity, empty topologyKey is not allowed for hard pod anti-affinity"),
    pytest.param({"podAffinity": {PREF: [{"weight": 10, "podAffinityTerm": term(topologyKey="")}]}},
                 (f"spec.affinity.podAffinity.{PREF}[0].podAffinityTerm.topologyKey", "Required value: can not be "
                                                                                      "empty"),
                 id="invalid soft pod affinity, empty topologyKey is not allowed for soft pod affinity"),
    pytest.param({"podAffinity": {REQ: [term(topologyKey="k8s.io/zone", matchLabelKeys=["/simple"])]}},
                 (f"spec.affinity.podAffinity.{REQ}[0].matchLabelKeys[0]", 'Invalid value: "/simple": prefix part '
                                                                           "must be non-empty"),
                 id="invalid hard pod affinity, key in MatchLabelKeys isn't correctly defined"),
    pytest.param({"podAntiAffinity": {PREF: [{"weight": 10, "podAffinityTerm": term(
        topologyKey="k8s.io/zone", mismatchLabelKeys=["/simple"])}]}},
                 (f"spec.affinity.podAntiAffinity.{PREF}[0].podAffinityTerm.mismatchLabelKeys[0]",
                  'Invalid value: "/simple": prefix part must be non-empty'),
                 id="invalid soft pod anti-affinity, key in MismatchLabelKeys isn't correctly defined"),
    pytest.param({"podAffinity": {REQ: [term(topologyKey="k8s.io/zone", matchLabelKeys=["samekey"],
                                             mismatchLabelKeys=["samekey"])]}},
                 (f"spec.affinity.podAffinity.{REQ}[0].matchLabelKeys[0]",
                  'Invalid value: "samekey": exists in both matchLabelKeys and mismatchLabelKeys'),
                 id="invalid hard pod affinity, key exists in both MatchLabelKeys and MismatchLabelKeys"),
])
def test_affinity(affinity: dict[str, Any], want: tuple[str, str]) -> None:
    """core TestValidatePod, the affinity error cases."""
    assert pod_error(with_affinity(affinity)) == want


def test_node_affinity_values_are_label_values_except_in_preferences() -> None:
    """ValidateNodeSelectorRequirement checks values as label values, Gt/Lt included ("-1"
    is no label value); preferred terms allow any value (they can still match one node)."""
    req = {"key": "cpus", "operator": "Gt", "values": ["-1"]}
    assert pod_error(with_affinity(node_required({"matchExpressions": [req]}))) == (
        f"{TERM0}.matchExpressions[0].values[0]", f'Invalid value: "-1": {VALUE_MSG}')
    Pod.from_dict(with_affinity({"nodeAffinity": {PREF: [{"weight": 1, "preference": {"matchExpressions": [req]}}]}}))
    Pod.from_dict(with_affinity(node_required({"matchExpressions": [{**req, "values": ["abc"]}]})))


def test_match_label_keys_against_the_merged_selector() -> None:
    """ValidateMatchLabelKeysAndMismatchLabelKeys runs after PrepareForCreate merged the keys:
    a key also in the selector is rejected once the pod carries the label (the path is
    upstream's: the term's, indexed)."""
    t = term(topologyKey="zone", labelSelector={"matchLabels": {"app": "web"}}, matchLabelKeys=["app"])
    assert pod_error(with_affinity({"podAffinity": {REQ: [t]}}, labels={"app": "web"})) == (
        f"spec.affinity.podAffinity.{REQ}[0][0]", 'Invalid value: "app": exists in both matchLabelKeys and '
                                                  "labelSelector")
    Pod.from_dict(with_affinity({"podAffinity": {REQ: [t]}}))  # no such label: nothing merged
    no_selector = term(topologyKey="zone", labelSelector=None, matchLabelKeys=["app"])
    assert pod_error(with_affinity({"podAffinity": {REQ: [no_selector]}})) == (
        f"spec.affinity.podAffinity.{REQ}[0].matchLabelKeys", "Forbidden: must not be specified when labelSelector "
                                                              "is not set")


# -- tolerations (TestValidatePod) --------------------------------------------------------
@pytest.mark.parametrize("toleration, want", [
    pytest.param({"key": "nospecialchars^=@", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
                 ("spec.tolerations[0].key", f'Invalid value: "nospecialchars^=@": {QNAME_MSG}'),
                 id="invalid toleration key"),
    pytest.param({"key": "foo", "operator": "In", "value": "bar", "effect": "NoSchedule"},
                 ("spec.tolerations[0].operator", 'Unsupported value: "In": supported values: "Equal", "Exists"'),
                 id="invalid toleration operator"),
    pytest.param({"key": "foo", "operator": "Exists", "value": "bar", "effect": "NoSchedule"},
                 ("spec.tolerations[0].operator", "Invalid value: \"bar\": value must be empty when `operator` is "
                                                  "'Exists'"),
                 id="value must be empty when `operator` is 'Exists'"),
    pytest.param({"operator": "Equal", "value": "bar", "effect": "NoSchedule"},
                 ("spec.tolerations[0].operator", 'Invalid value: "Equal": operator must be Exists when `key` is '
                                                  'empty, which means "match all values and all keys"'),
                 id="operator must be 'Exists' when `key` is empty"),
    pytest.param({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule",
                  "tolerationSeconds": 20},
                 ("spec.tolerations[0].effect", "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
                                                "`tolerationSeconds` is set"),
                 id="effect must be 'NoExecute' when `TolerationSeconds` is set"),
    pytest.param({"key": "foo", "value": "a b"},
                 ("spec.tolerations[0].operator", f'Invalid value: "a b": {VALUE_MSG}'), id="value-not-label-value"),
    pytest.param({"key": "foo", "effect": "NoScheduleNoAdmit"},
                 ("spec.tolerations[0].effect", 'Unsupported value: "NoScheduleNoAdmit": supported values: '
                                                '"NoSchedule", "PreferNoSchedule", "NoExecute"'), id="effect"),
])
def test_tolerations(toleration: dict[str, Any], want: tuple[str, str]) -> None:
    """core TestValidatePod, the toleration cases (ValidateTolerations)."""
    assert pod_error(pod(spec(tolerations=[toleration]))) == want


# -- topology spread constraints ---------------------------------------------------------
TSC = "spec.topologySpreadConstraints[0]"


def tsc(**kw: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                         "labelSelector": {"matchLabels": {"app": "web"}}}
    c.update(kw)
    return {k: v for k, v in c.items() if v is not None}


@pytest.mark.parametrize("constraints, want", [
    pytest.param([tsc(maxSkew=0)], (f"{TSC}.maxSkew", "Invalid value: 0: must be greater than zero"), id="maxSkew"),
    pytest.param([tsc(topologyKey="")], (f"{TSC}.topologyKey", "Required value: can not be empty"),
                 id="topologyKey"),
    pytest.param([tsc(whenUnsatisfiable="N/A")],
                 (f"{TSC}.whenUnsatisfiable", 'Unsupported value: "N/A": supported values: "DoNotSchedule", '
                                              '"ScheduleAnyway"'), id="whenUnsatisfiable"),
    pytest.param([tsc(), tsc(maxSkew=2)],
                 (f"{TSC}.{{topologyKey, whenUnsatisfiable}}", 'Duplicate value: "{zone, DoNotSchedule}"'),
                 id="repeated"),
    pytest.param([tsc(minDomains=0)], (f"{TSC}.minDomains", "Invalid value: 0: must be greater than zero"),
                 id="minDomains"),
    pytest.param([tsc(minDomains=2, whenUnsatisfiable="ScheduleAnyway")],
                 (f"{TSC}.minDomains", "Invalid value: 2: can only use minDomains if "
                                       "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"), id="minDomains-anyway"),
    pytest.param([tsc(nodeAffinityPolicy="Foo")],
                 (f"{TSC}.nodeAffinityPolicy", 'Unsupported value: "Foo": supported values: "Honor", "Ignore"'),
                 id="nodeAffinityPolicy"),
    pytest.param([tsc(labelSelector=None, matchLabelKeys=["app"])],
                 (f"{TSC}.matchLabelKeys", "Forbidden: must not be specified when labelSelector is not set"),
                 id="matchLabelKeys-without-selector"),
    pytest.param([tsc(matchLabelKeys=["app"])],
                 (f"{TSC}[0]", 'Invalid value: "app": exists in both matchLabelKeys and labelSelector'),
                 id="matchLabelKeys-in-selector"),
    pytest.param([tsc(labelSelector={"matchLabels": {"app": "a b"}})],
                 (f"{TSC}.labelSelector.matchLabels", f'Invalid value: "a b": {VALUE_MSG}'), id="selector"),
])
def test_topology_spread_constraints(constraints: list[dict[str, Any]], want: tuple[str, str]) -> None:
    """validateTopologySpreadConstraints (core validation.go), with
    MatchLabelKeysInPodTopologySpreadSelectorMerge on as in v1.34; the pod is labelled app=web."""
    assert pod_error(pod(spec(topologySpreadConstraints=constraints), labels={"app": "web"})) == want


# -- the rest of the pod spec ------------------------------------------------------------
@pytest.mark.parametrize("extra, want", [
    pytest.param({"nodeName": "node name"}, ("spec.nodeName", f'Invalid value: "node name": {SUBDOMAIN_MSG}'),
                 id="bad nodeName"),
    pytest.param({"priorityClassName": "InvalidName"},
                 ("spec.priorityClassName", f'Invalid value: "InvalidName": {SUBDOMAIN_MSG}'),
                 id="bad PriorityClassName"),
    pytest.param({"serviceAccountName": "invalidName"},
                 ("spec.serviceAccountName", f'Invalid value: "invalidName": {SUBDOMAIN_MSG}'),
                 id="bad service account name"),
    pytest.param({"restartPolicy": "UnknowPolicy"},
                 ("spec.restartPolicy", 'Unsupported value: "UnknowPolicy": supported values: "Always", "OnFailure", '
                                        '"Never"'), id="bad restart policy"),
    pytest.param({"dnsPolicy": "invalid"},
                 ("spec.dnsPolicy", 'Unsupported value: "invalid": supported values: "ClusterFirstWithHostNet", '
                                    '"ClusterFirst", "Default", "None"'), id="bad DNS policy"),
    pytest.param({"activeDeadlineSeconds": 0},
                 ("spec.activeDeadlineSeconds", "Invalid value: 0: must be between 1 and 2147483647, inclusive"),
                 id="bad-active-deadline-seconds"),
    pytest.param({"containers": []}, ("spec.containers", "Required value"), id="no containers"),
    pytest.param({"nodeSelector": {"zone": "a b"}}, ("spec.nodeSelector", f'Invalid value: "a b": {VALUE_MSG}'),
                 id="node-selector-value"),
    pytest.param({"schedulingGates": [{"name": ""}]},
                 ("spec.schedulingGates[0]", 'Invalid value: "": name part must be non-empty'), id="gate-name"),
    pytest.param({"schedulingGates": [{"name": "g"}, {"name": "g"}]},
                 ("spec.schedulingGates[1]", 'Duplicate value: "g"'), id="gate-duplicate"),
    pytest.param({"readinessGates": [{"conditionType": "invalid/condition/type"}]},
                 ("spec.readinessGates[0].conditionType", "Invalid value: \"invalid/condition/type\": a qualified name "
                  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
                  "'example.com/MyName')"), id="invalid condition type"),
    pytest.param({"preemptionPolicy": "Sometimes"},
                 ("spec.preemptionPolicy", 'Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", '
                                           '"Never"'), id="preemption-policy"),
    pytest.param({"containers": [ctr(image=" something ")]},
                 ("spec.containers[0].image", 'Invalid value: " something ": must not have leading or trailing '
                                              "whitespace"), id="image leading and trailing whitespace"),
    pytest.param({"ephemeralContainers": [{"name": "debug", "image": "img"}]},
                 ("spec.ephemeralContainers", "Forbidden: cannot be set on create"), id="ephemeral-on-create"),
    pytest.param({"nodeName": "n1", "schedulingGates": [{"name": "g"}]},
                 ("spec.nodeName", "Forbidden: cannot be set until all schedulingGates have been cleared"),
                 id="bound-and-gated"),
])
def test_pod_spec(extra: dict[str, Any], want: tuple[str, str]) -> None:
    """core TestValidatePodSpec / TestValidatePod failure cases, and ValidatePodCreate's own checks."""
    assert pod_error(pod(spec(**extra) if "containers" not in extra else {**extra})) == want


def test_first_error_in_upstream_order() -> None:
    """Upstream validates metadata, then containers, ..., then tolerations: the first listed wins."""
    raw = pod(spec(ctr(requests={"cpu": "-1"}), tolerations=[{"key": "a b"}]), labels={"a": "-x"})
    assert pod_error(raw)[0] == "metadata.labels"
    raw["metadata"]["labels"] = {}
    assert pod_error(raw)[0] == "spec.containers[0].resources.requests[cpu]"


def test_test_fixtures_can_skip_validation() -> None:
    """validate=False decodes what no API server accepts, as upstream's scheduler test pods do."""
    raw = pod(spec(ctr(requests={"example.com/gpu": "1"})), name="Pod_A")
    assert Pod.from_dict(raw, validate=False).requests["example.com/gpu"] == 1
    assert Pod.from_dict(pod(spec(ctr(requests={"example.com/gpu": "1"}))), require_limits=False).name == "p"


# -- other kinds -------------------------------------------------------------------------
def node(**kw: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {},
                           "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    for k, v in kw.items():
        section, key = k.split("__")
        raw[section][key] = v
    return raw


@pytest.mark.parametrize("raw, want", [
    pytest.param(node(metadata__name="nodeA"), ("metadata.name", f'Invalid value: "nodeA": {SUBDOMAIN_MSG}'),
                 id="name"),
    pytest.param(node(metadata__labels={"zone": True}),
                 ("metadata.labels", "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels "
                                     "of type string"), id="label-bool"),
    pytest.param(node(spec__taints=[{"effect": "NoSchedule"}]),
                 ("metadata.taints[0].key", 'Invalid value: "": name part must be non-empty'), id="taint-key"),
    pytest.param(node(spec__taints=[{"key": "k", "value": "a b", "effect": "NoSchedule"}]),
                 ("metadata.taints[0].value", f'Invalid value: "a b": {VALUE_MSG}'), id="taint-value"),
    pytest.param(node(spec__taints=[{"key": "k"}]), ("metadata.taints[0].effect", "Required value"),
                 id="taint-effect-missing"),
    pytest.param(node(spec__taints=[{"key": "k", "effect": "Never"}]),
                 ("metadata.taints[0].effect", 'Unsupported value: "Never": supported values: "NoSchedule", '
                                               '"PreferNoSchedule", "NoExecute"'), id="taint-effect"),
    pytest.param(node(spec__taints=[{"key": "foo", "value": "bar", "effect": "NoSchedule"},
                                    {"key": "foo", "value": "baz", "effect": "NoSchedule"}]),
                 ("metadata.taints[1]", 'Duplicate value: {"Key":"foo","Value":"baz","Effect":"NoSchedule",'
                                        '"TimeAdded":null}: taints must be unique by key and effect pair'),
                 id="taint-duplicate"),
    pytest.param(node(status__capacity={"cpu": "-1"}),
                 ("status.capacity.cpu", 'Invalid value: "-1": must be greater than or equal to 0'), id="capacity"),
    pytest.param(node(status__allocatable={"example.com/gpu": "1.5"}),
                 ("status.allocatable.example.com/gpu", 'Invalid value: "1500m": must be an integer'),
                 id="allocatable-extended"),
    pytest.param(node(status__capacity={"pods": "0.5"}),
                 ("status.capacity.pods", 'Invalid value: "500m": must be an integer'), id="pods-integer"),
])
def test_node(raw: dict[str, Any], want: tuple[str, str]) -> None:
    """ValidateNode: name, labels, taints (reported under metadata.taints, as upstream does), resources."""
    assert error_of(Node.from_dict, raw) == want


def test_node_taints_unique_by_key_and_effect() -> None:
    Node.from_dict(node(spec__taints=[{"key": "foo", "effect": "NoSchedule"}, {"key": "foo", "effect": "NoExecute"}]))


@pytest.mark.parametrize("raw, want", [
    pytest.param({"metadata": {"name": "subteam1.team1"}},
                 ("metadata.name", 'Invalid value: "subteam1.team1": must not contain dots'), id="dots"),
    pytest.param({"metadata": {"name": "NS1"}}, ("metadata.name", f'Invalid value: "NS1": {LABEL_MSG}'), id="case"),
    pytest.param({"metadata": {"name": "ns"}, "spec": {"finalizers": ["foo"]}},
                 ("spec.finalizers", 'Invalid value: "foo": name is neither a standard finalizer name nor is it fully '
                                     "qualified"), id="finalizer"),
    pytest.param({"metadata": {"name": "ns"}, "spec": {"finalizers": ["kubernetes", "example.com/f"]}}, None,
                 id="finalizers-ok"),
])
def test_namespace(raw: dict[str, Any], want: tuple[str, str] | None) -> None:
    """ValidateNamespace: a DNS-1123 label name; finalizers standard or qualified."""
    if want is None:
        Namespace.from_dict(raw)
    else:
        assert error_of(Namespace.from_dict, raw) == want


def pc(name: str, **kw: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, **kw}


@pytest.mark.parametrize("raw, want", [
    pytest.param(pc("tier1", value=100), None, id="no-description"),
    pytest.param(pc("tier1"), None, id="value-omitted-is-0"),
    pytest.param(pc("system-node-critical", value=2_000_001_000), None, id="system-node-critical"),
    pytest.param(pc("system-node-critical", value=0),
                 ("metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved for system use "
                                   "only. error: value of system-node-critical PriorityClass must be 2000001000"),
                 id="incorrect-system-class-value"),
    pytest.param(pc("system-something", value=2_000_001_000),
                 ("metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved for system use "
                                   "only. error: system-something is not a known system priority class"),
                 id="incorrect-system-class-name"),
    pytest.param(pc("huge", value=1_000_000_001),
                 ("value", "Forbidden: maximum allowed value of a user defined priority is 1000000000"),
                 id="too-high"),
    pytest.param(pc("Tier_1", value=1), ("metadata.name", f'Invalid value: "Tier_1": {SUBDOMAIN_MSG}'), id="name"),
    pytest.param(pc("tier1", value=1, preemptionPolicy="Sometimes"),
                 ("preemptionPolicy", 'Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", '
                                      '"Never"'), id="preemption-policy"),
])
def test_priority_class(raw: dict[str, Any], want: tuple[str, str] | None) -> None:
    """scheduling TestValidatePriorityClass (ValidatePriorityClass)."""
    if want is None:
        PriorityClass.from_dict(raw)
    else:
        assert error_of(PriorityClass.from_dict, raw) == want


def pdb(name: str = "b", **spec_: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "a"}}, **spec_}}


PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
               "regex used for validation is '[0-9]+%')")


@pytest.mark.parametrize("raw, want", [
    pytest.param(pdb(minAvailable="50%"), None, id="percent"),
    pytest.param(pdb(maxUnavailable=0), None, id="zero"),
    pytest.param(pdb(minAvailable=1, maxUnavailable=1),
                 ("spec", 'Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"a"}},"MaxUnavailable":1,'
                          '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set'),
                 id="both"),
    pytest.param(pdb(minAvailable="abc"), ("spec.minAvailable", f'Invalid value: "abc": {PERCENT_MSG}'),
                 id="not-percent"),
    pytest.param(pdb(maxUnavailable="101%"), ("spec.maxUnavailable", 'Invalid value: "101%": must not be greater '
                                                                     "than 100%"), id="over-100"),
    pytest.param(pdb(minAvailable=-1), ("spec.minAvailable", "Invalid value: -1: must be greater than or equal to 0"),
                 id="negative"),
    pytest.param(pdb(unhealthyPodEvictionPolicy="Sometimes"),
                 ("spec.unhealthyPodEvictionPolicy", 'Unsupported value: "Sometimes": supported values: '
                                                     '"AlwaysAllow", "IfHealthyBudget"'), id="eviction-policy"),
    pytest.param(pdb(selector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
                 ("spec.selector.matchExpressions[0].values", "Required value: must be specified when `operator` is "
                                                              "'In' or 'NotIn'"), id="selector"),
    pytest.param(pdb(name="a/b"), ("metadata.name", "Invalid value: \"a/b\": may not contain '/'"), id="name"),
])
def test_pod_disruption_budget(raw: dict[str, Any], want: tuple[str, str] | None) -> None:
    """policy ValidatePodDisruptionBudget: minAvailable XOR maxUnavailable, non-negative integers or
    percentages up to 100%, the selector; then the metadata every kind gets (path segment names)."""
    if want is None:
        PodDisruptionBudget.from_dict(raw)
    else:
        assert error_of(PodDisruptionBudget.from_dict, raw) == want


def test_pod_group_metadata() -> None:
    """A custom resource's name is a DNS-1123 subdomain."""
    raw = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
           "metadata": {"name": "Gang_1", "namespace": "ns"}, "spec": {"minMember": 2}}
    assert error_of(PodGroup.from_dict, raw) == ("metadata.name", f'Invalid value: "Gang_1": {SUBDOMAIN_MSG}')
    ok = copy.deepcopy(raw)
    ok["metadata"]["name"] = "gang-1"
    assert PodGroup.from_dict(ok).min_member == 2
