"""Unit layer for business time (issue 26, shared reference 004's G-SCD): the business
day a build closes (var business_date, in its commit tags) and the version that closed
a day (as_of_business_date, as_of). Rendered in plain Jinja (tests/jinja_harness.py),
no dbt run, no warehouse, no JVM.
"""

from __future__ import annotations

import datetime
import json

import pytest
import pytz

from python_jobs.macros import Macros
from tests.jinja_harness import Jinja

TAG_PREFIX = "set spark.databricks.delta.commitInfo.userMetadata = "


def _commit(version: int, day: str | None, operation: str = "MERGE") -> dict:
    tag = {"purpose": "build", "business_date": day} if day else {"purpose": "erase"}
    return {
        "version": version,
        "timestamp_text": f"2026-01-0{min(version, 9)} 23:00:00",
        "operation": operation,
        "tag": tag,
    }


def _version(jinja: Jinja, commits: list[dict], day: str) -> dict | None:
    history = sorted(commits, key=lambda commit: commit["version"], reverse=True)
    return jinja.macros()._business_version(history, day)


def test_a_day_maps_to_the_newest_version_that_closed_it_or_an_earlier_day(jinja: Jinja) -> None:
    commits = [
        _commit(0, "2026-01-05", "CREATE OR REPLACE TABLE AS SELECT"),
        _commit(1, "2026-01-05", "SET TBLPROPERTIES"),
        _commit(2, None, "DELETE"),  # an erasure: closes no day
        _commit(3, "2026-01-06"),
        _commit(4, "2026-01-06"),  # a second build that day re-closes it
        _commit(5, "2026-01-08"),
        _commit(6, None, "VACUUM END"),
    ]
    assert _version(jinja, commits, "2026-01-05")["version"] == 1
    assert _version(jinja, commits, "2026-01-06")["version"] == 4
    # no build on the 7th: the state the 6th closed
    found = _version(jinja, commits, "2026-01-07")
    assert (found["version"], found["business_date"], found["later"]) == (4, "2026-01-06", [])
    assert _version(jinja, commits, "2026-01-08")["version"] == 5
    assert _version(jinja, commits, "2030-01-01")["version"] == 5
    assert _version(jinja, commits, "2026-01-04") is None


def test_late_data_re_closes_its_day_and_says_it_holds_a_later_one(jinja: Jinja) -> None:
    commits = [_commit(0, "2026-01-05"), _commit(1, "2026-01-06"), _commit(2, "2026-01-05")]
    found = _version(jinja, commits, "2026-01-05")
    assert (found["version"], found["later"]) == (2, ["2026-01-06"])
    # the 6th closed at version 1, and version 2 (tagged the 5th) came after it
    assert _version(jinja, commits, "2026-01-06")["version"] == 2


def test_a_tag_without_a_day_or_with_a_malformed_one_closes_nothing(jinja: Jinja) -> None:
    commits = [_commit(0, "2026-01-05"), _commit(1, None)]
    commits.append({**_commit(2, None), "tag": {"business_date": "tomorrow"}})
    commits.append({**_commit(3, None), "tag": {"business_date": 20260106}})
    assert _version(jinja, commits, "2026-01-31")["version"] == 0


def _today(days: int = 0) -> str:
    now = datetime.datetime.now(pytz.utc) + datetime.timedelta(days=days)
    return now.strftime("%Y-%m-%d")


def test_a_build_is_tagged_with_the_day_it_closes(jinja: Jinja) -> None:
    for vars_, day in [(None, _today()), ("{business_date: 2026-01-05}", "2026-01-05")]:
        sql = jinja.with_vars(vars_).compile_inline(
            "{{ gdpr_lakehouse.set_commit_metadata('build') }}"
        )
        assert json.loads(sql.removeprefix(TAG_PREFIX))["business_date"] == day
    # an erasure, a restore: no business day (they close no period)
    sql = jinja.compile_inline("{{ gdpr_lakehouse.set_commit_metadata('erase') }}")
    assert "business_date" not in json.loads(sql.removeprefix(TAG_PREFIX))


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("'2026-13-01'", "is not a day of the calendar"),
        ("'2026-02-30'", "is not a day of the calendar"),
        ("'1999-12-31'", "is not a day of the calendar from the year 2000"),
        ("'2026-1-5'", "is not a date"),
        ("tomorrow", "is not a date"),
        ("20260105", "is not a date"),
        ("'2026-01-05; drop table x'", "is not a date"),
        ("'${env:LAKEHOUSE_KEK}'", "is not a date"),
        (f"'{_today(8)}'", "more than 7 days after today"),
    ],
)
def test_a_business_date_that_is_not_a_day_up_to_a_week_ahead_stops_the_run(
    jinja: Jinja, value: str, error: str
) -> None:
    ok, message = jinja.with_vars(f"{{business_date: {value}}}").compile_errors(
        "{{ gdpr_lakehouse.validate_business_date() }}"
    )
    assert not ok and error in message, message
    assert "YYYY-MM-DD" in message or "give a day up to" in message


def test_a_business_date_up_to_a_week_ahead_is_accepted(jinja: Jinja) -> None:
    for value in (_today(7), _today(), "2000-01-01", "2024-02-29"):
        assert (
            jinja.with_vars(f"{{business_date: '{value}'}}").compile_inline(
                "{{ gdpr_lakehouse.business_date() }}"
            )
            == value
        )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ("model='silver_patients'", "date is required"),
        ("model='silver_patients', date='5 Jan'", "is not a date"),
        ("model='silver_patients', date='2026-01-05', version=3", "unknown argument(s) version"),
        ("model='privacy_subject_keys', date='2026-01-05'", "is the key vault"),
        ("model='privacy_erasure_requests', date='2026-01-05'", "a privacy control table"),
        ("model='privacy_system_keys', date='2026-01-05'", "the system key table"),
        ("model='no_such_model', date='2026-01-05'", "is not a model, snapshot or seed"),
        ("model='silver; drop', date='2026-01-05'", "model must be the name of a dbt"),
    ],
)
def test_as_of_business_date_refuses_bad_input_before_reading_anything(
    jinja: Jinja, args: str, error: str
) -> None:
    def never(*_: object, **__: object) -> None:
        raise AssertionError("nothing may be read for bad input")

    context = dict(jinja.macros()._env.globals)
    for own in ("gdpr_lakehouse", "adapter"):  # the new namespace's own
        context.pop(own)
    macros = Macros({**context, "run_query": never, "execute": True})
    macros._env.globals["adapter"].get_relation = never
    with pytest.raises(Macros.CompilerError) as raised:
        macros.render(f"{{{{ gdpr_lakehouse.as_of_business_date({args}) }}}}")
    assert error in str(raised.value), raised.value
