"""GDPR report: changes and erasures per period, open requests and their deadlines.

    python -m python_jobs.report                     # per day, into <LAKEHOUSE_DIR>/reports
    python -m python_jobs.report --period week --output-dir out/

Reads the audit log (``audit.change_log``, from ``python -m python_jobs.audit_stream``)
and the erasure requests, and writes, under the output folder:

    gdpr_report.md / gdpr_report.html   the page to read (the HTML is self-contained)
    changes_per_day.png, request_age.png the charts on it
    changes.csv    period, actor, tool, purpose, operation: commits and rows changed
    erasures.csv   period: requests received, erased, purged; erasure commits and rows
    requests.csv   every request: status, received, deadline, days left, purge deadline
                   (no subject id)

Exit status 1, with an ALERT line, when any open request is past its deadline, or any
erased request is past its purge deadline (erased_at + var purge_deadline_days, default
8: its old files must be gone by then; run ``python -m python_jobs.purge``), or any
access request (privacy.access_requests) is still pending, or any rectification
(privacy.rectification_requests) not yet applied, past its deadline, or any active
legal hold or restriction past its review date, or any held request past its deadline
whose hold records no Art. 12(4) notice to the subject, for cron and CI; 0 otherwise.
A held request (legal hold, Art. 17(3)) is otherwise listed, not alerted.
Runs by path on the in-memory catalog, so it may run while dbt runs.
"""

from __future__ import annotations

import argparse
import base64
import csv
import html
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from python_jobs import request_certificate
from python_jobs.certificate import certificates_dir
from python_jobs.macros import engine_macros
from python_jobs.project import ProjectError, private_folder, prog, run_job, state_dir
from python_jobs.relations import (
    DeltaRelation,
    delta_relations,
    is_built,
    kept_savepoints,
    table_location,
)
from python_jobs.request_states import request_states, status_in

