"""The workload of shared reference 003: TPC-DS `customers` and 10% of its ids to delete.

    python bench/generate_customers.py                 # 6,500,000 rows (the quick size)
    python bench/generate_customers.py --rows 65000000 # the document's size (3.2 GB there)

Writes, as plain Parquet (the document's starting point, before CONVERT TO DELTA):
  gdpr.customers_parquet      the TPC-DS customer schema, 18 columns, --rows rows;
  gdpr.customer_delete_keys   (c_customer_sk, c_customer_id) of exactly 10% of them.
Deterministic: the same --rows and --seed give the same rows in the same files, on any
machine (every value is a hash of the row's surrogate key; no random generator).
Realistic in the way that matters for erasure: rows sit in arrival order (c_customer_sk),
while c_customer_id is a scrambled 16-letter code (a bijection of the key, so unique),
and the customers who ask to be forgotten are spread evenly over every file, as they
are in a real table. Data in <LAKEHOUSE_DIR or .lakehouse>/bench-customers; rerunning
with the same arguments reuses what is there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import bench_state

ROWS_PER_FILE = 1_000_000
STATE = "bench-customers"

FIRST_NAMES = [
    "James",
    "Mary",
    "Robert",
    "Patricia",
    "John",
    "Jennifer",
    "Michael",
    "Linda",
    "David",
    "Elizabeth",
    "William",
    "Barbara",
    "Richard",
    "Susan",
    "Joseph",
    "Jessica",
    "Thomas",
    "Sarah",
    "Charles",
    "Karen",
    "Christopher",
    "Lisa",
    "Daniel",
    "Nancy",
    "Matthew",
    "Betty",
    "Anthony",
    "Sandra",
    "Mark",
    "Margaret",
    "Donald",
    "Ashley",
    "Steven",
    "Kimberly",
    "Paul",
    "Emily",
    "Andrew",
    "Donna",
    "Joshua",
    "Michelle",
    "Kenneth",
    "Carol",
    "Kevin",
    "Amanda",
    "Brian",
    "Melissa",
    "George",
    "Deborah",
]
LAST_NAMES = [
    "Smith",
    "Johnson",
    "Williams",
    "Brown",
    "Jones",
    "Garcia",
    "Miller",
    "Davis",
    "Rodriguez",
    "Martinez",
    "Hernandez",
    "Lopez",
    "Gonzalez",
    "Wilson",
    "Anderson",
    "Thomas",
    "Taylor",
    "Moore",
    "Jackson",
    "Martin",
    "Lee",
    "Perez",
    "Thompson",
    "White",
    "Harris",
    "Sanchez",
    "Clark",
    "Ramirez",
    "Lewis",
    "Robinson",
    "Walker",
    "Young",
    "Allen",
    "King",
    "Wright",
    "Scott",
    "Torres",
    "Nguyen",
    "Hill",
    "Flores",
    "Green",
    "Adams",
    "Nelson",
    "Baker",
    "Hall",
    "Rivera",
    "Campbell",
    "Mitchell",
    "Carter",
]
COUNTRIES = [
    "UNITED STATES",
    "CANADA",
    "MEXICO",
    "GERMANY",
    "FRANCE",
    "JAPAN",
    "BRAZIL",
    "INDIA",
    "CHINA",
    "ITALY",
    "SPAIN",
    "NETHERLANDS",
    "SWEDEN",
    "NORWAY",
    "POLAND",
    "IRELAND",
    "PORTUGAL",
    "GREECE",
    "TURKEY",
    "EGYPT",
    "KENYA",
    "CHILE",
    "PERU",
    "ARGENTINA",
    "AUSTRALIA",
    "NEW ZEALAND",
    "SINGAPORE",
    "KOREA",
    "VIET NAM",
    "PHILIPPINES",
]
SALUTATIONS = ["Mr.", "Mrs.", "Ms.", "Dr.", "Sir", "Miss"]
DOMAINS = ["example.com", "mail.example.org", "post.example.net", "inbox.example.com"]


def _pick(values: list[str], salt: int) -> str:
    array = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"element_at(array({array}), cast(pmod(xxhash64(sk, {salt}), {len(values)}) + 1 as int))"


def _between(low: int, high: int, salt: int) -> str:
    return f"cast(pmod(xxhash64(sk, {salt}), {high - low + 1}) + {low} as int)"


def customers_sql(rows: int, seed: int) -> str:
    """SELECT of the customers table: TPC-DS column names and types, 18 columns."""
    s = seed * 100
    first, last = _pick(FIRST_NAMES, s + 8), _pick(LAST_NAMES, s + 9)
    # odd multiplier modulo 2^40: a bijection, so ids are unique and look unordered
    code = f"lpad(hex(pmod(sk * 2654435761 + {seed}, 1099511627776)), 10, '0')"
    customer_id = f"concat('AAAAAA', translate({code}, '0123456789ABCDEF', 'ABCDEFGHIJKLMNOP'))"
    files = max(1, -(-rows // ROWS_PER_FILE))
    return f"""
