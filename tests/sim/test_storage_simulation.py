"""simulate with storage: what happens after a pod with volumes is chosen (the rules of
tests/fidelity_storage/UPSTREAM_README.md, "after a pod is chosen"): PreBind writes the
selected-node annotation, the emulated provisioner makes ``pvc-<uid>`` with node affinity
on the driver's topology keys (values from the chosen node), the emulated PV controller
binds it; a static PV gets the claimRef and both become Bound; ephemeral volumes get their
``<pod>-<volume>`` claims before the run. Expected values are worked out by hand below."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.api.decode import load_manifests
from kubesched.cli.main import main
from kubesched.config import load_config
from kubesched.sim.driver import Simulation

MANIFEST = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: ebs.csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: ebs.csi.example.com
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-b}
spec:
  drivers: [{name: ebs.csi.example.com, nodeID: b, topologyKeys: [topology.kubernetes.io/zone]}]
---
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a, topology.kubernetes.io/zone: za}}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b, topology.kubernetes.io/zone: zb}}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-a}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/a}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-a]}]}]
status: {phase: Available}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], storageClassName: zonal, resources: {requests: {storage: 3Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: cache}
spec: {accessModes: [ReadWriteOnce], storageClassName: local, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pending-immediate}
spec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  nodeSelector: {topology.kubernetes.io/zone: zb}
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
  volumes:
  - {name: c, persistentVolumeClaim: {claimName: cache}}
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec: {accessModes: [ReadWriteOnce], storageClassName: zonal, resources: {requests: {storage: 2Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: stuck}
spec:
  containers: [{name: c, image: i}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: pending-immediate}}]
"""


@pytest.fixture()
def manifest(tmp_path: Path) -> Path:
    f = tmp_path / "storage.yaml"
    f.write_text(MANIFEST)
    return f


@pytest.mark.parametrize("single_pass", [True, False])
def test_binding_and_provisioning_after_a_pod_is_chosen(manifest: Path, single_pass: bool) -> None:
    sim = Simulation(load_manifests([str(manifest)]), load_config(None), tie_break="name")
    sim.run(single_pass=single_pass)
    out = {o.pod.name: (o.status, o.node) for o in sim.results()}
    # db: nodeSelector zone zb -> node-b. web: the local PV "cache" can only bind on node-a.
    assert out == {"db": ("Scheduled", "node-b"), "web": ("Scheduled", "node-a"),
                   "stuck": ("Unschedulable", None)}
    objs = sim.storage.to_json()
    pvs, pvcs = objs["persistentVolumes"], objs["persistentVolumeClaims"]
    # data (uid uid-default-data) provisioned on node-b: CSINode lists the zone key -> zone zb
    assert pvs["pvc-uid-default-data"] == {
        "phase": "Bound", "claimRef": "default/data", "provisionedBy": "ebs.csi.example.com", "capacity": "3Gi",
        "nodeAffinity": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zb"]}]}]}}
    assert pvcs["default/data"] == {"phase": "Bound", "volumeName": "pvc-uid-default-data", "selectedNode": "node-b"}
    # the ephemeral claim web-scratch, provisioned on node-a: no CSINode -> hostname affinity
    assert pvs["pvc-uid-default-web-scratch"]["nodeAffinity"] == {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-a"]}]}]}
    assert pvcs["default/web-scratch"]["phase"] == "Bound"
    # the static local PV is bound by claimRef (no provisioning for a no-provisioner class)
    assert pvs["local-a"] == {"phase": "Bound", "claimRef": "default/cache", "nodeAffinity": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-a"]}]}]}}
    assert pvcs["default/cache"] == {"phase": "Bound", "volumeName": "local-a"}
    assert pvcs["default/pending-immediate"] == {"phase": "Pending", "volumeName": ""}
    stuck = next(o for o in sim.results() if o.pod.name == "stuck")
    assert stuck.message == "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"


def test_cli_json_has_objects(manifest: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "-f", str(manifest), "--single-pass", "--tie-break", "name", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["objects"]) == {"persistentVolumes", "persistentVolumeClaims"}
    assert doc["objects"]["persistentVolumeClaims"]["default/data"]["volumeName"] == "pvc-uid-default-data"


def test_pod_with_missing_claim_stays_pending(tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    f.write_text(MANIFEST.split("---\napiVersion: v1\nkind: Pod")[0] + """---
apiVersion: v1
kind: Pod
metadata: {name: lost}
spec:
  containers: [{name: c, image: i}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: missing}}]
""")
    sim = Simulation(load_manifests([str(f)]), load_config(None), tie_break="name")
    sim.run()
    (out,) = sim.results()
    assert out.status == "Unschedulable"
    assert out.message == '0/2 nodes are available: persistentvolumeclaim "missing" not found. not found'


def test_csi_limit_fills_up_across_binds(tmp_path: Path) -> None:
    """One node whose CSINode allows 2 volumes of a.csi; three pods, each with its own bound
    CSI volume. The first two fit (0+1 <= 2, 1+1 <= 2), the third does not (2+1 > 2) and
    preemption cannot help (equal priorities): the batch form's columns must see each bind."""
    docs = ["""apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "8", memory: 8Gi, pods: "10"}}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: a.csi, nodeID: n1, allocatable: {count: 2}}]}"""]
    for i in range(3):
        docs.append(f"""apiVersion: v1
kind: PersistentVolume
metadata: {{name: pv{i}}}
spec: {{capacity: {{storage: 1Gi}}, accessModes: [ReadWriteOnce], csi: {{driver: a.csi, volumeHandle: h{i}}},
        claimRef: {{namespace: default, name: c{i}}}}}
status: {{phase: Bound}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: c{i}, annotations: {{pv.kubernetes.io/bind-completed: "yes"}}}}
spec: {{accessModes: [ReadWriteOnce], storageClassName: "", volumeName: pv{i}, resources: {{requests: {{storage: 1Gi}}}}}}
status: {{phase: Bound}}
---
apiVersion: v1
kind: Pod
metadata: {{name: p{i}}}
spec:
  containers: [{{name: c, image: i}}]
  volumes: [{{name: v, persistentVolumeClaim: {{claimName: c{i}}}}}]""")
    f = tmp_path / "limits.yaml"
    f.write_text("\n---\n".join(docs))
    sim = Simulation(load_manifests([str(f)]), load_config(None), tie_break="name")
    sim.run(single_pass=True)
    got = {o.pod.name: (o.status, o.message) for o in sim.results()}
    assert got == {
        "p0": ("Scheduled", None), "p1": ("Scheduled", None),
        # DynamicResources' PostFilter (the pod has no claims) adds its phrase before preemption's, as
        # in every upstream message of ../shared/fidelity*/expected for such pods
        "p2": ("Unschedulable", "0/1 nodes are available: 1 node(s) exceed max volume count. no new claims to "
                                "deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found "
                                "for incoming pod.")}
