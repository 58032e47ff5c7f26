"""Every JVM of the local target maps the class archive `make setup` made
(python_jobs.class_archive): dbt's session, started by `dbt debug`, with -Xshare:on,
which stops a JVM that cannot map it instead of loading its classes itself."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from python_jobs import class_archive
from tests.dbt_harness import ROOT


def _dbt_debug(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).with_name("dbt")), "debug", "--log-path", str(tmp_path / "logs")],
        cwd=ROOT,
        env={
            **os.environ,
            "DBT_PROFILES_DIR": str(ROOT),
            "LAKEHOUSE_DIR": str(tmp_path / "lakehouse"),
            "LAKEHOUSE_ENGINE": "",
            "LAKEHOUSE_JAVA_OPTIONS": "-Xshare:on",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_dbt_maps_the_archive_set_up_made_and_only_its_owner_reads_it(tmp_path: Path) -> None:
    archive = class_archive.archive_path()
    assert archive is not None and class_archive.current(archive), (
        f"no current class archive at {archive}: run `make setup`"
    )
    # code the JVM runs: its owner's only
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    assert stat.S_IMODE(archive.parent.stat().st_mode) == 0o700
    done = _dbt_debug(tmp_path)
    assert done.returncode == 0 and "All checks passed" in done.stdout, done.stdout[-3000:]
    # the check bites: an archive this JVM cannot map (not one at all) stops it under
    # -Xshare:on (named last, as a user's LAKEHOUSE_JAVA_OPTIONS would, past the hook)
    other = tmp_path / "other.jsa"
    other.write_bytes(os.urandom(4096))
    refused = _dbt_debug(
        tmp_path, LAKEHOUSE_JAVA_OPTIONS=f"-Xshare:on -XX:SharedArchiveFile={other}"
    )
    assert refused.returncode != 0 and "All checks passed" not in refused.stdout


def test_a_truncated_archive_is_left_alone_and_the_jvm_starts_without_it(tmp_path: Path) -> None:
    """A JVM maps an archive cut short past its end and dies of SIGBUS at start, whatever
    -Xshare says: an archive whose size is not the one set-up recorded is never named
    to the JVM, which then loads its classes itself."""
    archive = class_archive.archive_path()
    assert archive is not None and class_archive.current(archive), "run `make setup`"
    cut = tmp_path / "archive" / archive.name
    cut.parent.mkdir(mode=0o700)
    with archive.open("rb") as source, cut.open("wb") as target:
        target.write(source.read(archive.stat().st_size // 2))
    cut.chmod(0o600)
    stamp = archive.with_name(archive.name + ".stamp")
    cut.with_name(stamp.name).write_text(stamp.read_text())
    crashes = set(ROOT.glob("hs_err_pid*.log"))  # where a crashing JVM (cwd ROOT) reports
    done = _dbt_debug(tmp_path, LAKEHOUSE_CLASS_ARCHIVE=str(cut), LAKEHOUSE_JAVA_OPTIONS="")
    assert done.returncode == 0 and "All checks passed" in done.stdout, done.stdout[-3000:]
    assert set(ROOT.glob("hs_err_pid*.log")) == crashes, "a JVM crashed"
