"""bench/long_jvm.py: its refusals (before any worktree, lakehouse or JVM) and how it
reads the timings the suite's harness writes (no dbt, no JVM). bench/hooks.py, which
also compares two revisions, is refused the same way here."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import hooks, long_jvm


@pytest.mark.parametrize(
    ("bench", "args", "message"),
    [
        (long_jvm, ["--base", "HEAD", "--suite", "../outside.py"], "must be a path under tests/"),
        (long_jvm, ["--base", "HEAD", "--suite", "/etc/passwd"], "must be a path under tests/"),
        (long_jvm, ["--base", "HEAD", "--suite", "tests/no_such_suite.py"], "is not a test file"),
        (long_jvm, ["--base", "HEAD", "--suite", "tests/functional"], "is not a test file"),
        (long_jvm, ["--base=-x"], "must name a revision"),
        (long_jvm, ["--base", "no-such-revision"], "is not a commit of this repository"),
        (hooks, ["--base=-x"], "must name a revision"),
        (hooks, ["--base", "no-such-revision"], "is not a commit of this repository"),
        (hooks, ["--base", "HEAD", "--rounds", "1"], "--rounds must be between 2 and 15"),
        (hooks, ["--base", "HEAD", "--patients", "0"], "--patients must be between 1 and 1000"),
        (hooks, ["--base", "HEAD", "--select", "a; drop"], "--select takes 1-20 model names"),
        (hooks, ["--base", "HEAD", "--select", *["m"] * 21], "--select takes 1-20 model names"),
    ],
)
def test_bad_arguments_are_refused_before_anything_starts(
    bench: object,
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path / "lakehouse"))
    with pytest.raises(SystemExit) as stopped:
        bench.main(args)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "lakehouse").exists()


def test_the_timings_are_read_per_command_and_summed(tmp_path: Path) -> None:
    timings = tmp_path / "head.tsv"
    timings.write_text(
        "294.14\t25.58\t374.36\tbuild\n"
        "10.84\t1.91\t11.88\ttest --select retained_aggregates_cover_their_upstream\n"
    )
    rows = long_jvm.commands(timings)
    assert rows == [
        (294.14, 25.58, 374.36, "build"),
        (10.84, 1.91, 11.88, "test --select retained_aggregates_cover_their_upstream"),
    ]
    assert long_jvm.totals(rows) == pytest.approx((304.98, 27.49, 386.24))
    assert long_jvm.commands(tmp_path / "none.tsv") == []
