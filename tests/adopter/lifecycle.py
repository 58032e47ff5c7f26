"""The adopter's whole lifecycle, run the way its team would, in one process.

    python tests/adopter/lifecycle.py <copy of tests/adopter> <facts.json>

Every step is a command a user types in the project folder (`dbt deps`, `dbt build`,
`dbt run-operation ...`, `gdpr-lakehouse ...`), given as its argv to dbt's own runner
and to the CLI's main(): one JVM for all of them. Between steps it reads what the
step left (row counts, request status, versions) and writes them as facts for
tests/functional/test_adopter.py to judge. The CRM's export lands as Parquet files
under $LAKEHOUSE_DIR/landing, as its nightly job would write them.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ERASED = "C0002"
CUSTOMERS = [
    ("C0001", "Ada Lovelace", "ada@example.org", "GB"),
    (ERASED, "Grace Hopper", "grace.hopper@example.org", "US"),
    ("C0003", "Alan Turing", "alan@example.org", "GB"),
    ("C0004", "Edsger Dijkstra", "edsger@example.org", "NL"),
]


def write_export(
    landing: Path, table: str, batch: int, rows: list[tuple], columns: list[str], day: int = 0
) -> None:
    """One export file, <landing>/<table>/batch-NNNN.parquet; the last column is its time
    (9:00 on 2026-11-<day>, by default the batch number)."""
    folder = landing / table
    folder.mkdir(parents=True, exist_ok=True)
    data = {name: [row[i] for row in rows] for i, name in enumerate(columns[:-1])}
    at = datetime(2026, 11, day or batch, 9, 0, tzinfo=UTC)
    data[columns[-1]] = pa.array([at] * len(rows), pa.timestamp("us", tz="UTC"))
    pq.write_table(pa.table(data), folder / f"batch-{batch:04d}.parquet")


def land(landing: Path, batch: int, customers: list[tuple[str, str, str, str]]) -> None:
    """One export: the customers given and three tickets each."""
    write_export(
        landing,
        "customers",
        batch,
        customers,
        ["customer_id", "full_name", "email", "country", "updated_at"],
    )
    tickets = [
        (
            f"T{batch}-{c[0]}-{n}",
            c[0],
            ("email", "phone", "chat")[n],
            f"{c[1]} writes about order {n}",
        )
        for c in customers
        for n in range(3)
    ]
    write_export(
        landing,
        "tickets",
        batch,
        tickets,
        ["ticket_id", "customer_id", "channel", "body", "opened_at"],
    )


def dbt(*args: str) -> None:
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(list(args))
    if not result.success:
        failed = [
            f"{r.node.name}: {r.message}"
            for r in getattr(result.result, "results", None) or []
            if str(r.status) not in ("success", "pass")
        ]
        raise SystemExit(f"dbt {' '.join(args)} failed: {result.exception or failed}")


def cli(*args: str) -> int:
    from python_jobs.cli import main

    return main(list(args))


def rows(sql: str) -> list[Any]:
    from pyspark.sql import SparkSession

    # dbt's session (method: session), the one this process has
    return SparkSession.builder.getOrCreate().sql(sql).collect()


def scalar(sql: str) -> Any:
    return rows(sql)[0][0]


def counts() -> dict[str, int]:
    return {
        "customers": scalar("select count(*) from crm.crm_customers"),
        "erased_customer_rows": scalar(
            f"select count(*) from crm.crm_customers where customer_id = '{ERASED}'"
        ),
        "tickets": scalar("select count(*) from crm.crm_tickets"),
        "per_customer": scalar("select count(*) from crm.crm_tickets_per_customer"),
        "by_channel_tickets": scalar("select sum(tickets) from crm.crm_tickets_by_channel"),
        "vault_keys": scalar("select count(*) from crm_privacy.subject_keys"),
    }


def main(project: Path, facts_file: Path) -> int:
    os.chdir(project)
    landing = Path(os.environ["LAKEHOUSE_DIR"]) / "landing"
    facts: dict[str, Any] = {}

    land(landing, 1, CUSTOMERS)
    dbt("deps")
    dbt("build")
    facts["built"] = counts()
    facts["decrypts"] = scalar(
        "select count(*) from crm.crm_customers c join crm_privacy.subject_keys k "
        "on c.customer_id = k.subject_id where cast(gdpr_try_decrypt(c.email_enc, "
        # the adopter's keys are wrapped by the key-encryption key (the default), bound
        # to the subject; the value to the subject and its column
        "k.data_key, encode(concat('subject/', k.subject_pseudonym), 'utf-8'), "
        "encode(concat(k.subject_pseudonym, '/email_enc'), 'utf-8'), 'LAKEHOUSE_KEK') "
        "as string) like '%@example.org'"
    )
    facts["version_before_erasure"] = max(
        row["version"] for row in rows("describe history crm.crm_customers")
    )
    facts["witness"] = cli("scan", "--subject-id", ERASED, "--capture-witness", "witness.json")

    dbt(
        "run-operation",
        "request_erasure",
        "--args",
        json.dumps({"subject_ids": [ERASED], "reason": "customer asked"}),
    )
    request_id = scalar(
        f"select request_id from crm_privacy.erasure_requests where subject_id = '{ERASED}'"
    )
    dbt("run-operation", "gdpr_erase")
    facts["erased"] = counts()
    facts["status_after_erase"] = scalar(
        f"select status from crm_privacy.erasure_requests where request_id = '{request_id}'"
    )
    facts["evidence_relations"] = sorted(
        row[0]
        for row in rows(
            "select relation from crm_privacy.erasure_evidence "
            f"where request_id = '{request_id}' and status <> 'absent'"
        )
    )

    dbt(
        "run-operation",
        "restore_version",
        "--args",
        json.dumps(
            {
                "model": "crm_customers",
                "version": facts["version_before_erasure"],
                "reason": "bad load rolled back",
            }
        ),
    )
    facts["restored"] = counts()
    facts["restore_log"] = [
        row.asDict()
        for row in rows("select relation, status, rows_reerased from crm_privacy.restore_log")
    ]

    facts["purge"] = cli("purge", "--retain-hours", "0", "--allow-short-retention")
    facts["status_after_purge"] = scalar(
        f"select status from crm_privacy.erasure_requests where request_id = '{request_id}'"
    )
    facts["scan"] = cli("scan", "--request-id", request_id, "--witness", "witness.json", "--json")

    # the CRM sends the customer again, with a new one
    land(landing, 2, [*CUSTOMERS, ("C0005", "Barbara Liskov", "barbara@example.org", "US")])
    # and a late file, dated before batch 2: a customer the lakehouse has not seen, and an
    # older state of one it has (which must not win over the newer one)
    write_export(
        landing,
        "customers",
        3,
        [
            ("C0006", "Donald Knuth", "don@example.org", "US"),
            ("C0003", "Alan Turing", "alan@example.org", "FR"),
        ],
        ["customer_id", "full_name", "email", "country", "updated_at"],
        day=1,
    )
    # a ticket from a customer no customer export has listed yet: kept, under a key of
    # its own, not dropped for want of one
    write_export(
        landing,
        "tickets",
        3,
        [("T3-C0007-0", "C0007", "chat", "Grace Hopper asks about her account")],
        ["ticket_id", "customer_id", "channel", "body", "opened_at"],
        day=1,
    )
    dbt("build")
    facts["rebuilt"] = counts()
    facts["countries"] = {
        row[0]: row[1] for row in rows("select customer_id, country from crm.crm_customers")
    }

    facts["audit"] = cli("audit", "--once")
    facts["audited_relations"] = scalar(
        "select count(distinct relation) from crm_audit.change_log where relation like 'crm.%'"
    )
    # every other test ran in the build just before; the audit is complete only now
    dbt("test", "--select", "tag:compliance")
    facts["tested"] = True
    facts_file.write_text(json.dumps(facts, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()))
