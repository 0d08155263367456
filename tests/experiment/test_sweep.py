"""Sweeps: the matrix in local processes and on a local Ray, resumed from what finished,
written in the artifact's layouts (``experiments/analysis/expected_results/analysis_allo_discrete.csv``:
``workload,sc_policy,tune,seed,total_gpus,0..130``; ``analysis_frag_ratio_discrete.csv`` and
``analysis_frag_discrete.csv``: ``workload,sc_policy,tune,seed,0..130``)."""

import csv
import json
from pathlib import Path

import pytest

from kubesched.cli.main import main
from kubesched.experiment import sweep
from kubesched.experiment.runs import FillResult

NODES = "sn,cpu_milli,memory_mib,gpu,model\n" + "".join(
    f"node-{i},{32000 * (1 + i % 3)},262144,{(1, 2, 4, 8)[i % 4]},{('V100', 'T4')[i % 2]}\n" for i in range(12))
PODS = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n" + "".join(
    f"pod-{i},{(2000, 4000, 8000)[i % 3]},8192,{(1, 1, 1, 2, 0)[i % 5]},{(300, 500, 1000, 1000, 0)[i % 5]},"
    f"{'T4' if i % 7 == 0 else ''}\n" for i in range(40))


@pytest.fixture
def trace(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "tiny.csv").write_text(PODS)
    return tmp_path / "nodes.csv", tmp_path / "tiny.csv"


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_local_sweep_writes_the_artifact_layouts_and_resumes(trace: tuple[Path, Path], tmp_path: Path) -> None:
    nodes, pods = trace
    out = tmp_path / "out"
    seen: list[tuple[str, int]] = []
    res = sweep(nodes, pods, policies=["fgd", "bestfit"], seeds=[1, 2], out=out, jobs=2,
                progress=lambda done, total, r: seen.append((r.policy, r.seed)))
    assert sorted(seen) == [("bestfit", 1), ("bestfit", 2), ("fgd", 1), ("fgd", 2)]
    with open(out / "allocation.csv") as f:
        header = f.readline().strip().split(",")
    assert header == ["workload", "sc_policy", "tune", "seed", "total_gpus"] + [str(p) for p in range(131)]
    alloc = rows(out / "allocation.csv")
    assert [(r["workload"], r["sc_policy"], r["tune"], r["seed"], r["total_gpus"]) for r in alloc] == [
        ("tiny", "06-FGD", "1.3", "1", "45"), ("tiny", "06-FGD", "1.3", "2", "45"),
        ("tiny", "05-BestFit", "1.3", "1", "45"), ("tiny", "05-BestFit", "1.3", "2", "45")]
    with open(out / "fragmentation.csv") as f:
        assert f.readline().startswith("workload,sc_policy,tune,seed,0,1,")
    assert (out / "fragmentation_amount.csv").is_file() and (out / "report.html").is_file()
    assert [r.policy for r in res.runs] == ["fgd", "fgd", "bestfit", "bestfit"]
    # a second sweep over the same directory runs only what is missing
    (out / "runs" / "tiny" / "06-FGD" / "2.json").unlink()
    seen.clear()
    again = sweep(nodes, pods, policies=["fgd", "bestfit"], seeds=[1, 2], out=out, jobs=2,
                  progress=lambda done, total, r: seen.append((r.policy, r.seed)))
    assert seen == [("fgd", 2)]
    assert [r.to_json()["allocation"] for r in again.runs] == [r.to_json()["allocation"] for r in res.runs]


def test_cli_sweep_and_fill(trace: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes, pods = trace
    assert main(["experiment", "fill", "--nodes", str(nodes), "--pods", str(pods), "--policy", "gpupacking",
                 "--seed", "3", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc.pop("version")  # the command adds kubesched's version to the result's document
    assert FillResult.from_json(doc).to_json() == doc and doc["policy"] == "gpupacking"
    assert main(["experiment", "sweep", "--nodes", str(nodes), "--pods", str(pods), "--policies", "random,dotproduct",
                 "--seeds", "5-6", "--jobs", "1", "--output-dir", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "tiny" in out and "random" in out and "dotproduct" in out and "report.html" in out
    assert main(["experiment", "sweep", "--nodes", str(nodes), "--pods", str(pods), "--policies", "best",
                 "--output-dir", str(tmp_path / "s")]) == 2
    assert "policy 'best': not one of" in capsys.readouterr().err


@pytest.mark.slow
def test_ray_sweep_matches_local(trace: tuple[Path, Path], tmp_path: Path) -> None:
    pytest.importorskip("ray")
    nodes, pods = trace
    local = sweep(nodes, pods, policies=["fgd", "random"], seeds=[1, 2], jobs=1)
    on_ray = sweep(nodes, pods, policies=["fgd", "random"], seeds=[1, 2], ray=True, out=tmp_path / "ray")
    assert [r.to_json()["allocation"] for r in on_ray.runs] == [r.to_json()["allocation"] for r in local.runs]
    assert len(rows(tmp_path / "ray" / "allocation.csv")) == 4


def test_unwritable_output_is_one_line(trace: tuple[Path, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    nodes, pods = trace
    (tmp_path / "file").write_text("")
    assert main(["experiment", "sweep", "--nodes", str(nodes), "--pods", str(pods), "--policies", "fgd",
                 "--seeds", "1", "--output-dir", str(tmp_path / "file" / "out")]) == 2
    assert capsys.readouterr().err.startswith(f"kubesched: error: {tmp_path}/file/out: ")
