"""Attack class: rows the law says to keep are destroyed by a rebuild or a purge.

Bookkeeping law keeps orders for years, so erasing a web-shop user anonymizes their
orders (on_erasure: anonymize) instead of deleting them. A --full-refresh rebuilt
bronze.orders from landing and filtered out the erased user's events, so every order
erasure had kept was gone; later corrections of those orders were dropped too, and the
landing purge deleted their events although the contract says anonymize.

An anonymized order also kept its source order id, which the web shop links to the
user: looking the erased user's order ids up in bronze.orders or silver.orders found
every one of their orders.

Guarantees held here: an anonymized order survives --full-refresh, later events for it
still apply (and stay anonymous), and the landing purge anonymizes its events instead of
deleting them, so a rebuild after the purge still has it. Every order (and click) is
stored under an anonymous id (macro anonymized_record_id: the tombstone key's hash of
its source id), before and after its user's erasure, so the source's ids find it
nowhere. The shop's bronze and silver relations (users, clicks, orders) name a user
only by pseudonym: no version of them holds the shop's user id or record ids.
"""

from __future__ import annotations

import json
from datetime import UTC, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from demo import generate
from python_jobs import purge
from python_jobs.project import landing_dir
from tests.dbt_harness import DbtProject, assert_history_names_by_pseudonym_only, record_ref

pytestmark = pytest.mark.functional


def _orders(spark: SparkSession, order_ids: list[str]) -> dict[str, tuple]:
    """The user's orders, by their source id: bronze keeps every order under its
    anonymous id (computed first: Spark fails a scalar subquery inside a join
    condition)."""
    quoted = ", ".join(f"('{o}')" for o in order_ids)
    anonymous = record_ref("source.order_id")
    ids = {
        row[1]: row[0]
        for row in spark.sql(
            f"select source.order_id, {anonymous} from (values {quoted}) as source(order_id)"
        ).collect()
    }
    listed = ", ".join(f"'{i}'" for i in ids)
    return {
        ids[row[0]]: (row[1], float(row[2]))
        for row in spark.sql(
            f"select order_ref, user_pseudonym, amount from bronze.orders where order_ref in ({listed})"
        ).collect()
    }


def _user_with_orders(spark: SparkSession, order: str) -> tuple[str, str, list[str]]:
    """The first (asc) or last (desc) user with two orders or more, clicks and a profile
    (bronze names them by pseudonym): their id, pseudonym and order ids."""
    user_id, pseudonym = spark.sql(
        "select k.subject_id, k.subject_pseudonym from bronze.orders o "
        "join privacy.subject_keys k on k.subject_pseudonym = o.user_pseudonym "
        "where o.user_pseudonym in (select user_pseudonym from bronze.users) "
        "and o.user_pseudonym in (select user_pseudonym from bronze.clicks) "
        "group by k.subject_id, k.subject_pseudonym having count(*) >= 2 "
        f"order by k.subject_id {order} limit 1"
    ).first()
    # the shop's order ids: bronze keeps each under its anonymous id
    rows = spark.sql(
        f"select distinct order_id from landing.orders where user_id = '{user_id}' "
        f"and {record_ref('order_id')} in "
        f"(select order_ref from bronze.orders where user_pseudonym = '{pseudonym}') "
        "order by order_id"
    ).collect()
    return user_id, pseudonym, [row[0] for row in rows]


@pytest.fixture(scope="module")
def erased_user(tables: list[Path], dbt: DbtProject, spark: SparkSession) -> dict:
    """A user with orders, erased; their order ids."""
    user_id, pseudonym, order_ids = _user_with_orders(spark, "desc")
    anonymous = "select count(*) from bronze.orders where user_pseudonym is null"
    before = spark.sql(anonymous).first()[0]
    dbt.operation("gdpr_erase", {"subject_ids": [user_id], "reason": "adversarial suite"})
    # erasure keeps the orders, and anonymizes them
    assert spark.sql(anonymous).first()[0] == before + len(order_ids)
    assert not spark.sql(
        f"select * from bronze.orders where user_pseudonym = '{pseudonym}'"
    ).count()
    return {"id": user_id, "pseudonym": pseudonym, "orders": order_ids}