PERIODS = {"day": "yyyy-MM-dd", "week": "yyyy-MM-dd", "month": "yyyy-MM"}
CHANGES_SQL = """
select
    -- versions that left the Delta log before they were audited have no known time
    coalesce(date_format(date_trunc('{unit}', commit_timestamp), '{pattern}'), '(log expired)') as period,
    coalesce(actor, '(untagged)') as actor,
    coalesce(tool, '') as tool,
    coalesce(purpose, '') as purpose,
    operation,
    count(distinct relation, commit_version) as commits,
    coalesce(sum(case when change_type = 'insert' then row_count end), 0) as rows_inserted,
    coalesce(sum(case when change_type = 'update_postimage' then row_count end), 0) as rows_updated,
    coalesce(sum(case when change_type = 'delete' then row_count end), 0) as rows_deleted
from change_log
group by 1, 2, 3, 4, 5
order by 1, 2, 3, 4, 5
"""
DAILY_SQL = """
select to_date(commit_timestamp) as day, operation,
       coalesce(sum(case when change_type != 'update_preimage' then row_count end), 0) as rows_changed,
       count(distinct relation, commit_version) as commits
from change_log
where commit_timestamp is not null
group by 1, 2
order by 1, 2
"""
ERASURES_SQL = """
with periods as (
    select date_format(date_trunc('{unit}', received_at), '{pattern}') as period, 'received' as what, request_id
    from requests
    union all
    select date_format(date_trunc('{unit}', erased_at), '{pattern}'), 'erased', request_id
    from requests where erased_at is not null
    union all
    select date_format(date_trunc('{unit}', purged_at), '{pattern}'), 'purged', request_id
    from requests where purged_at is not null
),

commits as (
    select
        date_format(date_trunc('{unit}', commit_timestamp), '{pattern}') as period,
        count(distinct relation, commit_version) as erasure_commits,
        coalesce(sum(case when change_type in ('delete', 'update_postimage') then row_count end), 0) as rows_erased
    from change_log
    where purpose in ('erase', 'reapply_erasure') and relation in ({subject_relations})
    group by 1
),

counts as (
    select
        period,
        count(distinct case when what = 'received' then request_id end) as requests_received,
        count(distinct case when what = 'erased' then request_id end) as requests_erased,
        count(distinct case when what = 'purged' then request_id end) as requests_purged
    from periods
    group by period
)

select
    coalesce(counts.period, commits.period) as period,
    coalesce(requests_received, 0) as requests_received,
    coalesce(requests_erased, 0) as requests_erased,
    coalesce(requests_purged, 0) as requests_purged,
    coalesce(erasure_commits, 0) as erasure_commits,
    coalesce(rows_erased, 0) as rows_erased
from counts
full outer join commits on counts.period = commits.period
order by 1
"""
# days left to a deadline, in tenths of a day rounded down (floor): negative from the
# first second past it. round() would show a request up to 72 minutes late as 0.0 days
# left, and alert on nothing.
REQUESTS_SQL = """
select
    request_id,
    coalesce(subject_type, 'unknown') as subject_type,
    status,
    received_at,
    deadline,
    -- open: days since received; done: days it took to erase
    round((unix_timestamp(coalesce(erased_at, timestamp'{now}')) - unix_timestamp(received_at)) / 86400, 1) as age_days,
    case when status in {unfinished}
        then floor((unix_timestamp(deadline) - unix_timestamp(timestamp'{now}')) / 8640) / 10
    end as days_left,
    erased_at,
    purged_at,
    case when status = 'erased' or purged_at is not null then {purge_deadline} end as purge_deadline,
    -- an erased request without erased_at has no known deadline: null, alerted (fail closed)
    case when status = 'erased'
        then floor((unix_timestamp({purge_deadline}) - unix_timestamp(timestamp'{now}')) / 8640) / 10
    end as purge_days_left
from requests
order by received_at, request_id
"""
# access and portability requests (python -m python_jobs.subject_access)
ACCESS_SQL = """
select
    request_id,
    status,
    received_at,
    deadline,
    case when status = 'pending'
        then floor((unix_timestamp(deadline) - unix_timestamp(timestamp'{now}')) / 8640) / 10
    end as days_left,
    export_deleted_at
from access
order by received_at, request_id
"""
# rectification requests (python -m python_jobs.rectify): open until the build applied them
RECTIFICATION_SQL = """
select
    request_id,
    status,
    received_at,
    deadline,
    case when status in ('pending', 'landed')
        then floor((unix_timestamp(deadline) - unix_timestamp(timestamp'{now}')) / 8640) / 10
    end as days_left
from rectification
order by received_at, request_id
"""
# active legal holds and restrictions whose review date has passed (or that have none:
# fail closed), and held erasure requests past their deadline whose hold records no
# Art. 12(4) notice to the subject
REVIEW_SQL = """
select 'legal hold' as kind, review_on, placed_at from holds
where released_at is null and (review_on is null or review_on < date'{today}')
union all
select 'restriction' as kind, review_on, placed_at from restrictions
where lifted_at is null and (review_on is null or review_on < date'{today}')
order by review_on nulls first, placed_at
"""
UNNOTIFIED_SQL = """
select requests.request_id, requests.deadline from requests
where requests.status = 'held' and requests.deadline < timestamp'{now}'
  and not exists (
      select 1 from holds
      where holds.subject_id = requests.subject_id and holds.released_at is null
        and holds.subject_notified_on is not null)
order by requests.deadline, requests.request_id
"""
SUMMARY_SQL = """
select
    count(distinct relation, commit_version) as commits,
    count(distinct relation) as relations,
    count(distinct case when actor is null and operation != 'LOG EXPIRED' then concat(relation, ':', commit_version) end) as untagged,
    count(distinct case when operation = 'LOG EXPIRED' then concat(relation, ':', commit_version) end) as expired,
    min(commit_timestamp) as first_commit,
    max(commit_timestamp) as last_commit
from change_log
"""


