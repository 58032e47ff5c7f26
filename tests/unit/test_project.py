"""Unit layer: the project's configuration, as dbt parses it and as Python reads it."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

from python_jobs import jars, project, relations, spark
from tests.dbt_harness import BASELINE, ROOT, DbtProject


@pytest.fixture(scope="module")
def manifest(dbt: DbtProject) -> dict:
    dbt.invoke("parse")
    return dbt.manifest()


def test_every_delta_node_carries_the_baseline(manifest: dict) -> None:
    found = relations.delta_relations(manifest)
    assert {r.resource_type for r in found} == {"model", "seed", "snapshot"}
    for relation in found:
        node = manifest["nodes"][relation.unique_id]
        assert node["config"]["file_format"] == "delta"
        if relation.privacy.get("role") == "vault":
            vault = node["config"]["tblproperties"]
            assert vault["delta.enableChangeDataFeed"] == "false"
            assert vault["delta.deletedFileRetentionDuration"] == "interval 1 hours"
            continue
        if relation.privacy.get("role") == "system":
            # the lakehouse's own keys: out of change data, 30 days of history to recover
            keys = node["config"]["tblproperties"]
            assert keys["delta.enableChangeDataFeed"] == "false"
            assert keys["delta.deletedFileRetentionDuration"] == "interval 30 days"
            continue
        if relation.privacy.get("role") == "audit":
            # the audit log is not audited (no CDF) and only ever appended to
            audit = node["config"]["tblproperties"]
            assert audit["delta.enableChangeDataFeed"] == "false"
            assert audit["delta.appendOnly"] == "true"
            assert not relation.change_data_feed
            continue
        assert relation.change_data_feed
        assert node["config"]["tblproperties"] == BASELINE, relation.unique_id


def test_keys_and_history_are_never_rebuilt(manifest: dict) -> None:
    for name in (
        "privacy_subject_keys",
        "privacy_system_keys",
        "privacy_erasure_tombstones",
        "gold_encounters_monthly",
        "gold_clicks_hourly",
        "audit_change_log",
    ):
        config = manifest["nodes"][f"model.gdpr_lakehouse.{name}"]["config"]
        assert config["full_refresh"] is False, name


def test_layers_are_schemas_and_aliases_drop_the_layer(manifest: dict) -> None:
    by_name = {r.name: r for r in relations.delta_relations(manifest)}
    assert (by_name["bronze_patients"].schema, by_name["bronze_patients"].identifier) == (
        "bronze",
        "patients",
    )
    assert by_name["silver_patients"].qualified_name == "`silver`.`patients`"
    assert by_name["gold_patients_by_city"].qualified_name == "`gold`.`patients_by_city`"
    assert by_name["privacy_subject_keys"].qualified_name == "`privacy`.`subject_keys`"
    assert by_name["snapshots_patients"].qualified_name == "`snapshots`.`patients`"
    assert by_name["departments"].schema == "reference"
    # Views and ephemeral checks are not Delta tables.
    assert "privacy_patients_masked" not in by_name
    assert "silver_patients_checked" not in by_name


def test_privacy_meta_is_read_from_the_graph(manifest: dict) -> None:
    for relation in relations.delta_relations(manifest):
        assert relation.privacy.get("on_erasure") in {"delete", "anonymize", "retain"}


def test_health_data_a_source_declares_is_stored_only_encrypted(manifest: dict) -> None:
    """A landing column meta.privacy names special_category (GDPR Art. 9: a diagnosis,
    a department, a cost) is, in every model that reads that source and in every model
    built on one, a special-category column only as `<column>_enc` (ciphertext under
    the subject's key, in pii_columns), never by its own name in any class: a time-travel
    read of such a column in clear would outlive the key's destruction."""
    sources = {
        uid: (node.get("meta") or {}).get("privacy") or {}
        for uid, node in manifest["sources"].items()
    }
    health = {
        column for privacy in sources.values() for column in privacy.get("special_category") or []
    }
    assert {"diagnosis_code", "department_id", "cost"} <= health
    checked = []
    for uid, node in manifest["nodes"].items():
        privacy = (node["config"].get("meta") or {}).get("privacy") or {}
        reads = [
            s
            for s in node.get("depends_on", {}).get("nodes", [])
            if sources.get(s, {}).get("special_category")
        ]
        if (
            node["resource_type"] != "model"
            or not privacy.get("classes")
            or not (reads or node["name"].startswith("silver_"))
        ):
            continue
        declared = {c for columns in privacy["classes"].values() for c in columns}
        for column in health:
            assert column not in declared, f"{uid} keeps {column} in clear"
            if f"{column}_enc" in declared:
                assert f"{column}_enc" in privacy["classes"].get("special_category", []), uid
                assert f"{column}_enc" in privacy["pii_columns"], uid
                checked.append((node["name"], column))
    assert {
        ("bronze_encounters", "department_id"),
        ("silver_encounters", "department_id"),
        ("silver_encounters", "diagnosis_code"),
    } <= set(checked)


def test_personal_data_a_source_declares_never_sits_in_clear_beside_a_pseudonym(
    manifest: dict,
) -> None:
    """A landing column meta.privacy names in pii_columns (a name, an address, and the
    city and insurer, which single a patient out in combination) is, in every model
    that reads that source, every silver model and every snapshot, never a column by
    its own name: only `<column>_enc` (ciphertext under the subject's key, in
    pii_columns) or a value derived from it. A clear copy beside the pseudonym would
    stay readable in every version history keeps after the key is destroyed."""
    sources = {
        uid: (node.get("meta") or {}).get("privacy") or {}
        for uid, node in manifest["sources"].items()
    }
    personal = {
        column for privacy in sources.values() for column in privacy.get("pii_columns") or []
    }
    assert {"full_name", "city", "insurer", "username", "ip_address"} <= personal
    checked = set()
    for uid, node in manifest["nodes"].items():
        privacy = (node["config"].get("meta") or {}).get("privacy") or {}
        reads = [
            s
            for s in node.get("depends_on", {}).get("nodes", [])
            if sources.get(s, {}).get("pii_columns")
        ]
        per_subject = node["resource_type"] == "snapshot" or node["name"].startswith("silver_")
        if (
            node["resource_type"] == "seed"
            or not privacy.get("classes")
            or not (reads or per_subject)
        ):
            continue
        declared = {c.lower() for columns in privacy["classes"].values() for c in columns}
        for column in personal:
            assert column not in declared, f"{uid} keeps {column} in clear"
            if f"{column}_enc" in declared:
                assert f"{column}_enc" in privacy["pii_columns"], uid
                checked.add((node["name"], column))
    assert {
        ("bronze_patients", "city"),
        ("silver_patients", "insurer"),
        ("snapshots_patients", "city"),
    } <= checked


def test_retention_vars_override_the_defaults(dbt: DbtProject) -> None:
    dbt.invoke("parse", "--vars", "{delta_log_retention: 'interval 14 days'}")
    try:
        nodes = dbt.manifest()["nodes"]
        props = nodes["model.gdpr_lakehouse.silver_patients"]["config"]["tblproperties"]
        assert props["delta.logRetentionDuration"] == "interval 14 days"
        assert props["delta.deletedFileRetentionDuration"] == "interval 7 days"
    finally:
        dbt.invoke("parse")


def test_python_jobs_use_the_profiles_spark_settings(lakehouse_dir: Path) -> None:
    raw = yaml.safe_load((ROOT / "profiles.yml").read_text())
    local = raw["gdpr_lakehouse"]["outputs"]["local"]["server_side_parameters"]
    settings = spark.spark_settings()
    assert set(settings) == set(local)
    assert settings["spark.sql.warehouse.dir"] == f"{lakehouse_dir}/warehouse"
    assert settings["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        f"jdbc:derby:;databaseName={lakehouse_dir}/metastore_db;create=true"
    )
    assert settings["spark.sql.extensions"] == (
        "io.delta.sql.DeltaSparkSessionExtension,gdpr_lakehouse.sql.KeyEnvelopeExtension"
    )
    for key, value in local.items():
        if "{{" not in str(value):
            assert settings[key] == str(value), key


def _settings_with(monkeypatch: pytest.MonkeyPatch, name: str, value: str | None) -> dict:
    """The local target's Spark settings with environment variable `name` set to
    `value`, or unset (None)."""
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)
    return spark.spark_settings()


