"""The Delta relations dbt builds, read from target/manifest.json (never a hard-coded list).

Each relation carries its privacy meta from the model's yml, and can be addressed by
name (shared metastore) or by path (``shared_metastore=False`` sessions, which may
run while dbt holds the embedded metastore).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pyspark.sql import SparkSession

from python_jobs.project import ProjectError, manifest

RESOURCE_TYPES = ("model", "seed", "snapshot")
NOT_TABLES = ("view", "ephemeral", "materialized_view")


@dataclass(frozen=True)
class DeltaRelation:
    unique_id: str
    name: str
    schema: str
    identifier: str
    resource_type: str
    privacy: dict[str, Any] = field(default_factory=dict, compare=False)
    tblproperties: dict[str, str] = field(default_factory=dict, compare=False)
    location_root: str | None = field(default=None, compare=False)

    @property
    def change_data_feed(self) -> bool:
        """Does the model declare delta.enableChangeDataFeed (dbt_project.yml or its yml)?"""
        return str(self.tblproperties.get("delta.enableChangeDataFeed", "")).lower() == "true"

    @property
    def qualified_name(self) -> str:
        return f"`{self.schema}`.`{self.identifier}`"

    def path(self, warehouse: Path) -> Path:
        """Where the table's files are on this machine.

        An external table (config location_root, e.g. from var lake_root) lives at
        <location_root>/<table>, as dbt's location clause puts it; a managed one in
        Spark's layout <warehouse>/<schema>.db/<table>.
        """
        if self.location_root:
            return (
                local_path(self.location_root, f"{self.schema}.{self.identifier}") / self.identifier
            )
        if self.schema == "default":
            return warehouse / self.identifier
        return warehouse / f"{self.schema}.db" / self.identifier


def registered_folder(spark: SparkSession, schema: str, identifier: str) -> Path | None:
    """The folder the catalog registered a table at (a landing table: where dbt's run
    put it, e.g. with --vars landing_path), or None for a table not registered: the one
    place a job reads or writes a landing source's files, as the build reads them."""
    if not spark.catalog.tableExists(f"{schema}.{identifier}"):
        return None
    name = f"`{schema}`.`{identifier}`"
    for row in spark.sql(f"describe table extended {name}").collect():
        if row[0] == "Location":
            return local_path(row[1], name)
    return None


def local_path(location: str, what: str) -> Path:
    """A file: URI or absolute path as a local Path; anything remote is refused by name."""
    parsed = urlparse(location)
    if parsed.scheme in ("", "file") and not parsed.netloc and parsed.path.startswith("/"):
        return Path(parsed.path)
    raise ProjectError(
        f"{what} is stored at {location!r}, which is not on this machine's file system: "
        "allowed are an absolute path or a file: URI (run this job where the files are)"
    )


def delta_relations(graph: dict[str, Any] | None = None) -> list[DeltaRelation]:
    """Every enabled Delta table in the dbt graph, in the manifest's (stable) order."""
    graph = graph if graph is not None else manifest()
    relations = []
    for node in graph["nodes"].values():
        config = node.get("config", {})
        if node["resource_type"] not in RESOURCE_TYPES or not config.get("enabled", True):
            continue
        if config.get("file_format") != "delta" or config.get("materialized") in NOT_TABLES:
            continue
        relations.append(
            DeltaRelation(
                unique_id=node["unique_id"],
                name=node["name"],
                schema=node["schema"],
                identifier=node.get("alias") or node["name"],
                resource_type=node["resource_type"],
                privacy=(config.get("meta") or {}).get("privacy", {}),
                tblproperties={
                    str(key): str(value)
                    for key, value in (config.get("tblproperties") or {}).items()
                },
                location_root=config.get("location_root") or None,
            )
        )
    return relations


def control_relation(relations: list[DeltaRelation], name: str) -> DeltaRelation:
    """The relation of the model `name` (a control table the jobs write), or a clear error."""
    for relation in relations:
        if relation.name == name:
            return relation
    raise ProjectError(f"the manifest has no {name}; run `dbt build` first")


def table_ref(spark: SparkSession, relation: DeltaRelation) -> str:
    """How to name the relation in SQL from this session: by name, or delta.`path`."""
    if spark.conf.get("spark.sql.catalogImplementation", "hive") == "hive":
        return relation.qualified_name
    return f"delta.`{table_location(spark, relation)}`"


def table_location(spark: SparkSession, relation: DeltaRelation) -> str:
    """The relation's storage path, for by-path reads (streams) and writes.

    By path because ``readStream.table()`` on a Delta table dbt registered in the
    metastore fails (DELTA_UNSUPPORTED_SCHEMA_DURING_READ: the catalog passes its schema).
    """
    if spark.conf.get("spark.sql.catalogImplementation", "hive") == "hive":
        return spark.sql(f"describe detail {relation.qualified_name}").first()["location"]
    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    return str(relation.path(warehouse))


SAVEPOINT_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
SAVEPOINT_COPY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}\.[A-Za-z_][A-Za-z0-9_]{0,127}$")
SAVEPOINT_COLUMNS = ("savepoint_name", "node", "relation", "savepoint_relation", "source_version")
SAVEPOINT_KEPT_SQL = (
    f"select {', '.join(SAVEPOINT_COLUMNS)} from {{registry}} "
    "where status in ('creating', 'kept') order by savepoint_name"
)


