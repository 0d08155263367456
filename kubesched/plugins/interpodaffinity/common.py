"""How an affinity term matches a pod, shared by InterPodAffinity's filtering and scoring.

Upstream ``AffinityTerm.Matches(pod, nsLabels)``: the term applies to the pod when the
pod's namespace is in the term's ``namespaces`` set OR the term's ``namespaceSelector``
matches ``nsLabels``; then the term's label selector must match the pod's labels.
Two cases use it differently:

- an *existing* pod's term against the incoming pod: ``nsLabels`` are the labels of the
  incoming pod's Namespace object (empty when it does not exist);
- an *incoming* pod's term against an existing pod: upstream first adds the names of the
  namespaces its (non-empty) namespaceSelector selects to ``namespaces``
  (``mergeAffinityTermNamespacesIfNotEmpty``) and then matches with *empty* ``nsLabels``.
  It replaces the selector by Nothing on a copy of the term only, so the original
  selector is still matched against empty labels: a selector made only of NotIn /
  DoesNotExist requirements therefore admits every namespace. :class:`IncomingTerm`
  reproduces exactly that, looking Namespace objects up by name (lazily, once per name).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from kubesched.api.objects import Pod, PodAffinityTerm
from kubesched.framework.interface import ClusterObjects

log = logging.getLogger(__name__)

EMPTY_LABELS: Mapping[str, str] = {}

TopologyPair = tuple[str, str]


def namespace_labels(objects: ClusterObjects, namespace: str) -> Mapping[str, str]:
    """Upstream ``GetNamespaceLabelsSnapshot``: the namespace's labels, empty when absent."""
    ns = objects.namespace(namespace)
    if ns is None:
        log.debug("namespace %s not found, assuming an empty set of namespace labels", namespace)
        return EMPTY_LABELS
    return dict(ns.labels)


def existing_term_matches(term: PodAffinityTerm, pod: Pod, ns_labels: Mapping[str, str]) -> bool:
    """``AffinityTerm.Matches`` for a term of an existing pod (no namespace unrolling)."""
    if pod.namespace in term.namespaces or (
            term.namespace_selector is not None and term.namespace_selector.matches(ns_labels)):
        return term.selector.matches(pod.labels)
    return False


def existing_term_matches_all(terms: Sequence[PodAffinityTerm], pod: Pod) -> bool:
    """``podMatchesAllAffinityTerms`` for terms that were not unrolled (queueing hints)."""
    if not terms:
        return False
    return all(existing_term_matches(t, pod, EMPTY_LABELS) for t in terms)


class IncomingTerm:
    """A term of the pod being scheduled, with its namespaceSelector resolved as upstream's
    PreFilter/PreScore resolve it (see the module docstring)."""

    __slots__ = ("topology_key", "selector", "weight", "_namespaces", "_any_namespace",
                 "_ns_selector", "_objects", "_admitted")

    def __init__(self, term: PodAffinityTerm, objects: ClusterObjects, weight: int = 0) -> None:
        self.topology_key = term.topology_key
        self.selector = term.selector
        self.weight = weight
        self._namespaces = term.namespaces
        sel = term.namespace_selector
        # nil selector: Nothing (never matches); {}: Everything (not unrolled, matches all).
        self._any_namespace = sel is not None and sel.matches(EMPTY_LABELS)
        self._ns_selector = None if sel is None or sel.empty else sel
        self._objects = objects
        self._admitted: dict[str, bool] = {}

    def admits(self, namespace: str) -> bool:
        if namespace in self._namespaces or self._any_namespace:
            return True
        sel = self._ns_selector
        if sel is None:
            return False
        ok = self._admitted.get(namespace)
        if ok is None:
            ns = self._objects.namespace(namespace)
            ok = self._admitted[namespace] = ns is not None and sel.matches(ns.labels)
        return ok

    def matches(self, pod: Pod) -> bool:
        return self.admits(pod.namespace) and self.selector.matches(pod.labels)


def incoming_terms(terms: Sequence[PodAffinityTerm], objects: ClusterObjects) -> list[IncomingTerm]:
    return [IncomingTerm(t, objects) for t in terms]


def matches_all(terms: Sequence[IncomingTerm], pod: Pod) -> bool:
    """Upstream ``podMatchesAllAffinityTerms``: False for no terms."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod):
            return False
    return True


# the kinds of an existing pod's scoring terms (see existing_scoring_terms)
REQ, PREF, ANTI = 0, 1, 2


def existing_scoring_terms(pod: Pod) -> list[tuple[int, PodAffinityTerm, int]]:
    """``(kind, term, weight)`` for each term of an existing pod that scores an incoming
    pod (upstream's processExistingPod): its required affinity terms (weight 0 here: the
    caller applies hardPodAffinityWeight), its preferred affinity and preferred
    anti-affinity terms with their weights."""
    aff = pod.affinity
    if aff is None:
        return []
    out: list[tuple[int, PodAffinityTerm, int]] = [(REQ, t, 0) for t in aff.pod_affinity_required]
    out += [(PREF, w.term, w.weight) for w in aff.pod_affinity_preferred]
    out += [(ANTI, w.term, w.weight) for w in aff.anti_affinity_preferred]
    return out
