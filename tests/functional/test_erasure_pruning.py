"""gdpr_erase's pruning path (issue 23) on real Spark and Delta: a small batch's MERGE
reads only the files that can hold its subjects, and erases exactly what the MERGE
that reads every file erases.

The MERGE is the one gdpr_erase runs, rendered from its macro (_erase_merge_sql) in
plain Jinja, on a relation keyed by pseudonym and laid out by key (repartitioned by
range, as OPTIMIZE ZORDER BY or liquid clustering on the key leaves it). Proof that
Delta skipped files, not a model of it: the Parquet files whose key range (their
min/max statistics, which the Delta log keeps cut to 4 characters) holds none of the
batch's prefixes are moved out of the table's
folder while the pruned MERGE runs, and it succeeds; the MERGE without prefixes,
given the same missing files, fails on the first one it opens.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from python_jobs.delta_files import read_snapshot
from tests.dbt_harness import build_once
from tests.jinja_harness import Jinja

pytestmark = pytest.mark.functional

SCHEMA = "erasure_pruning_test"
ROWS = 20_000
FILES = 16


@pytest.fixture()
def relation(spark) -> Iterator:
    """Tables of ROWS rows keyed by a SHA-256 pseudonym (two rows a subject), in FILES
    files, each a range of the key; deletion vectors on and the key's statistics cut
    to 4 characters, as the build makes a relation keyed by pseudonym."""

    def make(name: str) -> str:
        table = f"{SCHEMA}.{name}"
        spark.sql(f"drop table if exists {table}")
        spark.sql(
            f"create table {table} (subject_pseudonym string, email string, visit bigint) "
            "using delta tblproperties ('delta.enableDeletionVectors' = 'true', "
            # as the build sets them on a relation keyed by pseudonym (tblproperties_clause)
            "'delta.dataSkippingStatsColumns' = 'subject_pseudonym,visit', "
            "'delta.dataSkippingStringPrefixLength' = '4')"
        )
        spark.sql(
            f"insert into {table} select /*+ REPARTITION_BY_RANGE({FILES}, subject_pseudonym) */ "
            "sha2(cast(id div 2 as string), 256) as subject_pseudonym, "
            "concat('person', id div 2, '@example.org') as email, id as visit "
            f"from range({ROWS})"
        )
        return table

    spark.sql(f"create schema if not exists {SCHEMA}")
    yield make
    spark.sql(f"drop schema if exists {SCHEMA} cascade")


def _merge(action: str, table: str, keys: list[str], prefixes: list[str] | None) -> str:
    """The write gdpr_erase renders for the batch: with prefixes, a DELETE where rows
    are deleted (_erase_delete_sql) and a MERGE where they are anonymized; without, the
    MERGE that reads every file."""
    step = {
        "relation": table,
        "key": "subject_pseudonym",
        "action": action,
        "pii_columns": ["email"],
    }
    keys_sql = "select explode(array(" + ", ".join(f"'{key}'" for key in keys) + ")) as erase_key"
    macros = Jinja().macros()
    if prefixes is not None and action == "delete":
        return str(macros._erase_delete_sql(step, keys_sql, prefixes))
    return str(macros._erase_merge_sql(step, keys_sql, prefixes=prefixes))


def _pseudonyms(spark, subjects: list[int]) -> list[str]:
    return [spark.sql(f"select sha2('{subject}', 256)").first()[0] for subject in subjects]


def _key_ranges(spark, table: str) -> list[tuple[str, str, Path]]:
    """(min, max, path) of the key in each of the table's files: their Parquet statistics,
    which Delta's repeat (cut to 4 characters)."""
    location = spark.sql(f"describe detail {table}").first()["location"]
    ranges = []
    for path in read_snapshot(Path(location.removeprefix("file:"))).files:
        column = pq.ParquetFile(path).schema_arrow.get_field_index("subject_pseudonym")
        metadata = pq.ParquetFile(path).metadata
        stats = [
            metadata.row_group(g).column(column).statistics for g in range(metadata.num_row_groups)
        ]
        ranges.append((min(s.min for s in stats), max(s.max for s in stats), Path(path)))
    return ranges