@dataclass
class Report:
    period: str
    generated_at: datetime
    changes: list[dict[str, Any]]
    daily: list[dict[str, Any]]
    erasures: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    summary: dict[str, Any]
    # purged requests whose certificate (python -m python_jobs.certificate) is written
    certified: frozenset[str] = frozenset()
    # access requests (privacy.access_requests)
    access: list[dict[str, Any]] = field(default_factory=list)

    @property
    def access_overdue(self) -> list[dict[str, Any]]:
        """Access requests still pending past their deadline (or with none: fail closed)."""
        return [
            r
            for r in self.access
            if r["status"] == "pending" and (r["days_left"] is None or r["days_left"] < 0)
        ]

    # rectification requests (privacy.rectification_requests)
    rectification: list[dict[str, Any]] = field(default_factory=list)
    # active holds and restrictions past their review date
    reviews: list[dict[str, Any]] = field(default_factory=list)
    # held erasure requests past their deadline without an Art. 12(4) notice
    unnotified: list[dict[str, Any]] = field(default_factory=list)
    # savepoints not released (privacy.savepoints): copies gdpr_erase erases from
    savepoints: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rectification_overdue(self) -> list[dict[str, Any]]:
        """Rectifications not applied (pending or landed) past their deadline (or with none)."""
        return [
            r
            for r in self.rectification
            if r["status"] in ("pending", "landed")
            and (r["days_left"] is None or r["days_left"] < 0)
        ]

    @property
    def overdue(self) -> list[dict[str, Any]]:
        """Open erasure requests past their deadline (or with none: fail closed)."""
        return [
            r
            for r in self.requests
            if r["status"] in request_states()["open"]
            and (r["days_left"] is None or r["days_left"] < 0)
        ]

    @property
    def unpurged(self) -> list[dict[str, Any]]:
        """Erased requests past their purge deadline (or with none known)."""
        return [
            r
            for r in self.requests
            if r["status"] == "erased"
            and (r["purge_days_left"] is None or r["purge_days_left"] < 0)
        ]

    @property
    def open(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["status"] in request_states()["unfinished"]]


def _rows(spark: SparkSession, sql: str) -> list[dict[str, Any]]:
    return [row.asDict() for row in spark.sql(sql).collect()]


def collect(spark: SparkSession, period: str, now: datetime) -> Report:
    """Read the audit log and the requests (by path) and aggregate them."""
    relations = {relation.name: relation for relation in delta_relations()}
    for view, model in (
        ("change_log", "audit_change_log"),
        ("requests", "privacy_erasure_requests"),
        ("access", "privacy_access_requests"),
        ("rectification", "privacy_rectification_requests"),
        ("holds", "privacy_legal_holds"),
        ("restrictions", "privacy_restrictions"),
    ):
        if model not in relations:
            raise ProjectError(f"the manifest has no {model}; run `dbt parse` first")
        try:
            location = table_location(spark, relations[model])
            spark.read.format("delta").load(location).createOrReplaceTempView(view)
        except PySparkException as error:
            raise ProjectError(f"{model} is not built yet; run `dbt build` first") from error
    # erasure rows count where subjects' data lives, not the control tables' bookkeeping
    subject_relations = (
        ", ".join(
            f"'{r.schema}.{r.identifier}'"
            for r in relations.values()
            if r.privacy.get("subject_key")
            and r.privacy.get("on_erasure") in ("delete", "anonymize")
        )
        or "''"
    )
    unit, pattern = period, PERIODS[period]
    text = now.strftime("%Y-%m-%d %H:%M:%S")
    return Report(
        period=period,
        generated_at=now,
        changes=_rows(spark, CHANGES_SQL.format(unit=unit, pattern=pattern)),
        daily=_rows(spark, DAILY_SQL),
        erasures=_rows(
            spark,
            ERASURES_SQL.format(unit=unit, pattern=pattern, subject_relations=subject_relations),
        ),
        requests=_rows(
            spark,
            REQUESTS_SQL.format(
                now=text,
                unfinished=status_in("unfinished"),
                purge_deadline=engine_macros().purge_deadline_of("erased_at"),
            ),
        ),
        summary=_rows(spark, SUMMARY_SQL)[0],
        access=_rows(spark, ACCESS_SQL.format(now=text)),
        rectification=_rows(spark, RECTIFICATION_SQL.format(now=text)),
        reviews=_rows(spark, REVIEW_SQL.format(today=now.strftime("%Y-%m-%d"))),
        unnotified=_rows(spark, UNNOTIFIED_SQL.format(now=text)),
        savepoints=_savepoints(spark, relations),
    )


