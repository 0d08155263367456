"""Discovery documents, derived from the resource table.

Both forms kubectl and client-go understand are served:

* legacy discovery: ``/api`` (APIVersions), ``/apis`` (APIGroupList), ``/apis/<group>``
  (APIGroup), ``/api/v1`` and ``/apis/<group>/<version>`` (APIResourceList);
* aggregated discovery (``apidiscovery.k8s.io/v2``, and ``v2beta1``), returned by ``/api``
  and ``/apis`` when the request's Accept header asks for ``as=APIGroupDiscoveryList``:
  kubectl 1.32 asks for it first and then needs no per-version requests.

``/version`` reports the Kubernetes release whose scheduler kubesched reproduces (``serve
--kubernetes-version``; ``kubesched run`` against this server then decides as that release).
"""

from __future__ import annotations

import platform
import sys
from typing import Any

from kubesched.api import kubeversion
from kubesched.server.apiserver.registry.resources import Resource, ResourceTable

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"


def version_info(kubernetes_version: str) -> dict[str, str]:
    """The ``/version`` document of a server of release ``kubernetes_version`` ("1.35")."""
    v = kubeversion.version_info(kubernetes_version)
    return {"major": v["major"], "minor": v["minor"], "gitVersion": f"{v['gitVersion']}+kubesched", "gitCommit": "",
            "gitTreeState": "clean", "buildDate": "1970-01-01T00:00:00Z",
            "goVersion": f"python{sys.version_info.major}.{sys.version_info.minor}", "compiler": "cpython",
            "platform": f"{platform.system().lower()}/{platform.machine()}"}


def aggregated_media_type(accept: str) -> str | None:
    """The aggregated discovery media type the Accept header asks for, if any."""
    for part in accept.split(","):
        p = part.replace(" ", "")
        if "as=APIGroupDiscoveryList" in p and "g=apidiscovery.k8s.io" in p:
            if "v=v2beta1" in p:
                return AGGREGATED_V2BETA1
            if "v=v2" in p:
                return AGGREGATED_V2
    return None


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _gv(group: str, version: str) -> dict[str, str]:
    return {"groupVersion": f"{group}/{version}", "version": version}


def api_group(table: ResourceTable, group: str) -> dict[str, Any] | None:
    versions = table.groups().get(group)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group,
            "versions": [_gv(group, v) for v in versions], "preferredVersion": _gv(group, versions[0])}


def api_group_list(table: ResourceTable) -> dict[str, Any]:
    groups = []
    for g in table.groups():
        doc = api_group(table, g)
        if doc is not None:
            groups.append({k: v for k, v in doc.items() if k not in ("kind", "apiVersion")})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_resource_list(table: ResourceTable, group: str, version: str) -> dict[str, Any] | None:
    resources = table.in_version(group, version)
    if not resources:
        return None
    out: list[dict[str, Any]] = []
    for r in resources:
        entry: dict[str, Any] = {"name": r.plural, "singularName": r.singular_name, "namespaced": r.namespaced,
                                 "kind": r.kind, "verbs": list(r.verbs)}
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        out.append(entry)
        for s in r.subresources:
            sub: dict[str, Any] = {"name": f"{r.plural}/{s.name}", "singularName": "", "namespaced": r.namespaced,
                                   "kind": s.kind, "verbs": list(s.verbs)}
            if s.group != r.group or s.version != r.version:
                sub["group"], sub["version"] = s.group, s.version
            out.append(sub)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}


def _discovery_resource(r: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": r.plural, "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": "Namespaced" if r.namespaced else "Cluster", "singularResource": r.singular_name,
        "verbs": list(r.verbs)}
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    if r.subresources:
        entry["subresources"] = [{"subresource": s.name,
                                  "responseKind": {"group": s.group, "version": s.version, "kind": s.kind},
                                  "verbs": list(s.verbs)} for s in r.subresources]
    return entry


def aggregated(table: ResourceTable, core: bool, media_type: str) -> dict[str, Any]:
    """The APIGroupDiscoveryList of ``/api`` (core) or ``/apis`` (every named group)."""
    api_version = "apidiscovery.k8s.io/v2beta1" if media_type == AGGREGATED_V2BETA1 else "apidiscovery.k8s.io/v2"
    groups = {"": ["v1"]} if core else table.groups()
    items = []
    for g, versions in groups.items():
        meta: dict[str, Any] = {"creationTimestamp": None}
        if g:
            meta["name"] = g
        items.append({"metadata": meta, "versions": [
            {"version": v, "resources": [_discovery_resource(r) for r in table.in_version(g, v)],
             "freshness": "Current"} for v in versions]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": api_version, "metadata": {}, "items": items}
