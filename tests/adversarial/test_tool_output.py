"""dbt's own output is its owner's only.

A dbt command writes what it was given to its log (`logs/dbt.log`) and its artifacts
(`target/`): `dbt run-operation gdpr_erase --args '{subject_ids: [...]}'` leaves the
ids there until a purge redacts them. Made under the shell's usual umask (022), both
were readable by every local account. No JVM here: `dbt ls` with the id in its vars
writes it to both.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.dbt_harness import ROOT

SUBJECT = "P0000123"
DBT = Path(sys.executable).parent / "dbt"


def _dbt(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(DBT), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: os.umask(0o022),  # a shell's usual umask
    )


def _holding(folder: Path, needle: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_dbt_output_naming_a_subject_is_unreachable_to_other_accounts(tmp_path: Path) -> None:
    # a log folder an older run left open to everyone, with its log in it
    logs, target = tmp_path / "logs", tmp_path / "target"
    logs.mkdir()
    logs.chmod(0o755)
    (logs / "dbt.log").write_text("an older run\n")
    (logs / "dbt.log").chmod(0o644)
    env = {
        **os.environ,
        "DBT_LOG_PATH": str(logs),
        "DBT_TARGET_PATH": str(target),
        "DBT_PROFILES_DIR": str(ROOT),
    }
    done = _dbt(
        ROOT,
        env,
        "ls",
        "--select",
        "privacy_subject_keys",
        "--vars",
        f"{{probe_subject: {SUBJECT}}}",
        "-q",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    written = _holding(logs, SUBJECT) + _holding(target, SUBJECT)
    assert {p.parent for p in written} == {logs, target}, written  # the case this test is for
    for folder in (logs, target):
        assert folder.stat().st_mode & 0o777 == 0o700, f"{folder}: {oct(folder.stat().st_mode)}"
    for path in target.rglob("*"):
        assert path.stat().st_mode & 0o077 == 0, f"{path}: {oct(path.stat().st_mode)}"


def test_dbt_output_folders_given_as_flags_are_narrowed_too(tmp_path: Path) -> None:
    logs, target = tmp_path / "flag_logs", tmp_path / "flag_target"
    for folder in (logs, target):
        folder.mkdir()
        folder.chmod(0o755)
    env = {**os.environ, "DBT_PROFILES_DIR": str(ROOT)}
    env.pop("DBT_LOG_PATH", None)
    env.pop("DBT_TARGET_PATH", None)
    done = _dbt(
        tmp_path,
        env,
        "ls",
        "--project-dir",
        str(ROOT),
        "--log-path",
        str(logs),
        "--target-path",
        str(target),
        "--select",
        "privacy_subject_keys",
        "-q",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (target / "manifest.json").is_file()
    for folder in (logs, target):
        assert folder.stat().st_mode & 0o777 == 0o700, f"{folder}: {oct(folder.stat().st_mode)}"