SAVEPOINT_COLUMNS = [
    "savepoint_name",
    "relation",
    "source_version",
    "business_date",
    "savepoint_relation",
    "status",
    "created_at",
]


def _savepoints(spark: SparkSession, relations: dict[str, DeltaRelation]) -> list[dict[str, Any]]:
    """The savepoints not released, oldest first; none before the registry is built.
    Copies in the savepoint schema that no registry holds stop the report, as they stop
    purge (kept_savepoints): it must not say "no savepoint kept" while they are there."""
    kept_savepoints(spark, list(relations.values()))
    registry = relations.get("privacy_savepoints")
    if not is_built(spark, registry):
        return []
    # a registry that exists but cannot be read stops the report: it must not say
    # "no savepoint kept" while copies of erased subjects' data may be kept
    spark.read.format("delta").load(table_location(spark, registry)).createOrReplaceTempView(
        "savepoints"
    )
    return _rows(
        spark,
        f"select {', '.join(SAVEPOINT_COLUMNS)} from savepoints "
        "where status in ('creating', 'kept') order by created_at, savepoint_name",
    )


# --- output --------------------------------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def write_csv(path: Path, rows: list[dict[str, Any]], columns: list[str]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_text(row[column]) for column in columns])


def chart_changes(report: Report, path: Path) -> None:
    """Changes per day by operation, stacked: rows changed (left), commits (right).

    Rows show what data moved (a table model's rebuild rewrites all its rows); commits
    show what happened at all (a VACUUM, REORG or RESTORE moves no row but matters).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    days = sorted({row["day"] for row in report.daily})
    operations = sorted({row["operation"] for row in report.daily})
    colours = {op: plt.get_cmap("tab20")(i % 20) for i, op in enumerate(operations)}
    labels = [day.strftime("%Y-%m-%d") for day in days]
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.6), dpi=100)
    for axis, measure, title in (
        (axes[0], "rows_changed", "Rows changed (inserts + updates + deletes)"),
        (axes[1], "commits", "Commits"),
    ):
        bottoms = [0] * len(days)
        for operation in operations:
            values = [
                sum(
                    r[measure]
                    for r in report.daily
                    if r["day"] == day and r["operation"] == operation
                )
                for day in days
            ]
            if not any(values):
                continue
            axis.bar(
                labels, values, bottom=bottoms, width=0.6, label=operation, color=colours[operation]
            )
            bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
        axis.set_title(title, fontsize=10)
        axis.tick_params(axis="x", labelrotation=30, labelsize=8)
        if not days:
            axis.text(0.5, 0.5, "no audited change yet", ha="center", transform=axis.transAxes)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[op]) for op in operations]
    figure.legend(handles, operations, loc="lower center", ncol=4, fontsize=8, frameon=False)
    figure.suptitle("Changes per day, by operation (audit.change_log)", fontsize=11)
    figure.tight_layout(rect=(0, 0.05 + 0.045 * ((len(operations) + 3) // 4), 1, 1))
    figure.savefig(path)
    plt.close(figure)


def chart_requests(report: Report, path: Path, deadline_days: float) -> None:
    """Horizontal bars: each open request's age against its deadline."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = report.open[-30:]
    figure, axis = plt.subplots(figsize=(9, max(2.4, 0.35 * len(shown) + 1.6)), dpi=100)
    colours = {
        "held": "#8c8c8c",
        "overdue": "#d62728",
        "due soon": "#ff7f0e",
        "on time": "#2ca02c",
    }
    for index, request in enumerate(shown):
        state = _state(request)
        axis.barh(index, request["age_days"], color=colours[state], height=0.6)
        if state == "held":
            note = "held (legal hold)"
        elif state == "overdue":
            note = f"{-request['days_left']:g} d overdue"
        else:
            note = f"{request['days_left']:g} d left"
        axis.text(request["age_days"] + 0.3, index, note, va="center", fontsize=8)
    axis.set_yticks(range(len(shown)), [r["request_id"] for r in shown], fontsize=8)
    axis.set_ylim(len(shown) - 0.5 if shown else 0.5, -0.5)
    axis.axvline(deadline_days, color="#d62728", linestyle="--", linewidth=1.2, zorder=3)
    axis.text(
        deadline_days,
        1.02,
        f"deadline ({deadline_days:g} d)",
        color="#d62728",
        fontsize=8,
        ha="center",
        transform=axis.get_xaxis_transform(),
    )
    axis.set_xlabel("days since the request was received")
    axis.set_title("Open erasure requests: age and deadline", pad=16)
    axis.set_xlim(0, max([deadline_days * 1.25] + [r["age_days"] * 1.15 for r in shown]))
    if not shown:
        axis.text(0.5, 0.5, "no open request", ha="center", transform=axis.transAxes)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def _state(request: dict[str, Any]) -> str:
    if request["status"] == "held":
        return "held"
    if request["days_left"] < 0:
        return "overdue"
    return "due soon" if request["days_left"] <= 7 else "on time"


