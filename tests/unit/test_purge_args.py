"""`python -m python_jobs.purge`'s arguments, refused before any session starts: the
VACUUM retention is a whole number of hours, the rule of the macro it runs
(vacuum_relation), so `--retain-hours 0.5` is an error, not a VACUUM of 1 hour here and
0 hours in the post-hook."""

from __future__ import annotations

import pytest

from python_jobs import purge


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0.5", "--retain-hours: must be a whole number of hours from 0 to 87600; got '0.5'"),
        ("167.9", "got '167.9'"),
        ("-1", "got '-1'"),
        ("87601", "got '87601'"),
        ("nan", "got 'nan'"),
        ("24h", "got '24h'"),
    ],
)
def test_a_retention_that_is_not_whole_hours_is_refused(
    value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        purge.parse_args(["--retain-hours", value, "--allow-short-retention"])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_whole_hours_are_taken_as_given() -> None:
    args = purge.parse_args(["--retain-hours", "200"])
    assert args.retain_hours == 200 and isinstance(args.retain_hours, int)
    assert purge.parse_args(["--retain-hours", "0", "--allow-short-retention"]).retain_hours == 0