@pytest.mark.parametrize(
    ("value", "whole_stage", "factory"),
    [(None, "false", "NO_CODEGEN"), ("false", "false", "NO_CODEGEN"), ("true", "true", "FALLBACK")],
)
def test_code_generation_is_off_unless_asked_for(
    monkeypatch: pytest.MonkeyPatch, value: str | None, whole_stage: str, factory: str
) -> None:
    """Both halves of Spark's code generation follow LAKEHOUSE_CODEGEN, for dbt's session
    and the jobs' alike (one profile); why: docs/decisions/0002."""
    settings = _settings_with(monkeypatch, "LAKEHOUSE_CODEGEN", value)
    assert settings["spark.sql.codegen.wholeStage"] == whole_stage
    assert settings["spark.sql.codegen.factoryMode"] == factory


@pytest.mark.parametrize(("value", "adaptive"), [(None, "false"), ("true", "true")])
def test_adaptive_query_execution_is_off_unless_asked_for(
    monkeypatch: pytest.MonkeyPatch, value: str | None, adaptive: str
) -> None:
    """Adaptive query execution follows LAKEHOUSE_ADAPTIVE, for dbt's session and the
    jobs' alike (one profile); why: docs/decisions/0006."""
    settings = _settings_with(monkeypatch, "LAKEHOUSE_ADAPTIVE", value)
    assert settings["spark.sql.adaptive.enabled"] == adaptive