def _table(rows: list[dict[str, Any]], columns: list[str]) -> list[list[str]]:
    return [columns] + [[_text(row[c]) for c in columns] for row in rows]


CHANGE_COLUMNS = ["period", "actor", "tool", "purpose", "operation", "commits",
                  "rows_inserted", "rows_updated", "rows_deleted"]  # fmt: skip
ERASURE_COLUMNS = ["period", "requests_received", "requests_erased", "requests_purged",
                   "erasure_commits", "rows_erased"]  # fmt: skip
REQUEST_COLUMNS = ["request_id", "subject_type", "status", "received_at", "deadline",
                   "age_days", "days_left", "erased_at", "purged_at", "purge_deadline",
                   "purge_days_left"]  # fmt: skip
OPEN_COLUMNS = ["request_id", "subject_type", "status", "received_at", "deadline", "days_left"]


def sections(report: Report) -> list[tuple[str, Any]]:
    """The page, once, for both renderings: (kind, content) in reading order."""
    s = report.summary
    overdue, opened, unpurged = report.overdue, report.open, report.unpurged
    purged = [r for r in report.requests if r["status"] == "purged"]
    completed = [
        r
        for kind, rows in (("access", report.access), ("rectification", report.rectification))
        for r in rows
        if r["status"] in request_certificate.TYPES[kind]["completed"]
    ]
    parts: list[tuple[str, Any]] = [
        ("title", "GDPR report"),
        (
            "para",
            f"Generated {report.generated_at:%Y-%m-%d %H:%M} UTC, per {report.period}. "
            f"Audit log: {s['commits'] or 0} commits of {s['relations'] or 0} relations, "
            f"{_text(s['first_commit'])} to {_text(s['last_commit'])} UTC.",
        ),
    ]
    parts += [("alert", line) for line in alert_lines(report)]
    parts += [
        ("heading", "At a glance"),
        (
            "table",
            [
                ["", "count"],
                [
                    "open requests (pending, erasing, failed)",
                    str(len([r for r in opened if r["status"] != "held"])),
                ],
                ["past their deadline", str(len(overdue))],
                ["held (legal hold)", str(len([r for r in opened if r["status"] == "held"]))],
                [
                    "erased, files not yet purged",
                    str(len([r for r in report.requests if r["status"] == "erased"])),
                ],
                ["erased, past their purge deadline", str(len(unpurged))],
                ["purged", str(len([r for r in report.requests if r["status"] == "purged"]))],
                [
                    "purged, certificate issued (certificates/)",
                    str(len([r for r in purged if r["request_id"] in report.certified])),
                ],
                [
                    "purged, no certificate yet (python -m python_jobs.certificate)",
                    str(len([r for r in purged if r["request_id"] not in report.certified])),
                ],
                [
                    "access requests pending (python -m python_jobs.subject_access)",
                    str(len([r for r in report.access if r["status"] == "pending"])),
                ],
                ["access requests pending past their deadline", str(len(report.access_overdue))],
                [
                    "access requests answered (exported, no data held, refused)",
                    str(len([r for r in report.access if r["status"] != "pending"])),
                ],
                [
                    "exports not yet deleted (kept var access_export_retention_days)",
                    str(
                        len(
                            [
                                r
                                for r in report.access
                                if r["status"] == "exported" and r["export_deleted_at"] is None
                            ]
                        )
                    ),
                ],
                [
                    "rectifications not applied yet (landed: the next dbt build applies them)",
                    str(
                        len(
                            [
                                r
                                for r in report.rectification
                                if r["status"] in ("pending", "landed")
                            ]
                        )
                    ),
                ],
                [
                    "rectifications past their deadline",
                    str(len(report.rectification_overdue)),
                ],
                [
                    "rectifications applied",
                    str(len([r for r in report.rectification if r["status"] == "applied"])),
                ],
                [
                    "access and rectification requests completed, certificate issued",
                    str(len([r for r in completed if r["request_id"] in report.certified])),
                ],
                [
                    "completed, no certificate yet (python -m python_jobs.certificate)",
                    str(len([r for r in completed if r["request_id"] not in report.certified])),
                ],
                [
                    "legal holds and restrictions past their review date",
                    str(len(report.reviews)),
                ],
                [
                    "held requests past their deadline, subject not told why (Art. 12(4))",
                    str(len(report.unnotified)),
                ],
                [
                    "savepoints kept (copies gdpr_erase erases from; release_savepoint drops one)",
                    str(len(report.savepoints)),
                ],
                [
                    "commits without a tag (made outside the project's tools)",
                    str(s["untagged"] or 0),
                ],
                [
                    "versions that left the Delta log before they were audited (LOG EXPIRED)",
                    str(s["expired"] or 0),
                ],
            ],
        ),
        ("heading", "Changes per day"),
        ("image", ("changes_per_day.png", "Rows changed per day, by operation")),
        ("heading", "Open requests"),
        ("image", ("request_age.png", "Open erasure requests: age and deadline")),
        ("table", _table(opened, OPEN_COLUMNS) if opened else [["no open request"]]),
        ("heading", "Savepoints"),
        (
            "table",
            _table(report.savepoints, SAVEPOINT_COLUMNS)
            if report.savepoints
            else [["no savepoint kept"]],
        ),
        ("heading", f"Erasures per {report.period}"),
        ("table", _table(report.erasures, ERASURE_COLUMNS)),
        ("heading", f"Changes per {report.period}, actor and operation"),
        ("table", _table(report.changes, CHANGE_COLUMNS)),
        (
            "para",
            "Rows: inserts, updates (post-images) and deletes from the Change Data Feed; "
            "a commit that changed no row (VACUUM, OPTIMIZE, REORG) counts as a commit with 0 rows. "
            "The CSV files beside this page hold the same tables.",
        ),
    ]
    return parts