def _unreachable(spark, table: str, prefixes: list[str]) -> list[Path]:
    """The table's files whose key range holds none of the prefixes."""
    return [
        path
        for low, high, path in _key_ranges(spark, table)
        if not any(low[: len(p)] <= p <= high[: len(p)] for p in prefixes)
    ]


def _rows(spark, table: str) -> list[tuple]:
    return sorted((tuple(row) for row in spark.sql(f"select * from {table}").collect()), key=repr)


@pytest.mark.parametrize("action", ["delete", "anonymize"])
def test_the_pruned_write_reads_only_files_that_can_hold_the_batch_and_erases_the_same_rows(
    spark, relation, tmp_path: Path, action: str
) -> None:
    keys = _pseudonyms(spark, [17, 4242, 9001])
    prefixes = sorted({key[:4] for key in keys})
    pruned, full, control = relation("pruned"), relation("full"), relation("control")
    assert _rows(spark, pruned) == _rows(spark, full)

    away = _unreachable(spark, pruned, prefixes)
    assert FILES - len(keys) <= len(away) < FILES, "the layout does not separate the keys"
    moved = [shutil.move(path, tmp_path / path.name) for path in away]
    spark.sql(_merge(action, pruned, keys, prefixes))
    for path, back in zip(moved, away, strict=True):
        shutil.move(path, back)

    # the same files missing: the MERGE without prefixes opens one of them
    hidden = tmp_path / "control"
    hidden.mkdir()
    for path in _unreachable(spark, control, prefixes):
        shutil.move(path, hidden / path.name)
    with pytest.raises(Exception, match=r"(?i)FileNotFound|does not exist|FAILED_READ_FILE"):
        spark.sql(_merge(action, control, keys, None))

    spark.sql(_merge(action, full, keys, None))
    assert _rows(spark, pruned) == _rows(spark, full)
    metrics = [
        spark.sql(f"describe history {table} limit 1").first()["operationMetrics"]
        for table in (pruned, full)
    ]
    if action == "delete":  # the pruned batch's DELETE, the MERGE without prefixes
        assert metrics[0]["numDeletedRows"] == metrics[1]["numTargetRowsDeleted"] == "6"
    else:
        assert metrics[0]["numTargetRowsUpdated"] == metrics[1]["numTargetRowsUpdated"] == "6"
    left = spark.sql(
        f"select count(*) from {pruned} where subject_pseudonym in ({', '.join(repr(k) for k in keys)})"
    ).first()[0]
    assert left == 0


def test_the_retry_loop_catches_what_a_variable_block_raises_and_nothing_else(spark) -> None:
    """gdpr_erase's DELETE and UPDATEs are a labelled block with a local variable
    (_with_variable_sql), nested in run_with_conflict_retry's loop, whose exit handler
    catches Delta's write conflicts (SQLSTATE 2D521) only. On Spark: an error of the
    handler's SQLSTATE raised inside the nested block is retried until the attempts
    run out (raise_error's P0001 stands in for a conflict, which no test can time),
    and any other error stops the script with its message, after the variable was
    set."""
    macros = Jinja().macros()
    block = str(
        macros._with_variable_sql(
            "blk",
            "keys",
            "array<string>",
            "select array('a')",
            "select raise_error(concat('boom ', cast(size(blk.keys) as string)))",
        )
    )
    script = str(macros._conflict_retry_script(block, 2))
    assert "sqlstate '2D521'" in script
    retried = spark.sql(script.replace("sqlstate '2D521'", "sqlstate 'P0001'")).collect()
    assert [tuple(row) for row in retried] == [(2, False)]
    with pytest.raises(Exception, match="boom 1"):
        spark.sql(script).collect()


def test_the_log_keeps_four_characters_of_a_pseudonym_never_one_whole(spark, relation) -> None:
    """What erasure by pruning costs in privacy: the Delta log's statistics of the key
    are cut to 4 characters (16 bits of a SHA-256); no pseudonym of the table is in any
    file of its log."""
    table = relation("log")
    location = Path(spark.sql(f"describe detail {table}").first()["location"].removeprefix("file:"))
    stats = [
        json.loads(json.loads(line)["add"]["stats"])
        for commit in sorted((location / "_delta_log").glob("*.json"))
        for line in commit.read_text().splitlines()
        if '"add"' in line
    ]
    assert len(stats) == FILES
    for entry in stats:
        low, high = entry["minValues"]["subject_pseudonym"], entry["maxValues"]["subject_pseudonym"]
        # the max gets a tie-breaker character after its prefix (0x7f for ASCII)
        assert len(low) == 4 and high[:4] >= low and high[4:] in ("", "\x7f"), (low, high)
    keys = {row[0] for row in spark.sql(f"select subject_pseudonym from {table}").collect()}
    logged = b"".join(
        path.read_bytes() for path in (location / "_delta_log").iterdir() if path.is_file()
    )
    assert not [key for key in keys if key.encode() in logged]


