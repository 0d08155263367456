"""``kubesched import openb``: manifests with the capacities, labels and annotations
open-gpu-share reads (hkust-adsl/kubernetes-scheduler-simulator ``data/pod_csv_to_yaml.py``
and ``data/node_yaml/openb_node_list_gpu_node.yaml``: ``alibabacloud.com/gpu-milli``,
``gpu-count``, ``gpu-card-model``, pods capacity 1001), which ``simulate`` schedules."""

from pathlib import Path

import pytest
import yaml

import kubesched
from kubesched.cli.main import main

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn-0,64000,262144,2,P100\nn-1,32000,131072,0,\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
        "scheduled_time\n"
        "p-0,12000,16384,1,460,,LS,Failed,0,12537496,0\n"
        "p-1,8000,32768,1,1000,P100|T4,BE,Running,5,,5\n"
        "p-2,4000,8192,0,0,,BE,Pending,9,,\n"
        "p-3,4000,8192,2,1000,,LS,Running,9,,\n")
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "kubesched.contrib.gpushare:GpuShare"}]}}}]}


def test_import_then_simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "n.csv").write_text(NODES)
    (tmp_path / "p.csv").write_text(PODS)
    out = tmp_path / "m"
    assert main(["import", "openb", "--nodes", str(tmp_path / "n.csv"), "--pods", str(tmp_path / "p.csv"),
                 "--output-dir", str(out)]) == 0
    assert capsys.readouterr().out.split() == [str(out / "nodes.yaml"), str(out / "pods.yaml")]
    nodes = list(yaml.safe_load_all((out / "nodes.yaml").read_text()))
    assert nodes[0]["metadata"]["labels"]["alibabacloud.com/gpu-card-model"] == "P100"
    assert nodes[0]["status"]["allocatable"] == {"cpu": "64000m", "memory": "262144Mi", "pods": "1001",
                                                 "alibabacloud.com/gpu-count": "2",
                                                 "alibabacloud.com/gpu-milli": "2000"}
    assert "alibabacloud.com/gpu-count" not in nodes[1]["status"]["allocatable"]
    pods = list(yaml.safe_load_all((out / "pods.yaml").read_text()))
    assert pods[1]["metadata"]["annotations"] == {
        "alibabacloud.com/gpu-milli": "1000", "alibabacloud.com/gpu-count": "1",
        "alibabacloud.com/gpu-card-model": "P100|T4", "trace.kubesched.io/qos": "BE",
        "trace.kubesched.io/phase": "Running", "trace.kubesched.io/creation-time": "5",
        "trace.kubesched.io/scheduled-time": "5"}
    assert pods[0]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "12000m", "memory": "16384Mi"}
    assert "status" not in pods[0]  # the trace's Failed is history, not a state to start from
    # p-0 shares GPU 0 of n-0 (460); p-1 takes the other whole P100 GPU; p-2 needs no GPU;
    # p-3 wants two whole GPUs: none left
    res = kubesched.simulate(out, config=CONFIG, tie_break="name")
    got = {p.name: (p.status, p.node, p.annotations.get("alibabacloud.com/gpu-index")) for p in res.pods}
    assert got["p-0"] == ("Scheduled", "n-0", "0")
    assert got["p-1"] == ("Scheduled", "n-0", "1")
    assert got["p-2"][0] == "Scheduled"
    assert got["p-3"][0] == "Unschedulable"


def test_import_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "n.csv").write_text(NODES)
    (tmp_path / "p.csv").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,abc\n")
    assert main(["import", "openb", "--nodes", str(tmp_path / "n.csv"), "--pods", str(tmp_path / "p.csv"),
                 "--output-dir", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err == f"kubesched: error: {tmp_path}/p.csv:2: column gpu_milli: 'abc' is not an integer\n"