def alert_lines(report: Report) -> list[str]:
    """One ALERT line per kind of missed deadline; none when every clock is kept."""
    lines = []
    if report.overdue:
        worst = min(report.overdue, key=lambda r: _days(r["days_left"]))
        lines.append(
            f"ALERT: {len(report.overdue)} erasure request(s) past their deadline; the oldest, "
            f"{worst['request_id']}, "
            + (
                "with no deadline"
                if worst["days_left"] is None
                else f"by {-worst['days_left']:g} day(s)"
            )
            + ". Run `dbt run-operation gdpr_erase`."
        )
    if report.access_overdue:
        worst = min(report.access_overdue, key=lambda r: _days(r["days_left"]))
        lines.append(
            f"ALERT: {len(report.access_overdue)} access request(s) past their deadline; the "
            f"oldest, {worst['request_id']}, "
            + (
                "with no deadline"
                if worst["days_left"] is None
                else f"by {-worst['days_left']:g} day(s)"
            )
            + ". Run "
            "`python -m python_jobs.subject_access --subject-id ...` (it resumes them)."
        )
    if report.rectification_overdue:
        worst = min(report.rectification_overdue, key=lambda r: _days(r["days_left"]))
        lines.append(
            f"ALERT: {len(report.rectification_overdue)} rectification request(s) not applied "
            f"past their deadline; the oldest, {worst['request_id']} ({worst['status']}), "
            + (
                "with no deadline"
                if worst["days_left"] is None
                else f"by {-worst['days_left']:g} day(s)"
            )
            + ". Run `dbt build`, then `python -m python_jobs.rectify` (it confirms them)."
        )
    if report.reviews:
        kinds = sorted({r["kind"] for r in report.reviews})
        oldest = report.reviews[0]["review_on"]
        lines.append(
            f"ALERT: {len(report.reviews)} active {' and '.join(kinds)}(s) past their review "
            f"date (the oldest: {oldest or 'none recorded'}). Review each: release or lift it, "
            "or set the next review (legal_hold / restrict_processing with review_on)."
        )
    if report.unnotified:
        lines.append(
            f"ALERT: {len(report.unnotified)} held erasure request(s) past their deadline, and "
            f"the subject's hold records no notice (the oldest: {report.unnotified[0]['request_id']}). "
            "GDPR Art. 12(4): tell the subject why, then record the day with "
            "`dbt run-operation legal_hold --args '{subject_ids: [...], notified_on: YYYY-MM-DD}'`."
        )
    if report.unpurged:
        worst = min(report.unpurged, key=lambda r: _days(r["purge_days_left"]))
        late = (
            "with no erasure time"
            if worst["purge_days_left"] is None
            else (f"by {-worst['purge_days_left']:g} day(s)")
        )
        lines.append(
            f"ALERT: {len(report.unpurged)} erased request(s) past their purge deadline "
            f"(old files may still hold the subject); the oldest, {worst['request_id']}, {late}. "
            "Run `python -m python_jobs.purge`."
        )
    return lines