def test_cluster_by_subject_lays_a_relation_out_by_its_key(dbt, spark) -> None:
    """`dbt run-operation cluster_by_subject` on the lakehouse: silver.patients
    (meta.privacy.layout unset: zorder) is Z-ordered by its pseudonym key, in a commit
    tagged purpose cluster; its rows are the same."""
    build_once(dbt, spark)
    rows = _rows(spark, "silver.patients")
    dbt.operation("cluster_by_subject", {"relations": ["silver.patients"]})
    newest = spark.sql("describe history silver.patients limit 1").first()
    assert newest["operation"] == "OPTIMIZE", newest["operation"]
    assert "patient_pseudonym" in newest["operationParameters"]["zOrderBy"]
    assert json.loads(newest["userMetadata"])["purpose"] == "cluster"
    assert _rows(spark, "silver.patients") == rows
    success, errors = dbt.operation(
        "cluster_by_subject", {"relations": ["privacy.subject_keys"]}, expect_success=False
    )
    assert not success and "is not a relation keyed by pseudonym" in errors


def test_the_liquid_layout_clusters_a_relation_made_without_it(spark, relation) -> None:
    """meta.privacy.layout liquid on a relation the build made unclustered, with
    deletion vectors and the change feed: ALTER TABLE ... CLUSTER BY, then OPTIMIZE;
    a second run only optimizes."""
    table = relation("liquid")
    spark.sql(f"alter table {table} set tblproperties ('delta.enableChangeDataFeed' = 'true')")
    step = {"relation": table, "key": "subject_pseudonym", "layout": "liquid"}
    macros = Jinja().macros()
    for statement in macros._cluster_statements(
        step, spark.sql(f"describe detail {table}").first().asDict()
    ):
        spark.sql(statement)
    detail = spark.sql(f"describe detail {table}").first()
    assert list(detail["clusteringColumns"]) == ["subject_pseudonym"]
    again = macros._cluster_statements(step, detail.asDict())
    assert [s for s in again if not s.startswith(("set ", "reset "))] == [f"optimize {table}"]
    assert spark.sql(f"select count(*) from {table}").first()[0] == ROWS


