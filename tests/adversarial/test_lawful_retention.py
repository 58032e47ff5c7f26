"""Attack class: rows the law says to keep are destroyed by a rebuild or a purge.

Bookkeeping law keeps orders for years, so erasing a web-shop user anonymizes their
orders (on_erasure: anonymize) instead of deleting them. A --full-refresh rebuilt
bronze.orders from landing and filtered out the erased user's events, so every order
erasure had kept was gone; later corrections of those orders were dropped too, and the
landing purge deleted their events although the contract says anonymize.

Guarantees held here: an anonymized order survives --full-refresh, later events for it
still apply (and stay anonymous), and the landing purge anonymizes its events instead of
deleting them, so a rebuild after the purge still has it.
"""

from __future__ import annotations

from datetime import UTC, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from python_jobs import generate, purge
from python_jobs.project import landing_dir
from tests.dbt_harness import DbtProject

pytestmark = pytest.mark.functional


def _orders(spark: SparkSession, order_ids: list[str]) -> dict[str, tuple]:
    quoted = ", ".join(f"'{o}'" for o in order_ids)
    return {
        row[0]: (row[1], float(row[2]))
        for row in spark.sql(
            f"select order_id, user_id, amount from bronze.orders where order_id in ({quoted})"
        ).collect()
    }


@pytest.fixture(scope="module")
def erased_user(tables: list[Path], dbt: DbtProject, spark: SparkSession) -> dict:
    """A user with orders, erased; their order ids."""
    user_id = spark.sql(
        "select user_id from bronze.orders where user_id is not null "
        "group by user_id having count(*) >= 2 order by user_id desc limit 1"
    ).first()[0]
    order_ids = [
        row[0]
        for row in spark.sql(
            f"select order_id from bronze.orders where user_id = '{user_id}' order by order_id"
        ).collect()
    ]
    dbt.operation("gdpr_erase", {"subject_ids": [user_id], "reason": "adversarial suite"})
    kept = _orders(spark, order_ids)
    assert set(kept) == set(order_ids), "erasure must keep the orders"
    assert all(user is None for user, _ in kept.values()), "and anonymize them"
    return {"id": user_id, "orders": order_ids}


def test_anonymized_orders_survive_a_full_refresh(
    erased_user: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: `dbt run --full-refresh -s bronze_orders` after the erasure. Guarantee:
    every order is still there, anonymized."""
    dbt.invoke("run", "--full-refresh", "--select", "bronze_orders")
    kept = _orders(spark, erased_user["orders"])
    assert set(kept) == set(erased_user["orders"])
    assert all(user is None for user, _ in kept.values())


def test_a_later_correction_of_an_anonymized_order_applies_and_stays_anonymous(
    erased_user: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: the shop sends a correction (a refund) for one of the erased user's
    orders, with the user's id, after the erasure. Guarantee: bronze applies the new
    amount, and the user id stays null."""
    order_id = erased_user["orders"][0]
    # just after the newest event bronze has applied, so the correction is the newest
    newest = spark.sql("select max(source_updated_at) from bronze.orders").first()[0]
    now = newest.replace(tzinfo=UTC) + timedelta(seconds=1)
    correction = pa.Table.from_pylist(
        [
            {
                "order_id": order_id,
                "user_id": erased_user["id"],
                "amount": 1.25,
                "ordered_at": now,
                "_op": "update",
                "_source_ts": now,
            }
        ],
        schema=generate.SCHEMAS["orders"],
    )
    pq.write_table(correction, landing_dir() / "orders" / "correction-0001.parquet")
    dbt.invoke("run", "--select", "+bronze_orders")
    user, amount = _orders(spark, [order_id])[order_id]
    assert (user, amount) == (None, 1.25)


def test_the_landing_purge_anonymizes_kept_events_and_a_rebuild_keeps_the_orders(
    erased_user: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: purge the landing zone of the erased user, then rebuild bronze.orders
    from it. Guarantee: the orders' events are kept without the user id (the purge
    anonymizes what the contract anonymizes) and the rebuild still has every order."""
    dbt.invoke("parse")
    purge.purge_landing(dbt.manifest(), landing_dir(), [erased_user["id"]])
    events = pq.read_table(landing_dir() / "orders").to_pylist()
    assert not [e for e in events if e["user_id"] == erased_user["id"]]
    assert {e["order_id"] for e in events} >= set(erased_user["orders"])
    dbt.invoke("run", "--full-refresh", "--select", "bronze_orders")
    kept = _orders(spark, erased_user["orders"])
    assert set(kept) == set(erased_user["orders"])
    assert all(user is None for user, _ in kept.values())