def _days(value: float | None) -> float:
    return float("-inf") if value is None else value


def render_markdown(parts: list[tuple[str, Any]]) -> str:
    out: list[str] = []
    for kind, content in parts:
        if kind == "title":
            out.append(f"# {content}\n")
        elif kind == "heading":
            out.append(f"## {content}\n")
        elif kind == "para":
            out.append(f"{content}\n")
        elif kind == "alert":
            out.append(f"> **{content}**\n")
        elif kind == "image":
            out.append(f"![{content[1]}]({content[0]})\n")
        elif kind == "table":
            header, *rows = content
            out.append("| " + " | ".join(header) + " |")
            out.append("|" + "|".join("---" for _ in header) + "|")
            out.extend(
                "| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows
            )
            out.append("")
    return "\n".join(out)


def render_html(parts: list[tuple[str, Any]], folder: Path) -> str:
    e = html.escape
    body: list[str] = []
    for kind, content in parts:
        if kind == "title":
            body.append(f"<h1>{e(content)}</h1>")
        elif kind == "heading":
            body.append(f"<h2>{e(content)}</h2>")
        elif kind == "para":
            body.append(f"<p>{e(content)}</p>")
        elif kind == "alert":
            body.append(f'<p class="alert">{e(content)}</p>')
        elif kind == "image":
            data = base64.b64encode((folder / content[0]).read_bytes()).decode()
            body.append(f'<img alt="{e(content[1])}" src="data:image/png;base64,{data}">')
        elif kind == "table":
            header, *rows = content
            cells = "".join(f"<th>{e(c)}</th>" for c in header)
            lines = "".join(
                "<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows
            )
            body.append(f"<table><thead><tr>{cells}</tr></thead><tbody>{lines}</tbody></table>")
    style = (
        "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}"
        "table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}"
        "th,td{border:1px solid #ccc;padding:.25rem .6rem;text-align:left}th{background:#f3f3f3}"
        "td:not(:first-child){font-variant-numeric:tabular-nums}"
        ".alert{background:#fde2e1;border-left:4px solid #d62728;padding:.6rem;font-weight:600}"
        "img{max-width:100%}"
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>GDPR report</title>'
        f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n"
    )