@pytest.mark.parametrize("layout", ["zorder", "liquid"])
def test_the_layout_leaves_each_file_one_run_of_keys(spark, relation, layout: str) -> None:
    """The statements of cluster_by_subject lay a table that arrived in random order
    out so that no two files' key ranges overlap: a subject's prefix then names one
    file (two at a boundary). With Delta's defaults (a random byte added to each
    row's range id against skew) neighbouring files share keys, and a batch reads
    about twice the files (bench/pruning.py)."""
    table = relation(f"arrived_{layout}")
    spark.sql(
        f"insert overwrite {table} select /*+ REPARTITION(4) */ * from {table} order by rand(7)"
    )
    size = spark.sql(f"describe detail {table}").first()["sizeInBytes"]
    spark.conf.set("spark.databricks.delta.optimize.maxFileSize", str(size // FILES))
    try:
        step = {"relation": table, "key": "subject_pseudonym", "layout": layout}
        statements = (
            Jinja()
            .macros()
            ._cluster_statements(step, spark.sql(f"describe detail {table}").first().asDict())
        )
        for statement in statements:
            spark.sql(statement)
    finally:
        spark.conf.unset("spark.databricks.delta.optimize.maxFileSize")
    ranges = sorted((low, high) for low, high, _ in _key_ranges(spark, table))
    assert len(ranges) >= FILES // 2, ranges
    overlapping = [
        (left, right) for left, right in itertools.pairwise(ranges) if right[0] <= left[1]
    ]
    assert not overlapping, f"{len(overlapping)} of {len(ranges)} files overlap their neighbour"
    assert spark.sql(f"select count(*) from {table}").first()[0] == ROWS
    # the session is left as it was
    assert spark.conf.get("spark.databricks.io.skipping.mdc.addNoise", "true") == "true"


def test_every_relation_keyed_by_pseudonym_erases_the_same_rows_pruned_or_not(dbt, spark) -> None:
    """Both paths on the built lakehouse, relation by relation. Each relation of the
    erasure plan keyed by pseudonym (bronze to gold and the snapshot, deleted or
    anonymized) is copied twice (SHALLOW CLONE). On one copy runs the write gdpr_erase
    renders for a pruned batch (the prefixes; a DELETE where rows are deleted, a MERGE
    where they are anonymized), on the other the MERGE that reads every file. The
    batch: two subjects of every relation, patients and web-shop users alike. Both copies end with the same rows, and Delta counts the same rows deleted
    and updated, which is what the evidence reports."""
    build_once(dbt, spark)
    manifest = json.loads((dbt.target_path / "manifest.json").read_text())
    relations = {
        node["name"]: f"{node['schema']}.{node['alias']}"
        for node in manifest["nodes"].values()
        if node["resource_type"] in ("model", "snapshot", "seed")
    }
    macros = Jinja(graph={"nodes": manifest["nodes"], "sources": manifest["sources"]}).macros(
        # the anonymizing MERGE reads the tombstone key from privacy.system_keys
        {"ref": lambda *parts, **kwargs: relations[parts[-1]]}
    )
    steps = [
        step
        for step in macros.erasure_plan(savepoints=False)
        if step["key_kind"] == "pseudonym" and step["action"] != "shred"
    ]
    assert len(steps) >= 10, [step["relation_name"] for step in steps]
    held = {
        step["relation_name"]: [
            row[0]
            for row in spark.sql(
                f"select distinct `{step['key']}` from {step['relation']} "
                f"where `{step['key']}` is not null order by 1 limit 2"
            ).collect()
        ]
        for step in steps
    }
    assert sum(1 for found in held.values() if found) >= 10, held
    keys = sorted({key for found in held.values() for key in found})
    assert all(len(key) == 64 for key in keys)
    prefixes = sorted({key[:4] for key in keys})
    keys_sql = "select explode(array(" + ", ".join(f"'{key}'" for key in keys) + ")) as erase_key"
    schema = "erasure_pruning_equivalence"
    spark.sql(f"create schema if not exists {schema}")
    try:
        for step in steps:
            counts = {}
            for path in ("pruned", "full"):
                copy = f"{schema}.{step['name']}_{path}"
                spark.sql(f"create table {copy} shallow clone {step['relation']}")
                if path == "full":
                    write = macros._erase_merge_sql({**step, "relation": copy}, keys_sql)
                elif step["action"] == "delete":  # as gdpr_erase writes a pruned batch
                    write = macros._erase_delete_sql({**step, "relation": copy}, keys_sql, prefixes)
                    assert "gdpr_erase_batch: begin" in write
                else:
                    write = macros._erase_merge_sql(
                        {**step, "relation": copy}, keys_sql, prefixes=prefixes
                    )
                assert ("startswith" in write) == (path == "pruned")
                spark.sql(str(write))
                # a write that matches nothing commits nothing (an empty relation)
                newest = spark.sql(f"describe history {copy} limit 1").first()
                metrics = (
                    newest["operationMetrics"] if newest["operation"] in ("MERGE", "DELETE") else {}
                )
                counts[path] = (
                    int(metrics.get("numTargetRowsDeleted", metrics.get("numDeletedRows", 0))),
                    int(metrics.get("numTargetRowsUpdated", 0)),
                )
                if newest["operation"] == "DELETE":
                    # the log names the batch's prefixes, never a whole pseudonym
                    predicate = newest["operationParameters"]["predicate"]
                    assert "StartsWith" in predicate and not [k for k in keys if k in predicate]
            name = step["relation_name"]
            assert counts["pruned"] == counts["full"], (name, counts)
            assert (sum(counts["pruned"]) >= 1) == bool(held[name]), (name, counts, held[name])
            pruned, full = (
                _rows(spark, f"{schema}.{step['name']}_{path}") for path in ("pruned", "full")
            )
            assert pruned == full, name
    finally:
        spark.sql(f"drop schema if exists {schema} cascade")
