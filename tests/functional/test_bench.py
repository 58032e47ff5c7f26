"""The erasure-at-scale benchmark (bench/run.py) runs end to end, as a user runs it.

Its figures are not judged here (speed belongs in bench/, never in a timed test); what
is checked is that every strategy ran on real Spark + Delta and that Delta's own
metrics agreed with the rows each case had to erase (the benchmark exits non-zero
when they do not), and that the report, JSON and chart, was written.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dbt_harness import ROOT, free_port

pytestmark = pytest.mark.functional

ROWS = 20_000


def _script(tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess:
    """A benchmark script, as a user runs it, on a lakehouse folder of its own."""
    env = {**os.environ, "LAKEHOUSE_DIR": str(tmp_path / "lakehouse")}
    env["LAKEHOUSE_DRIVER_MEMORY"] = "2g"
    return subprocess.run(
        [sys.executable, script, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )


def _bench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return _script(tmp_path, "bench/run.py", *args)


def test_every_strategy_runs_and_is_checked(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _bench(tmp_path, "--rows", str(ROWS), "--runs", "1", "--sizes", "10", "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / f"bench_{ROWS}.json").read_text())
    results = report["results"]
    bulk = [r for r in results if r["group"] == "bulk"]
    # 5 strategies x deletion vectors on/off, each erasing exactly the 10%
    assert len(bulk) == 10 and {r["keys_rows"] for r in bulk} == {ROWS // 10}
    assert {(r["case"], r["layout"]) for r in bulk} == {
        ("MERGE, bcast off", "as loaded"),
        ("MERGE, bcast on (100 MB)", "as loaded"),
        ("gdpr_erase", "as loaded"),
        ("gdpr_erase", "Z-ordered"),
        ("gdpr_erase", "liquid"),
    }
    # the physical erasure is timed after every deletion-vector run, and only then
    assert all(("purge_core_s" in r) == r["deletion_vectors"] for r in bulk)
    # deletion vectors: rows deleted without rewriting a file; off: files rewritten
    assert all(r["files_removed"] == 0 for r in bulk if r["deletion_vectors"])
    assert all(r["files_removed"] > 0 for r in bulk if not r["deletion_vectors"])
    requests = [r for r in results if r["group"].startswith("request ")]
    assert len(requests) == 6 and {r["keys_rows"] for r in requests} == {10}
    ceiling = {r["case"] for r in results if r["group"] == "ceiling"}
    assert ceiling == {"scan key column", "scan all columns", "rewrite all columns"}
    assert "CONVERT TO DELTA" in {r["case"] for r in results}
    assert all(r["core_s"] > 0 for r in results)
    # open-source Delta refuses the document's DELETE ... WHERE EXISTS; the report says so
    assert "DELTA_UNSUPPORTED_SUBQUERY" in report["document_delete"]
    assert (out / f"bench_{ROWS}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "target, logical erasure" in done.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["--rows", "5"], "--rows must be between 1,000 and 2,000,000,000"),
        (["--rows", "10000", "--runs", "0"], "--runs must be between 1 and 9"),
        (
            ["--rows", "10000", "--sizes", "5000"],
            "--sizes must be between 1 and --rows / 10 (1000)",
        ),
    ],
)
def test_bad_arguments_are_refused_before_anything_starts(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = _bench(tmp_path, *args)
    assert done.returncode == 2 and message in done.stderr
    assert not (tmp_path / "lakehouse").exists()


def test_the_ingestion_bench_times_a_new_batch_and_a_first_build(tmp_path: Path) -> None:
    """bench/ingestion.py end to end on the smallest sizes: its figures are printed and
    written, not judged (docs/decisions/0024 has the full run's)."""
    out = tmp_path / "ingestion.json"
    args = ["--landed", "1", "--patients", "20", "--scale-patients", "20", "--out", str(out)]
    done = _script(tmp_path, "bench/ingestion.py", *args)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert [row["landed"] for row in report["incremental"]] == [1]
    assert report["throughput"]["events"] > 100 and report["throughput"]["wall_s"] > 0
    assert "One new batch" in done.stdout and "landing events" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "the following arguments are required: --base"),
        (["--base", "HEAD", "--runs", "10"], "--runs must be between 1 and 9"),
        (["--base", "HEAD", "--patients", "1000,x"], "--patients must be whole numbers"),
        (["--base", "HEAD", "--patients", "2000000"], "--patients values must be between 1"),
        (["--base=-p"], "--base must name a revision"),
        (["--base", "no-such-revision"], "--base 'no-such-revision' is not a commit"),
    ],
)
def test_the_build_cost_bench_refuses_bad_arguments_before_anything_starts(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = _script(tmp_path, "bench/build_cost.py", *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert not (tmp_path / "lakehouse").exists()


def test_the_warm_bench_runs_every_command_through_the_engine(tmp_path: Path) -> None:
    """bench/warm.py --engines warm end to end on a small demo: the engine starts, dbt's
    warm target builds, erases and restores through its Thrift server, audit_stream runs
    through its socket, and the engine stops. (The embedded side of the bench is the
    embedded session every other functional suite runs.) Figures are not judged here."""
    port = free_port()
    out = tmp_path / "warm.json"
    env = {
        **os.environ,
        "LAKEHOUSE_DIR": str(tmp_path / "lakehouse"),
        "LAKEHOUSE_DRIVER_MEMORY": "2g",
        "LAKEHOUSE_ENGINE_PORT": str(port),
    }
    args = ["--patients", "20", "--engines", "warm", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "bench/warm.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert len(report["engine_up_s"]) == 1
    assert [r["step"] for r in report["results"]] == [
        "trivial run-operation",
        "gdpr_erase (1 subject)",
        "restore_version",
        "gdpr_erase, next subject",
        "audit --once, nothing new",
    ]
    assert all(set(r) == {"step", "warm_s"} and len(r["warm_s"]) == 1 for r in report["results"])
    assert "engine up:" in done.stdout and "dbt build --target warm" in done.stdout
    state = tmp_path / "lakehouse" / "bench-warm"
    assert not (state / "engine" / "engine.json").exists()  # stopped
    assert (state / "engine" / "engine.log").read_text().count("engine ready") == 1
    # the engine answered every statement inside the call: dbt never slept on a poll
    log = (state / "logs" / "dbt.log").read_text(errors="replace")
    assert "Poll status" in log and "sleeping" not in log


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--runs", "0"], "--runs must be from 1 to 5"),
        (["--patients", "5"], "--patients must be from 10 to 100,000"),
        (["--engines", "cluster"], "--engines must name embedded, warm or both"),
    ],
)
def test_the_warm_bench_refuses_bad_arguments_before_anything_starts(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = _script(tmp_path, "bench/warm.py", *args)
    assert done.returncode == 2 and message in done.stderr
    assert not (tmp_path / "lakehouse").exists()


def test_make_runs_first_run_in_one_process_builds_and_audits_everything(tmp_path: Path) -> None:
    """`python -m demo.run` (what `make run` runs) on a fresh lakehouse: the
    landing zone, `dbt build` in-process, then the audit on the build's own session:
    every node passes and every CDF relation the build wrote is audited."""
    env = {
        **os.environ,
        "LAKEHOUSE_DIR": str(tmp_path / "lakehouse"),
        "DBT_TARGET_PATH": str(tmp_path / "target"),
        "DBT_LOG_PATH": str(tmp_path / "logs"),
        "LAKEHOUSE_DRIVER_MEMORY": "2g",
        "LAKEHOUSE_ENGINE": "off",
    }
    done = subprocess.run(
        [sys.executable, "-m", "demo.run", "--patients", "20"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert out.index("landing ") < out.index("Built ") < out.index("Audited ")
    assert "ERROR=0" in out
    audited = re.search(r"Audited (\d+) new version\(s\) of (\d+) relation\(s\)", out)
    assert audited and int(audited[1]) >= int(audited[2]) > 20, out[-2000:]
