"""The purge clock: var purge_deadline_days, checked where it is read, and the report's
alert on an erased request past it (plain Jinja and plain Python: no JVM). The query
itself runs against a known-bad table in tests/functional/test_compliance.py, and the
report end to end in tests/functional/test_audit.py."""

from __future__ import annotations

from datetime import datetime

import pytest

from python_jobs import report
from python_jobs.macros import Macros


def _macros(**declared: object) -> Macros:
    return Macros({"var": lambda name, default=None: declared.get(name, default)})


@pytest.mark.parametrize(
    ("declared", "days"),
    [
        ({}, 8),
        ({"purge_deadline_days": 7}, 7),
        ({"purge_deadline_days": 30}, 30),
        # a short deleted-file retention (opted in) allows a short deadline
        ({"purge_deadline_days": 1, "delta_deleted_file_retention": "interval 1 hours"}, 1),
    ],
)
def test_a_purge_deadline_at_or_past_the_file_retention_is_accepted(
    declared: dict, days: int
) -> None:
    assert _macros(**declared).purge_deadline_days() == days
    assert _macros(**declared).validate_purge_deadline() == ""


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"purge_deadline_days": 0}, "whole number of days from 1 to 90"),
        ({"purge_deadline_days": 91}, "whole number of days from 1 to 90"),
        ({"purge_deadline_days": 8.5}, "whole number of days from 1 to 90"),
        ({"purge_deadline_days": "8"}, "whole number of days from 1 to 90"),
        ({"purge_deadline_days": True}, "whole number of days from 1 to 90"),
        ({"purge_deadline_days": 6}, "could never be met; use at least 7 days"),
        (
            {"purge_deadline_days": 10, "delta_deleted_file_retention": "interval 2 weeks"},
            "use at least 14 days",
        ),
    ],
)
def test_a_purge_deadline_that_is_not_days_or_cannot_be_met_is_refused(
    declared: dict, message: str
) -> None:
    macros = _macros(**declared)
    with pytest.raises(Macros.CompilerError, match=message):
        macros.validate_purge_deadline()
    with pytest.raises(Macros.CompilerError, match=message):
        macros.unpurged_requests_sql("privacy.erasure_requests")


def _request(request_id: str, status: str, purge_days_left: float | None) -> dict:
    return {
        "request_id": request_id,
        "subject_type": "patient",
        "status": status,
        "days_left": None,
        "erased_at": datetime(2026, 11, 1) if purge_days_left is not None else None,
        "purge_deadline": datetime(2026, 11, 9) if purge_days_left is not None else None,
        "purge_days_left": purge_days_left,
    }


def test_the_report_alerts_on_erased_requests_past_their_purge_deadline() -> None:
    requests = [
        _request("req-late", "erased", -2.5),
        _request("req-no-time", "erased", None),
        _request("req-inside", "erased", 3.0),
        _request("req-purged", "purged", None),
    ]
    built = report.Report("day", datetime(2026, 11, 11), [], [], [], requests, {})
    assert [r["request_id"] for r in built.unpurged] == ["req-late", "req-no-time"]
    (line,) = report.alert_lines(built)
    assert line.startswith("ALERT: 2 erased request(s) past their purge deadline")
    assert "req-no-time, with no erasure time" in line
    assert "python -m python_jobs.purge" in line
    inside = report.Report("day", datetime(2026, 11, 11), [], [], [], requests[2:], {})
    assert inside.unpurged == [] and report.alert_lines(inside) == []


def test_an_open_erasure_request_without_a_deadline_is_alerted_not_a_crash() -> None:
    """Fail closed: a pending request with no deadline (days_left null) is overdue; the
    report once compared None < 0 and stopped with a TypeError."""
    late = {**_request("req-late", "pending", None), "days_left": -0.1}
    blank = {**_request("req-blank", "pending", None), "days_left": None}
    inside = {**_request("req-inside", "pending", None), "days_left": 0.0}
    built = report.Report("day", datetime(2026, 11, 11), [], [], [], [late, blank, inside], {})
    assert [r["request_id"] for r in built.overdue] == ["req-late", "req-blank"]
    (line,) = report.alert_lines(built)
    assert line.startswith(
        "ALERT: 2 erasure request(s) past their deadline; the oldest, req-blank, with no deadline"
    )