def savepoint_relations(
    relations: list[DeltaRelation], rows: list[dict[str, Any]]
) -> list[DeltaRelation]:
    """The copies of the savepoints not released (rows of privacy.savepoints: savepoint_name,
    node, savepoint_relation), each a relation of its own carrying the privacy of the
    relation it copies: purge purges it, forensic_scan scans it as a declared relation.
    A row savepoint did not write, or one copying a node the manifest no longer declares,
    stops the job: nothing would say whose data the copy holds."""
    by_id = {relation.unique_id: relation for relation in relations}
    found = []
    for row in rows:
        name, copy = str(row.get("savepoint_name") or ""), str(row.get("savepoint_relation") or "")
        if not SAVEPOINT_NAME.match(name) or not SAVEPOINT_COPY.match(copy):
            raise ProjectError(
                f"privacy.savepoints holds a row savepoint did not write (name {name[:40]!r}, "
                f"copy {copy[:80]!r}); fix or remove that row by hand"
            )
        node = str(row.get("node"))
        source = by_id.get(node)
        if source is None:
            model = [*node.split("."), "", "", ""][2]
            raise ProjectError(
                f"savepoint {name} ({copy}) copies {node[:120]}, which the manifest no longer "
                "declares; release it first: dbt run-operation release_savepoint --args "
                f"'{{model: {model[:120]}, name: {name}}}'"
            )
        schema, identifier = copy.split(".")
        found.append(
            DeltaRelation(
                unique_id=f"savepoint.{source.unique_id}.{name}",
                name=identifier,
                schema=schema,
                identifier=identifier,
                resource_type="savepoint",
                privacy=source.privacy,
            )
        )
    return found


def is_built(spark: SparkSession, relation: DeltaRelation | None) -> bool:
    """Whether the relation exists yet (False for None: a model the manifest lacks)."""
    if relation is None:
        return False
    if spark.conf.get("spark.sql.catalogImplementation", "hive") == "hive":
        return spark.catalog.tableExists(relation.qualified_name.replace("`", ""))
    return (Path(table_location(spark, relation)) / "_delta_log").is_dir()


def kept_savepoints(spark: SparkSession, relations: list[DeltaRelation]) -> list[DeltaRelation]:
    """savepoint_relations of the registry read with Spark (none before it is built)."""
    registry = next((r for r in relations if r.name == "privacy_savepoints"), None)
    rows = None
    if is_built(spark, registry):
        kept = spark.sql(SAVEPOINT_KEPT_SQL.format(registry=table_ref(spark, registry))).collect()
        rows = [row.asDict() for row in kept]
    return registered_copies(relations, _savepoint_schema_tables(spark), rows)


def registered_copies(
    relations: list[DeltaRelation], held: list[str], rows: list[dict] | None
) -> list[DeltaRelation]:
    """The copies the registry's kept rows name (`rows`; None: there is no registry).
    Stops while the savepoint schema holds a table (`held`, lower case) that no kept
    savepoint names: nothing says whose data it holds, so nothing could erase from it,
    scan it or report it. The one rule of purge, the forensic scan and the report."""
    schema = savepoint_schema()
    if rows is None:
        if held:
            raise ProjectError(
                f"the savepoint schema {schema} holds {len(held)} table(s) ({', '.join(held[:3])}) "
                "but the savepoint registry (privacy.savepoints) does not exist: nothing says "
                "whose data they hold. Run `dbt run --select privacy_savepoints`, or drop them"
            )
        return []
    kept = savepoint_relations(relations, rows)
    strays = sorted(set(held) - {copy.identifier.lower() for copy in kept})
    if strays:
        raise ProjectError(
            f"{schema}.{strays[0]} (and {len(strays) - 1} other table(s)) is in the savepoint "
            "schema but no kept savepoint holds it: nothing knows whose data it holds. Drop it, "
            "or register it by making the savepoint again"
        )
    return kept


def savepoint_schema() -> str:
    """The schema of the savepoints' copies (var savepoint_schema, as the macro reads it)."""
    from python_jobs.macros import engine_macros

    return str(engine_macros().savepoint_schema())


def _savepoint_schema_tables(spark: SparkSession) -> list[str]:
    """The tables in the savepoint schema (var savepoint_schema), lower-case."""
    schema = savepoint_schema()
    if spark.conf.get("spark.sql.catalogImplementation", "hive") == "hive":
        # SQL, as the macro asks: spark.catalog.listTables fails on these tables in Spark 4
        # (EXPRESSION_DECODING_FAILED); the macro checked the schema is an identifier
        if not spark.sql(f"show schemas like '{schema}'").collect():
            return []
        rows = spark.sql(f"show tables in {schema}").collect()
        return sorted(row["tableName"].lower() for row in rows if not row["isTemporary"])
    folder = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")) / f"{schema}.db"
    return sorted(
        table.name.lower() for table in folder.glob("*") if (table / "_delta_log").is_dir()
    )
