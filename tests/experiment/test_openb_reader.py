"""Reading openb CSV files: the columns of Alibaba's cluster-trace-gpu-v2023 README
(``sn,cpu_milli,memory_mib,gpu,model``; ``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,
qos,pod_phase,creation_time,deletion_time,scheduled_time``; the multigpu lists have the first
five), and one-line errors naming file, line and column for a bad row.
"""

from pathlib import Path

import pytest

from kubesched.contrib.gpushare.model import GpuRequest
from kubesched.experiment.openb import TraceError, read_nodes, read_pods

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn-0,64000,262144,2,P100\nn-1,32000,131072,0,\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
        "scheduled_time\n"
        "p-0,12000,16384,1,460,,LS,Running,0,12537496,0\n"
        "p-1,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497\n"
        "p-2,16000,32768,1,1000,V100M16|V100M32,LS,Running,9967058,,9967063\n"
        "p-3,4000,8192,0,0,,BE,Pending,5,,\n")


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_read(tmp_path: Path) -> None:
    nodes = read_nodes(write(tmp_path, "n.csv", NODES))
    assert [(n.name, n.cpu, n.memory, n.gpus, n.model) for n in nodes] == [
        ("n-0", 64000, 262144, 2, "P100"), ("n-1", 32000, 131072, 0, "")]
    pods = read_pods(write(tmp_path, "p.csv", PODS))
    assert [p.gpu for p in pods] == [GpuRequest(460, 1), GpuRequest(1000, 8),
                                     GpuRequest(1000, 1, ("V100M16", "V100M32")), GpuRequest()]
    assert (pods[1].qos, pods[1].phase, pods[1].creation_time, pods[1].deletion_time) == \
        ("Burstable", "Succeeded", 9437497, 10769854)
    assert pods[2].deletion_time is None


def test_five_column_pod_lists(tmp_path: Path) -> None:
    pods = read_pods(write(tmp_path, "m.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,2,1000\n"))
    assert pods[0].gpu == GpuRequest(1000, 2) and pods[0].qos == ""


@pytest.mark.parametrize("text,where", [
    ("name,cpu_milli,memory_mib,num_gpu\np,1,1,0\n", "p.csv:1: missing column gpu_milli"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,0,0\nq,1x,1,0,0\n", "p.csv:3: column cpu_milli: '1x' is not"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,1200\n", "p.csv:2: column gpu_milli: 1200 must be between 0"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,2,500\n", "p.csv:2: column gpu_milli: a pod asking for 2"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,0\n", "p.csv:2: column gpu_milli: a pod asking for 1"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,-5,0,0\n", "p.csv:2: column memory_mib: -5 must be"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,9,1000\n", "p.csv:2: column num_gpu: 9 must be"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,0,0,7\n", "p.csv:2: column 6: more fields"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,0,0\np,2,2,0,0\n", "p.csv:3: column name: pod 'p' already"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n,1,1,0,0\n", "p.csv:2: column name: missing pod name"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,,1,0,0\n", "p.csv:2: column cpu_milli: missing value"),
], ids=["header", "not-int", "milli-range", "shared-multi", "gpu-without-milli", "negative", "too-many-gpus",
        "extra-field", "duplicate", "no-name", "empty"])
def test_pod_errors(tmp_path: Path, text: str, where: str) -> None:
    path = write(tmp_path, "p.csv", text)
    with pytest.raises(TraceError) as exc:
        read_pods(path)
    assert str(exc.value).startswith(f"{tmp_path}/{where}")


def test_node_errors(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match=r"n.csv:2: column model: a node with 4 GPUs needs a GPU model"):
        read_nodes(write(tmp_path, "n.csv", "sn,cpu_milli,memory_mib,gpu,model\nx,1,1,4,\n"))
    with pytest.raises(TraceError, match=r"nope.csv: No such file"):
        read_nodes(tmp_path / "nope.csv")