# the class archive the venv's hook found (python_jobs.class_archive), its messages off
CLASS_ARCHIVE = " -XX:SharedArchiveFile=/srv/spark-classes.jsa -Xlog:cds*=off"
PROJECT_JVM = " -XX:CompileThresholdScaling=3 -XX:+UseParallelGC" + CLASS_ARCHIVE
BACK_TO_G1 = "-XX:-UseParallelGC -XX:+UseG1GC"


@pytest.mark.parametrize(
    ("value", "ends"),
    [
        (None, PROJECT_JVM),
        ("", PROJECT_JVM),
        ("-XX:CompileThresholdScaling=1", f"{PROJECT_JVM} -XX:CompileThresholdScaling=1"),
        (BACK_TO_G1, f"{PROJECT_JVM} {BACK_TO_G1}"),
    ],
)
def test_the_jvm_flags_come_first_and_java_options_last(
    monkeypatch: pytest.MonkeyPatch, value: str | None, ends: str
) -> None:
    """The driver JVM compiles later than HotSpot's default (docs/decisions/0004) and
    collects with the parallel collector (docs/decisions/0005);
    LAKEHOUSE_JAVA_OPTIONS comes after, so a flag there wins."""
    monkeypatch.setenv("LAKEHOUSE_JVM_CLASS_ARCHIVE", "/srv/spark-classes.jsa")  # the hook's
    if value is None:
        monkeypatch.delenv("LAKEHOUSE_JAVA_OPTIONS", raising=False)
    else:
        monkeypatch.setenv("LAKEHOUSE_JAVA_OPTIONS", value)
    options = spark.spark_settings()["spark.driver.extraJavaOptions"]
    assert options.endswith(ends) and "-Dlog4j2.configurationFile=" in options


