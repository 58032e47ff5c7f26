"""The suite's dbt harness writes dbt's JSON artifacts only when they can have changed.

dbt writes target/manifest.json twice per command (~1 s of a warm small command);
the suites and jobs read it, and it changes only with the project's files, a
command's vars and the environment. tests/dbt_harness.py passes --no-write-json once
a command of the session has written that target path's manifest in the same
environment. These cases check the rule without starting dbt.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dbt_harness import DbtProject


class _Dbt:
    """Stands in for dbtRunner where only its artifacts matter: writes manifest.json
    into --target-path unless --no-write-json, as dbt does, or nothing when its parse
    fails."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.wrote = False

    def invoke(self, argv: list[str]) -> None:
        self.wrote = "--no-write-json" not in argv and not self.fail
        if self.wrote:
            target = Path(argv[argv.index("--target-path") + 1])
            target.mkdir(parents=True, exist_ok=True)
            (target / "manifest.json").write_text(" ".join(argv))


def _write(project: DbtProject, args: tuple[str, ...], fail: bool = False) -> bool:
    """Whether the command wrote its JSON, through the harness's own _run."""
    runner = _Dbt(fail)
    project._run(runner, args)
    return runner.wrote


def test_a_manifest_is_written_once_per_target_path_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = DbtProject(target_path=tmp_path / "target", log_path=tmp_path / "logs")
    run = ("run", "--select", "silver_patients")
    assert _write(project, run)  # the session's first command writes it
    assert not _write(project, run)
    assert not _write(project, ("test",))
    assert _write(project, ("parse",))  # parse always writes
    vars_ = ("run", "--vars", '{"k_anonymity": 7}')
    assert _write(project, vars_)  # a target path of its own
    assert not _write(project, vars_)
    monkeypatch.setenv("LAKEHOUSE_SOMETHING_NEW", "1")  # an env_var() may read it
    assert _write(project, run)
    assert not _write(project, run)
    (tmp_path / "target" / "manifest.json").unlink()  # gone: written again
    assert _write(project, run)
    monkeypatch.setenv("LAKEHOUSE_SOMETHING_NEW", "2")
    assert not _write(project, run, fail=True)  # a failed parse wrote nothing...
    assert _write(project, run)  # ...so the next command still writes
    assert "--no-write-json" in project._argv(("compile", "--no-write-json"))[0]
    assert project._argv(("compile", "--no-write-json"))[1] is None