select /*+ REPARTITION({files}) */
    cast(sk as int) as c_customer_sk,
    {customer_id} as c_customer_id,
    {_between(1, 1920800, s + 1)} as c_current_cdemo_sk,
    {_between(1, 7200, s + 2)} as c_current_hdemo_sk,
    {_between(1, max(1, rows // 2), s + 3)} as c_current_addr_sk,
    {_between(2449028, 2452642, s + 4)} as c_first_shipto_date_sk,
    {_between(2449028, 2452642, s + 5)} as c_first_sales_date_sk,
    {_pick(SALUTATIONS, s + 6)} as c_salutation,
    {first} as c_first_name,
    {last} as c_last_name,
    if(pmod(xxhash64(sk, {s + 10}), 2) = 0, 'Y', 'N') as c_preferred_cust_flag,
    {_between(1, 28, s + 11)} as c_birth_day,
    {_between(1, 12, s + 12)} as c_birth_month,
    {_between(1924, 1992, s + 13)} as c_birth_year,
    {_pick(COUNTRIES, s + 14)} as c_birth_country,
    cast(null as string) as c_login,
    concat({first}, '.', {last}, '@', lower(substr({customer_id}, 7, 6)), '.',
           {_pick(DOMAINS, s + 15)}) as c_email_address,
    cast(date_add(date'2000-01-01', {_between(0, 1095, s + 16)}) as string) as c_last_review_date
from (select id as sk from range(1, {rows + 1}, 1, {files}))
"""


def generate(spark, state: Path, rows: int, seed: int) -> dict:
    """Write (or reuse) the two Parquet tables; returns what was made and how long it took."""
    source = state / "source"
    marker = source / "_generated.json"
    wanted = {"rows": rows, "seed": seed, "rows_per_file": ROWS_PER_FILE}
    spark.sql("create database if not exists gdpr")
    if marker.exists() and {k: json.loads(marker.read_text()).get(k) for k in wanted} == wanted:
        made = json.loads(marker.read_text())
    else:
        shutil.rmtree(source, ignore_errors=True)
        spark.sql("drop table if exists gdpr.customers_parquet")
        spark.sql("drop table if exists gdpr.customer_delete_keys")
        start = time.perf_counter()
        spark.sql(customers_sql(rows, seed)).write.parquet(str(source / "customers"))
        seconds = time.perf_counter() - start
        # exactly 10% of the customers (every tenth key), spread evenly over every file
        spark.read.parquet(str(source / "customers")).where("c_customer_sk % 10 = 3").select(
            "c_customer_sk", "c_customer_id"
        ).coalesce(1).write.parquet(str(source / "customer_delete_keys"))
        made = {**wanted, "seconds": round(seconds, 1)}
        made["bytes"] = sum(f.stat().st_size for f in (source / "customers").glob("*.parquet"))
        marker.write_text(json.dumps(made))
    for name, folder in (
        ("customers_parquet", "customers"),
        ("customer_delete_keys", "customer_delete_keys"),
    ):
        spark.sql(
            f"create table if not exists gdpr.{name} using parquet location '{source / folder}'"
        )
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=6_500_000, help="customers (default 6.5M)")
    parser.add_argument("--seed", type=int, default=3, help="changes every value, not the shape")
    args = parser.parse_args(argv)
    if not 10 <= args.rows <= 2_000_000_000:
        parser.error(f"--rows must be between 10 and 2,000,000,000 (got {args.rows})")
    if not 0 <= args.seed <= 9999:
        parser.error(f"--seed must be between 0 and 9999 (got {args.seed})")
    state = bench_state(STATE)
    from bench.run import bench_spark

    spark = bench_spark()
    made = generate(spark, state, args.rows, args.seed)
    print(
        f"gdpr.customers_parquet: {made['rows']:,} rows, {made['bytes'] / 1e9:.2f} GB of Parquet "
        f"(written in {made['seconds']} s); gdpr.customer_delete_keys: {made['rows'] // 10:,} ids"
        f"\nin {state / 'source'} ({os.cpu_count()} cores)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