@pytest.mark.parametrize(("value", "collector"), [(None, "UseParallelGC"), (BACK_TO_G1, "UseG1GC")])
def test_the_jvm_starts_with_the_project_flags_and_with_the_documented_override(
    monkeypatch: pytest.MonkeyPatch, value: str | None, collector: str
) -> None:
    """A JVM accepts the driver's options as rendered: one collector, never two (a second
    -XX:+Use...GC alone would stop the JVM before Spark starts)."""
    if value is None:
        monkeypatch.delenv("LAKEHOUSE_JAVA_OPTIONS", raising=False)
    else:
        monkeypatch.setenv("LAKEHOUSE_JAVA_OPTIONS", value)
    options = spark.spark_settings()["spark.driver.extraJavaOptions"].split()
    done = subprocess.run(
        ["java", *options, "-XX:+PrintFlagsFinal", "-version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    chosen = {
        line.split()[1]
        for line in done.stdout.splitlines()
        if line.split()[1:2] and line.split()[1].endswith("GC") and "= true" in line
    }
    assert collector in chosen and len(chosen & {"UseParallelGC", "UseG1GC", "UseSerialGC"}) == 1


def test_the_status_store_keeps_only_the_recent_past() -> None:
    """Spark's status store (kept with the UI off) holds 50 SQL executions, 100 jobs and
    stages and 1,000 tasks, not 1,000 / 1,000 / 1,000 / 100,000."""
    settings = spark.spark_settings()
    assert settings["spark.sql.ui.retainedExecutions"] == "50"
    assert settings["spark.ui.retainedJobs"] == settings["spark.ui.retainedStages"] == "100"
    assert settings["spark.ui.retainedTasks"] == "1000"


def test_path_mode_leaves_the_metastore_alone() -> None:
    settings = spark.spark_settings(shared_metastore=False)
    assert settings["spark.sql.catalogImplementation"] == "in-memory"
    assert "spark.hadoop.javax.jdo.option.ConnectionURL" not in settings
    assert settings["spark.sql.warehouse.dir"] == spark.spark_settings()["spark.sql.warehouse.dir"]


def test_relative_state_dir_is_under_the_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKEHOUSE_DIR", ".lakehouse")
    assert project.state_dir() == ROOT / ".lakehouse"
    warehouse = spark.spark_settings()["spark.sql.warehouse.dir"]
    assert warehouse == f"{ROOT}/.lakehouse/warehouse"


def test_missing_env_var_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABRICKS_HOST", raising=False)
    with pytest.raises(project.ProjectError, match="DATABRICKS_HOST"):
        project.profile_target("databricks")
    with pytest.raises(project.ProjectError, match="targets are: databricks, local, thrift, warm"):
        project.profile_target("nope")


def test_delta_jars_match_the_python_package() -> None:
    artifacts = jars.delta_artifacts()
    coordinates = {a.coordinate for a in artifacts}
    installed = version("delta-spark")
    spark = ".".join(version("pyspark").split(".")[:2])
    assert f"io.delta:delta-spark_{spark}_2.13:{installed}" in coordinates
    assert f"io.delta:delta-storage:{installed}" in coordinates
    assert jars.missing(artifacts) == [], "run `make setup` to fetch Delta's jars"


def test_databricks_target_parses_without_secrets_in_the_repo(
    dbt: DbtProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABRICKS_HOST", "adb-0000000000000000.0.azuredatabricks.net")
    monkeypatch.setenv("DATABRICKS_HTTP_PATH", "/sql/1.0/warehouses/0000000000000000")
    monkeypatch.setenv("DBT_ENV_SECRET_DATABRICKS_TOKEN", "dapi-not-a-real-token")
    databricks_target = dbt.target_path.parent / "target-databricks"
    project_ = DbtProject(target_path=databricks_target, log_path=dbt.log_path)
    project_.invoke("parse", "--target", "databricks")
    text = (databricks_target / "manifest.json").read_text()
    assert "dapi-not-a-real-token" not in text
    profile = (ROOT / "profiles.yml").read_text()
    assert "token: \"{{ env_var('DBT_ENV_SECRET_DATABRICKS_TOKEN') }}\"" in profile


def _silver_patients(location_root: str | None) -> relations.DeltaRelation:
    return relations.DeltaRelation(
        "model.gdpr_lakehouse.silver_patients",
        "silver_patients",
        "silver",
        "patients",
        "model",
        location_root=location_root,
    )


@pytest.mark.parametrize(
    ("location_root", "expected"),
    [
        (None, "/wh/silver.db/patients"),
        ("/lake/silver", "/lake/silver/patients"),
        ("file:/lake/silver", "/lake/silver/patients"),
        ("file:///lake/silver", "/lake/silver/patients"),
    ],
)
def test_jobs_find_external_tables_where_dbt_put_them(
    location_root: str | None, expected: str
) -> None:
    assert _silver_patients(location_root).path(Path("/wh")) == Path(expected)


@pytest.mark.parametrize(
    "location_root",
    ["abfss://lake@acct.dfs.core.windows.net/gdpr/silver", "lake/silver", "s3://b/silver"],
)
def test_a_table_not_on_this_machine_is_refused_by_name(location_root: str) -> None:
    relation = _silver_patients(location_root)
    with pytest.raises(
        project.ProjectError,
        match=r"silver\.patients is stored at .* allowed are an absolute path or a file: URI",
    ):
        relation.path(Path("/wh"))


def test_delta_jars_leave_out_what_spark_ships() -> None:
    jars.check_excludes()  # every excluded module is one pyspark ships
    modules = {f"{a.group}:{a.name}" for a in jars.delta_artifacts()}
    assert not modules & jars.excluded_modules()
    assert not any(m.startswith(("org.apache.hadoop:", "org.apache.parquet:")) for m in modules)
    assert {"io.delta:delta-kernel-api", "io.unitycatalog:unitycatalog-client"} <= modules


def test_the_profile_names_exactly_the_jars_deltas_poms_need(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """profiles.yml names Delta's jars by path (no Ivy at start): the list is exactly
    the POMs' closure; one missing, or a path outside ~/.m2, is refused by name."""
    walked = jars.delta_artifacts()
    jars.check_declared(walked)  # make setup ran: the POMs are in ~/.m2
    settings = project.engine_spark_parameters()
    assert "spark.jars.packages" not in settings
    listed = settings["spark.jars"].split(",")
    assert sorted(listed) == sorted(str(a.jar) for a in walked)
    monkeypatch.setattr(
        jars, "_profile_settings", lambda: {**settings, "spark.jars": ",".join(listed[:-1])}
    )
    with pytest.raises(project.ProjectError, match=r"missing .*:.*; not needed none"):
        jars.check_declared(walked)
    monkeypatch.setattr(
        jars, "_profile_settings", lambda: {**settings, "spark.jars": "/opt/jars/delta.jar"}
    )
    with pytest.raises(project.ProjectError, match=r"names /opt/jars/delta\.jar, not a jar in"):
        jars.delta_package()


def test_a_delta_jar_built_for_another_spark_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    real = version

    def other_spark(name: str) -> str:
        return "4.1.1" if name == "pyspark" else real(name)

    monkeypatch.setattr(jars, "version", other_spark)
    with pytest.raises(
        project.ProjectError, match=r"built for Spark 4\.2.*use io\.delta:delta-spark_4\.1_2\.13"
    ):
        jars.delta_package()


def test_a_retried_merge_conflict_prints_no_stack_trace_and_nothing_else_is_hidden() -> None:
    """Delta logs a MERGE's lost write conflict at ERROR, with the stack trace, before it
    throws it; gdpr_erase retries it. conf/log4j2.properties drops exactly that line
    (log4j's RegexFilter matches the whole message) and nothing else of the logger."""
    lines = (ROOT / "conf" / "log4j2.properties").read_text().splitlines()
    settings = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition("=") for line in lines)
        if key.strip() and not key.startswith("#")
    )
    prefix = "logger.merge_retry."
    assert settings[f"{prefix}name"] == "org.apache.spark.sql.delta.commands.MergeIntoCommand"
    assert settings[f"{prefix}filter.rethrown.type"] == "RegexFilter"
    assert settings[f"{prefix}filter.rethrown.onMatch"] == "DENY"
    assert settings[f"{prefix}filter.rethrown.onMismatch"] == "NEUTRAL"
    assert f"{prefix}level" not in settings  # its warnings still show
    regex = re.compile(settings[f"{prefix}filter.rethrown.regex"])
    # Delta 4.x, MergeIntoMaterializeSource.runWithMaterializedSourceLostHandler
    assert regex.fullmatch("Fatal error in MERGE with materialized source in attempt 1")
    assert not regex.fullmatch(
        "Exhausted retries after 4 attempts in MERGE with materialized source."
    )


def test_jars_by_path_replaces_a_coordinate_and_is_idempotent() -> None:
    """An adopter's spark.jars.packages becomes the same jars by path, on the driver's
    class path too; applied twice (the engine, then its session) nothing doubles."""
    from python_jobs.spark import jars_by_path

    paths = [str(a.jar) for a in jars.delta_artifacts()]
    adopter = {
        "spark.jars.packages": jars.delta_package().coordinate,
        "spark.jars.excludes": ",".join(sorted(jars.SPARK_SHIPS)),
        "spark.driver.extraClassPath": "/opt/hive.jar",
    }
    once = jars_by_path(adopter)
    assert "spark.jars.packages" not in once and "spark.jars.excludes" not in once
    assert once["spark.jars"].split(",") == paths
    assert once["spark.driver.extraClassPath"].split(os.pathsep) == [*paths, "/opt/hive.jar"]
    assert jars_by_path(once) == once
    engine = jars_by_path(project.engine_spark_parameters())
    assert sorted(engine["spark.jars"].split(",")) == sorted(paths)
    # this project's jar (the local file system) stays on the driver's class path
    assert str(jars.OWN.jar) in engine["spark.driver.extraClassPath"].split(os.pathsep)


def test_the_project_jar_is_built_from_its_sources_and_a_stale_one_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """make setup compiles jvm/src (the local file system the profile names) against
    pyspark's Hadoop into the local Maven repository; a jar built from other sources
    is stale (the next test: every session start refuses it, by name)."""
    sources = tmp_path / "src"
    shutil.copytree(jars.OWN_SOURCES, sources)
    monkeypatch.setattr(jars, "OWN_SOURCES", sources)
    monkeypatch.setattr(jars, "M2_REPOSITORY", tmp_path / "m2")
    assert not jars.own_jar_current()  # none built yet
    jars.build_own_jar()
    assert jars.OWN.jar.is_relative_to(tmp_path / "m2")
    assert jars.own_jar_current()
    with zipfile.ZipFile(jars.OWN.jar) as jar:
        names = set(jar.namelist())
    assert {
        f"gdpr_lakehouse/hadoop/{name}.class"
        for name in ("NioRawLocalFileSystem", "NioLocalFileSystem", "NioRawLocalFs", "NioLocalFs")
    } <= names
    java = sources / "gdpr_lakehouse" / "hadoop" / "NioLocalFs.java"
    java.write_text(java.read_text() + "\n// changed\n")
    assert not jars.own_jar_current()


def test_a_session_refuses_a_stale_project_jar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jars, "own_jar_current", lambda: False)
    with pytest.raises(
        project.ProjectError, match=r"gdpr-lakehouse-hadoop-1\.jar .*run `make setup`"
    ):
        jars.require_delta_jars()
    from python_jobs.spark import build_session

    with pytest.raises(project.ProjectError, match=r"older than its sources"):
        build_session(project.engine_spark_parameters())