def write(report: Report, folder: Path, deadline_days: float) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    # where the certificate job writes by default, whatever --output-dir this report has
    certificates = certificates_dir()
    if certificates.is_dir():
        report.certified = frozenset(
            path.stem
            for pattern in ("req-*.json", "acc-*.json", "rec-*.json")
            for path in certificates.glob(pattern)
        )
    write_csv(folder / "changes.csv", report.changes, CHANGE_COLUMNS)
    write_csv(folder / "erasures.csv", report.erasures, ERASURE_COLUMNS)
    write_csv(folder / "requests.csv", report.requests, REQUEST_COLUMNS)
    chart_changes(report, folder / "changes_per_day.png")
    chart_requests(report, folder / "request_age.png", deadline_days)
    parts = sections(report)
    (folder / "gdpr_report.md").write_text(render_markdown(parts))
    (folder / "gdpr_report.html").write_text(render_html(parts, folder))
    return [folder / name for name in ("gdpr_report.html", "gdpr_report.md", "changes.csv",
                                       "erasures.csv", "requests.csv")]  # fmt: skip


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.report"), description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--period",
        choices=sorted(PERIODS),
        default="day",
        help="period of the tables (default day)",
    )
    parser.add_argument(
        "--output-dir", type=Path, help="where to write (default <LAKEHOUSE_DIR>/reports)"
    )
    parser.add_argument(
        "--deadline-days",
        type=float,
        default=30,
        help="the deadline drawn on the chart, in days (default 30: about one month, var request_deadline)",
    )
    parser.add_argument(
        "--as-of",
        help="report as of this UTC time (YYYY-MM-DD or YYYY-MM-DDTHH:MM), e.g. what will be "
        "overdue next week; default now",
    )
    args = parser.parse_args(argv)
    if args.as_of is not None:
        try:
            args.as_of = datetime.fromisoformat(args.as_of)
        except ValueError:
            parser.error(
                f"--as-of {args.as_of[:40]!r} is not a date or time (YYYY-MM-DD[THH:MM[:SS]])"
            )
        if args.as_of.tzinfo is not None:
            args.as_of = args.as_of.astimezone(UTC).replace(tzinfo=None)
    return args


def main(argv: list[str] | None = None, spark: SparkSession | None = None) -> int:
    args = parse_args(argv)
    from python_jobs.spark import get_spark

    spark = spark or get_spark("gdpr_lakehouse.report", shared_metastore=False)
    now = args.as_of or datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    report = collect(spark, args.period, now)
    if args.output_dir is None:
        # the lakehouse's own reports folder: its owner's only, like the rest of it (the
        # requests and erasures name subjects); a folder given is left as it is
        private_folder(state_dir() / "reports")
    folder = (args.output_dir or state_dir() / "reports").resolve()
    written = write(report, folder, args.deadline_days)
    s = report.summary
    print(
        f"GDPR report: {s['commits'] or 0} audited commits, {len(report.requests)} request(s), "
        f"{len(report.open)} open, {len(report.overdue)} past deadline, "
        f"{len(report.unpurged)} past purge deadline."
    )
    for path in written:
        print(f"  {path}")
    for line in alert_lines(report):
        print(line, file=sys.stderr)
    for request in report.overdue:
        print(
            f"  {request['request_id']} ({request['subject_type']}, {request['status']}): "
            f"deadline {_text(request['deadline'])} UTC, {-request['days_left']:g} day(s) ago",
            file=sys.stderr,
        )
    for request in report.unpurged:
        print(
            f"  {request['request_id']} ({request['subject_type']}, erased "
            f"{_text(request['erased_at'])} UTC): purge deadline "
            f"{_text(request['purge_deadline'])} UTC",
            file=sys.stderr,
        )
    return (
        1
        if report.overdue
        or report.unpurged
        or report.access_overdue
        or report.rectification_overdue
        or report.reviews
        or report.unnotified
        else 0
    )


if __name__ == "__main__":
    run_job(main, "report")
