"""The post-build VACUUM's skip rule, on a fake warehouse (no JVM).

A VACUUM deletes only files removed (or written and never committed) before now minus
the table's delta.deletedFileRetentionDuration, so the post-hook skips a table whose
whole history is younger than that window less an hour; whatever it cannot tell runs
the VACUUM. On real Spark, tests/functional/test_build.py sees the skip in the history.
"""

from __future__ import annotations

import datetime
import re
from types import SimpleNamespace
from typing import Any

import pytest
import pytz

from python_jobs import macros as engine_macros

NOW = datetime.datetime(2026, 11, 25, 12, 0, 0)


class _Row(dict):
    """A query row: by column name, or by position like agate's."""

    def __getitem__(self, key: Any) -> Any:
        return list(self.values())[key] if isinstance(key, int) else super().__getitem__(key)


class _Table(SimpleNamespace):
    def __init__(self, rows: list[_Row]) -> None:
        super().__init__(rows=rows)

    def __iter__(self):
        return iter(self.rows)


def _warehouse(retention: str | None, created_hours_ago: float | None, commits: int = 3):
    """run_query answering SHOW TBLPROPERTIES, DESCRIBE HISTORY and current_timestamp();
    created_hours_ago None: version 0 has left the log."""
    statements: list[str] = []

    def run_query(sql: str) -> Any:
        statements.append(sql)
        if sql.startswith("show tblproperties"):
            value = (
                retention or "Table t does not have property: delta.deletedFileRetentionDuration"
            )
            rows = [_Row(key="delta.deletedFileRetentionDuration", value=value)]
        elif sql.startswith("describe history"):
            limit = int(re.search(r"limit (\d+)", sql).group(1))
            first = 0 if created_hours_ago is not None else 50
            start = NOW - datetime.timedelta(
                hours=500 if created_hours_ago is None else created_hours_ago
            )
            versions = range(first, first + commits)
            rows = [
                _Row(
                    version=v,
                    timestamp=start + datetime.timedelta(minutes=v - first),
                    operation="WRITE",
                    operationParameters="{}",
                    operationMetrics="{}",
                    userMetadata=None,
                )
                for v in reversed(versions)
            ][:limit]
        else:
            rows = [_Row(now=NOW)]
        return _Table(rows)

    macros = engine_macros.Macros(
        {
            "execute": True,
            "run_query": run_query,
            "modules": SimpleNamespace(re=re, datetime=datetime, pytz=pytz),
        }
    )
    return macros, statements


@pytest.mark.parametrize(
    ("retention", "created_hours_ago", "commits", "skipped"),
    [
        ("interval 7 days", 0.1, 3, True),  # a first build
        ("interval 7 days", -2, 3, False),  # version 0 two hours in the future: a clock to distrust
        (
            "interval 7 days",
            166.5,
            3,
            True,
        ),  # 6 days 22.5 h: still younger than 7 days less an hour
        ("interval 7 days", 167.5, 3, False),  # within the hour's margin
        ("interval 7 days", 200, 3, False),  # older than the window
        ("interval 7 days", None, 3, False),  # version 0 left the log: the table is old
        ("interval 7 days", 0.1, 150, False),  # version 0 not among the newest 100 commits
        ("interval 2 hours", 0.5, 3, True),
        ("interval 1 hours", 0.0, 3, False),  # no window left after the margin
        (None, 0.1, 3, False),  # no property: unknown
        ("7 fortnights", 0.1, 3, False),  # not an interval
    ],
)
def test_vacuum_is_skipped_only_when_no_file_can_be_old_enough(
    retention: str | None, created_hours_ago: float | None, commits: int, skipped: bool
) -> None:
    macros, statements = _warehouse(retention, created_hours_ago, commits)
    assert macros._vacuum_cannot_delete_yet("silver.patients") is skipped
    assert not any(sql.startswith("vacuum") for sql in statements)


def test_text_timestamps_run_the_vacuum() -> None:
    """A driver that hands timestamps over as text (no arithmetic on them): VACUUM runs."""
    macros, _ = _warehouse("interval 7 days", 0.1)
    macros._macros["delta_history"] = lambda relation, limit=None: [
        {"version": 0, "timestamp": "2026-11-25 11:54:00"}
    ]
    assert macros._vacuum_cannot_delete_yet("silver.patients") is False