@pytest.mark.parametrize(
    "master, file_system, file_context",
    [
        (None, "gdpr_lakehouse.hadoop.NioLocalFileSystem", "gdpr_lakehouse.hadoop.NioLocalFs"),
        (
            "local[1]",
            "gdpr_lakehouse.hadoop.NioLocalFileSystem",
            "gdpr_lakehouse.hadoop.NioLocalFs",
        ),
        # a cluster's executors have no such jar: Hadoop's own classes
        (
            "spark://127.0.0.1:7077",
            "org.apache.hadoop.fs.LocalFileSystem",
            "org.apache.hadoop.fs.local.LocalFs",
        ),
    ],
)
def test_the_project_local_file_system_only_with_a_local_master(
    monkeypatch: pytest.MonkeyPatch, master: str | None, file_system: str, file_context: str
) -> None:
    settings = _settings_with(monkeypatch, "LAKEHOUSE_SPARK_MASTER", master)
    assert settings["spark.hadoop.fs.file.impl"] == file_system
    assert settings["spark.hadoop.fs.AbstractFileSystem.file.impl"] == file_context


@pytest.mark.parametrize(
    ("master", "authenticate"),
    [(None, "true"), ("local[1]", "true"), ("spark://127.0.0.1:7077", "false")],
)
def test_spark_s_own_ports_authenticate_where_spark_makes_the_secret(
    monkeypatch: pytest.MonkeyPatch, master: str | None, authenticate: str
) -> None:
    """tests/adversarial/test_spark_ports.py holds the local session to it."""
    settings = _settings_with(monkeypatch, "LAKEHOUSE_SPARK_MASTER", master)
    assert settings["spark.authenticate"] == authenticate


