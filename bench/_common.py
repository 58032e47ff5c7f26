"""What the benchmarks share: their own lakehouse folder, CPU clocks, in-process dbt."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bench_state(name: str) -> Path:
    """<LAKEHOUSE_DIR or .lakehouse>/<name>, pointed at before anything starts Spark."""
    base = Path(os.environ.get("LAKEHOUSE_DIR", ROOT / ".lakehouse"))
    state = base if base.name == name else base / name
    os.environ["LAKEHOUSE_DIR"] = str(state)
    os.environ.setdefault("LAKEHOUSE_PROJECT_DIR", str(ROOT))
    os.environ.setdefault("DBT_PROFILES_DIR", str(ROOT))
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("LAKEHOUSE_ACTOR", "bench")
    os.environ["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    return state


def demo_sizes(parser, patients: str, runs: int) -> list[int]:
    """--patients (demo sizes, comma-separated) and --runs of a bench that builds the
    demo, checked before anything starts: bad values stop it through parser.error."""
    try:
        sizes = [int(size) for size in patients.split(",")]
    except ValueError:
        parser.error(f"--patients must be whole numbers separated by commas, got {patients!r}")
    if not sizes or min(sizes) < 1 or max(sizes) > 1_000_000:
        parser.error("--patients values must be between 1 and 1,000,000")
    if not 1 <= runs <= 9:
        parser.error("--runs must be between 1 and 9")
    return sizes


def jvm_cpu_seconds(spark) -> float:
    """User + system CPU time of the Spark JVM so far (Linux /proc)."""
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Clock:
    """Wall seconds and JVM core-seconds of a block."""

    def __init__(self, spark) -> None:
        self.spark = spark

    def __enter__(self) -> Clock:
        self.wall0, self.cpu0 = time.perf_counter(), jvm_cpu_seconds(self.spark)
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = jvm_cpu_seconds(self.spark) - self.cpu0


def dbt_invoker(state: Path):
    """dbt in this process (the same SparkSession); fails loudly."""
    from dbt.cli.main import dbtRunner

    dbt_args = ["--project-dir", str(ROOT), "--target-path", str(state / "target")]
    dbt_args += ["--log-path", str(state / "logs")]

    def dbt(*command: str, quiet: bool = True):
        result = dbtRunner().invoke([*command, *dbt_args, *(["--quiet"] if quiet else [])])
        if not result.success:
            raise SystemExit(f"dbt {' '.join(command[:2])} failed: {result.exception}")
        return result

    return dbt


def git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def fresh_bench_state(name: str) -> Path:
    """bench_state(name), emptied: what an earlier run of the bench left is gone."""
    state = bench_state(name)
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    return state


def revision_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """The arguments of a bench comparing this checkout with an earlier revision: --base
    and --out; the caller adds its own."""
    parser = argparse.ArgumentParser(
        prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", required=True, help="the earlier revision (a commit or ref)")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    return parser


def base_commit(parser: argparse.ArgumentParser, base: str) -> str:
    """--base, a revision of this repository, as a full commit id; parser.error if not."""
    if base.startswith("-"):
        parser.error(f"--base must name a revision, got {base!r}")
    found = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        parser.error(f"--base {base!r} is not a commit of this repository")
    return found.stdout.strip()


@contextmanager
def base_worktree(path: Path, commit: str) -> Iterator[Path]:
    """The commit checked out at `path` (git worktree) with this checkout's .venv (and
    so Delta's jars), removed at the end."""
    git("worktree", "add", "--detach", str(path), commit)
    try:
        if (ROOT / ".venv").exists():
            (path / ".venv").symlink_to(ROOT / ".venv")
        yield path
    finally:
        git("worktree", "remove", "--force", str(path))
