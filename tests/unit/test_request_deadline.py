"""The law's clock (GDPR Art. 12(3)), rendered in plain Jinja (no dbt, no JVM): one
calendar month from the day of receipt, as Regulation 1182/71 counts months (the same
day number, or the month's last day when it has none), on month ends and leap years;
the var that sets it and the moments a person gives are checked before anything runs."""

from __future__ import annotations

import pytest

from tests.jinja_harness import Jinja


def _deadline(jinja: Jinja, received: str, extension: int = 0) -> str:
    return jinja.compile_inline(
        f"{{{{ gdpr_lakehouse.request_deadline('{received}', {extension}) }}}}"
    ).strip()


@pytest.mark.parametrize(
    ("received", "due"),
    [
        ("2026-02-10", "2026-03-10"),  # the EDPB's example: same day number
        ("2026-01-31", "2026-02-28"),  # no 31 February: the month's last day
        ("2024-01-31", "2024-02-29"),  # leap year
        ("2024-01-29", "2024-02-29"),
        ("2026-01-29", "2026-02-28"),
        ("2000-01-30", "2000-02-29"),  # divisible by 400: leap
        ("2100-01-29", "2100-02-28"),  # divisible by 100 only: not leap
        ("2026-02-28", "2026-03-28"),  # not moved to 31 March: not a month end rule
        ("2026-03-31", "2026-04-30"),
        ("2026-12-15", "2027-01-15"),  # across a year
        ("2026-05-31", "2026-06-30"),
    ],
)
def test_one_calendar_month_from_the_day_of_receipt(jinja: Jinja, received: str, due: str) -> None:
    assert _deadline(jinja, received) == f"{due} 23:59:59"


def test_an_extension_counts_from_receipt_not_from_the_old_deadline(jinja: Jinja) -> None:
    # chained, 31 Jan -> 28 Feb -> 28 Apr would lose two days; counted from receipt: 30 Apr
    assert _deadline(jinja, "2026-01-31", 2) == "2026-04-30 23:59:59"
    assert _deadline(jinja, "2023-11-30", 2) == "2024-02-29 23:59:59"
    assert _deadline(jinja, "2026-10-31", 1) == "2026-12-31 23:59:59"


def test_a_period_in_days(jinja: Jinja) -> None:
    ccpa = jinja.with_vars({"request_deadline": "45 days"})
    assert _deadline(ccpa, "2026-02-10") == "2026-03-27 23:59:59"
    assert _deadline(ccpa, "2024-02-10") == "2024-03-26 23:59:59"
    assert _deadline(ccpa, "2026-02-10", 45) == "2026-05-11 23:59:59"


@pytest.mark.parametrize(
    "value", ["30", 30, "4 months", "0 months", "91 days", "1 week", "1 month; drop", "", True]
)
def test_a_bad_period_is_refused_naming_what_is_allowed(jinja: Jinja, value: object) -> None:
    ok, error = jinja.with_vars({"request_deadline": value}).compile_errors(
        "{{ gdpr_lakehouse.request_deadline('2026-02-10') }}"
    )
    assert not ok
    assert "var request_deadline is" in error
    assert "from 1 to 3" in error and "from 1 to 90" in error


def test_the_old_var_stops_the_run_instead_of_being_ignored(jinja: Jinja) -> None:
    ok, error = jinja.with_vars({"erasure_deadline_days": 30}).compile_errors(
        "{{ gdpr_lakehouse.request_deadline('2026-02-10') }}"
    )
    assert not ok
    assert "var erasure_deadline_days is no longer read" in error
    assert "request_deadline" in error


def _moment(jinja: Jinja, value: str) -> str:
    return jinja.compile_inline(
        "{{ gdpr_lakehouse._validate_moment('"
        + value
        + "', 'received_at').strftime('%Y-%m-%d %H:%M:%S') }}"
    ).strip()


def test_a_moment_is_read_in_utc_or_its_own_offset(jinja: Jinja) -> None:
    assert _moment(jinja, "2026-02-10") == "2026-02-10 00:00:00"
    assert _moment(jinja, "2026-02-10 09:30") == "2026-02-10 09:30:00"
    assert _moment(jinja, "2026-02-10T09:30:15Z") == "2026-02-10 09:30:15"
    # received at 00:30 in Paris on the 11th is the 10th in UTC: never a later deadline
    assert _moment(jinja, "2026-02-11 00:30:00+01:00") == "2026-02-10 23:30:00"
    assert _moment(jinja, "2026-02-10 22:00:00-03:00") == "2026-02-11 01:00:00"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("2026-02-30", "is not a valid date and time"),
        ("2025-02-29", "is not a valid date and time"),
        ("1999-12-31", "from the year 2000 on"),
        ("2026-02-10 24:00", "is not a valid date and time"),
        ("10/02/2026", "is not a date or a time"),
        ("2026-02-10'; drop table x; --", "is not a date or a time"),
        ("2999-01-01", "is in the future"),
        ("2026-02-10 09:00+01:99", "has no such UTC offset"),
        ("2026-02-10 09:00+15:00", "has no such UTC offset"),
    ],
)
def test_a_bad_moment_is_refused(jinja: Jinja, value: str, says: str) -> None:
    ok, error = jinja.compile_errors(
        "{{ gdpr_lakehouse._validate_moment(" + repr(value) + ", 'received_at') }}"
    )
    assert not ok
    assert says in error
    assert "YYYY-MM-DD" in error or "future" in error