@pytest.mark.parametrize(
    ("overlay", "authenticate"),
    [
        ({"spark.master": "spark://10.0.0.5:7077"}, "false"),  # no secret: Spark's default
        ({"spark.master": "spark://10.0.0.5:7077", "spark.authenticate.secret": "s"}, "true"),
        ({"spark.master": "yarn"}, "true"),  # YARN makes the secret, as a local master
    ],
)
def test_an_adopters_cluster_session_authenticates_only_with_a_secret(
    monkeypatch: pytest.MonkeyPatch, overlay: dict[str, str], authenticate: str
) -> None:
    engine = project.engine_spark_parameters()
    monkeypatch.setattr(spark, "spark_parameters", lambda: {**engine, **overlay})
    assert spark.spark_settings()["spark.authenticate"] == authenticate


@pytest.mark.parametrize(
    "overlay",
    [
        {"spark.master": "spark://10.0.0.5:7077"},  # an adopter's cluster master
        {"spark.driver.extraClassPath": "/opt/adopter.jar"},  # the jar's class path replaced
    ],
)
def test_a_session_that_cannot_load_the_project_file_system_keeps_hadoops(
    monkeypatch: pytest.MonkeyPatch, overlay: dict[str, str]
) -> None:
    """The jobs take an adopter's session target over the engine's settings: where the
    project's classes could not load, Hadoop's own are set, not a ClassNotFoundException
    at the first file."""
    engine = project.engine_spark_parameters()
    monkeypatch.setattr(spark, "spark_parameters", lambda: {**engine, **overlay})
    settings = spark.spark_settings()
    assert {key: settings[key] for key in spark.HADOOP_LOCAL_FS} == spark.HADOOP_LOCAL_FS
    monkeypatch.setattr(spark, "spark_parameters", lambda: dict(engine))
    assert spark.spark_settings()["spark.hadoop.fs.file.impl"].startswith("gdpr_lakehouse.")