# The web shop's bronze relations: each names the user only by the pseudonym the vault gives
# them (the vault alone maps it to the shop's user id, until the key is destroyed).
BY_PSEUDONYM = {
    "bronze.users": "user_pseudonym",
    "bronze.clicks": "user_pseudonym",
    "bronze.orders": "user_pseudonym",
    "silver.clicks": "user_pseudonym",
    "silver.orders": "user_pseudonym",
}


@pytest.mark.parametrize("relation", sorted(BY_PSEUDONYM))
def test_history_never_names_the_erased_user_by_the_source_id(
    erased_user: dict, spark: SparkSession, relation: str
) -> None:
    """Attack: take the user id the web shop uses, time-travel a relation to the version
    before the erasure (and read the erasure's pre-images in the Change Data Feed), and
    look for it. Guarantee, before any purge: no value of any column is the shop's id;
    the user's rows were there, under the pseudonym only."""
    assert_history_names_by_pseudonym_only(
        spark, relation, BY_PSEUDONYM[relation], erased_user["id"], erased_user["pseudonym"]
    )


def test_no_kept_order_is_found_by_its_source_id(erased_user: dict, spark: SparkSession) -> None:
    """Attack: take the erased user's order ids from the web shop (which links each to
    the user) and look them up where orders are kept, and in the delete markers and the
    rejected events. Guarantee: none is found; the orders are kept, under anonymous ids."""
    quoted = ", ".join(f"'{o}'" for o in erased_user["orders"])
    for relation, column in (
        ("bronze.orders", "order_ref"),
        ("silver.orders", "order_ref"),
        ("bronze.cdc_deletes", "record_key"),
        ("bronze.rejected_events", "record_key"),
    ):
        found = spark.sql(f"select count(*) from {relation} where {column} in ({quoted})").first()[
            0
        ]
        assert found == 0, f"{relation} keeps the erased user's order ids in {column}"
    kept = spark.sql(
        "select count(*) from silver.orders where user_pseudonym is null and order_ref like 'anon-%'"
    ).first()[0]
    assert kept >= len(erased_user["orders"])


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
    # just after the newest event landed, so the correction is the newest
    newest = spark.sql("select max(_source_ts) from landing.orders").first()[0]
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


def test_an_order_event_during_its_users_erasure_moves_the_order_without_a_copy(
    erased_user: dict, dbt: DbtProject, spark: SparkSession
) -> None:
    """Attack: an erasure stops after its tombstone (before bronze.orders: a crash, or
    the window while it runs) and the shop sends a correction for one of the user's
    orders. Bronze keys an erased user's order by its anonymous id, and the order is
    still under its source id. Guarantee: the build moves it (the row under the source
    id goes as the anonymous one is written, with the correction), no order is doubled,
    and the resumed erasure leaves every order once, anonymous."""
    user_id, pseudonym, order_ids = _user_with_orders(spark, "asc")
    assert user_id != erased_user["id"]
    total = spark.table("bronze.orders").count()
    dbt.operation("request_erasure", {"subject_ids": [user_id], "reason": "adversarial suite"})
    success, errors = dbt.invoke_errors(
        "run-operation", "gdpr_erase", "--vars", json.dumps({"erasure_crash_after": "tombstone"})
    )
    assert not success and "crash injected after step tombstone" in errors, errors
    assert spark.sql(
        f"select count(*) from bronze.orders where user_pseudonym = '{pseudonym}'"
    ).first()[0] == len(order_ids)
    newest = spark.sql("select max(_source_ts) from landing.orders").first()[0]
    now = newest.replace(tzinfo=UTC) + timedelta(seconds=1)
    correction = {
        "order_id": order_ids[0],
        "user_id": user_id,
        "amount": 2.5,
        "ordered_at": now,
        "_op": "update",
        "_source_ts": now,
    }
    pq.write_table(
        pa.Table.from_pylist([correction], schema=generate.SCHEMAS["orders"]),
        landing_dir() / "orders" / "correction-0002.parquet",
    )
    dbt.invoke("run", "--select", "+bronze_orders")
    assert spark.table("bronze.orders").count() == total
    assert _orders(spark, order_ids[:1]) == {order_ids[0]: (None, 2.5)}
    dbt.operation("gdpr_erase")
    assert spark.table("bronze.orders").count() == total
    kept = _orders(spark, order_ids)
    assert set(kept) == set(order_ids) and kept[order_ids[0]] == (None, 2.5)
    assert all(user is None for user, _ in kept.values())