def test_private_folders_and_files_are_their_owners_only(tmp_path: Path) -> None:
    """private_folder makes each missing level 700 and narrows the folder itself, never
    a parent that was there; open_private makes a file 600 and narrows an older wider
    one it truncates, whatever the process umask."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    old = os.umask(0o022)
    try:
        folder = project.private_folder(shared / "lakehouse" / "reports")
        (shared / "wide").mkdir()
        (shared / "wide").chmod(0o775)
        project.private_folder(shared / "wide")
        project.private_folder(shared, narrow=False)  # an operator's folder, left as it is
        (folder / "old.csv").write_text("subject")
        (folder / "old.csv").chmod(0o644)
        with project.open_private(folder / "old.csv", "w") as out:
            out.write("id")
        with project.open_private(folder / "new.bin") as out:
            out.write(b"x")
    finally:
        os.umask(old)
    modes = {
        str(path.relative_to(tmp_path)): stat.S_IMODE(path.stat().st_mode)
        for path in [shared, *shared.rglob("*")]
    }
    assert modes == {
        "shared": 0o755,
        "shared/lakehouse": 0o700,
        "shared/lakehouse/reports": 0o700,
        "shared/lakehouse/reports/old.csv": 0o600,
        "shared/lakehouse/reports/new.bin": 0o600,
        "shared/wide": 0o700,
    }
    assert (folder / "old.csv").read_text() == "id"
