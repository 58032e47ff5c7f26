"""Azure Databricks, as far as it can be proven offline: dbt-databricks parses the
project and renders the `databricks__` macros (no workspace, no connection), and the
cluster/metastore settings render for the Spark cluster target."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from python_jobs import jars, project, relations, spark
from tests.dbt_harness import DbtProject

LAKE = "abfss://lake@gdprlakehouse.dfs.core.windows.net/gdpr"


@pytest.fixture()
def databricks(dbt: DbtProject, monkeypatch: pytest.MonkeyPatch) -> Iterator[DbtProject]:
    monkeypatch.setenv("DATABRICKS_HOST", "adb-0000000000000000.0.azuredatabricks.net")
    monkeypatch.setenv("DATABRICKS_HTTP_PATH", "/sql/1.0/warehouses/0000000000000000")
    monkeypatch.setenv("DBT_ENV_SECRET_DATABRICKS_TOKEN", "dapi-not-a-real-token")
    yield DbtProject(
        target_path=dbt.target_path.parent / "target-databricks", log_path=dbt.log_path
    )


def _render(project_: DbtProject, jinja: str, *vars_: str) -> str:
    args = ["compile", "--no-populate-cache", "--target", "databricks"]
    if vars_:
        args += ["--vars", vars_[0]]
    result = project_.invoke(*args, "--inline", jinja)
    return result.result.results[0].node.compiled_code.strip()


def test_masked_views_ask_unity_catalog_for_group_membership(databricks: DbtProject) -> None:
    assert _render(databricks, "{{ gdpr_lakehouse.is_pii_reader() }}") == (
        "is_account_group_member('pii_readers')"
    )
    sql = _render(
        databricks,
        "{{ gdpr_lakehouse.reveal_pii('email_enc', 'k', mask='email') }}",
        "{pii_reader_group: clinicians}",
    )
    assert "when is_account_group_member('clinicians') then" in sql
    assert "try_aes_decrypt(email_enc, k, 'GCM')" in sql
    assert "regexp_replace(" in sql


def test_the_key_encryption_key_is_a_secret_never_in_sql(databricks: DbtProject) -> None:
    sql = _render(databricks, "{{ gdpr_lakehouse.wrap_key('data_key') }}", "{key_envelope: true}")
    assert sql == "aes_encrypt(data_key, unhex(secret('gdpr_lakehouse', 'kek')), 'GCM')"
    sql = _render(
        databricks,
        "{{ gdpr_lakehouse.unwrap_key('stored') }}",
        "{key_envelope: true, kek_secret_scope: kv-hospital, kek_secret_key: lakehouse-kek}",
    )
    assert sql == "aes_decrypt(stored, unhex(secret('kv-hospital', 'lakehouse-kek')), 'GCM')"
    # the masked views: a consumer without READ on the scope gets masked values
    sql = _render(
        databricks,
        "{{ gdpr_lakehouse.unwrap_key('stored', required=false) }}",
        "{key_envelope: true}",
    )
    assert sql == "try_aes_decrypt(stored, unhex(try_secret('gdpr_lakehouse', 'kek')), 'GCM')"


@pytest.mark.parametrize(
    ("vars_", "message"),
    [
        ("{pii_reader_group: \"x') or true or ('\"}", "is not a group name"),
        ("{key_envelope: true, kek_secret_scope: \"a', 'b\"}", "is not a secret scope or key name"),
    ],
)
def test_names_that_would_escape_the_sql_are_refused(
    databricks: DbtProject, vars_: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    jinja = "{{ gdpr_lakehouse.is_pii_reader() }}{{ gdpr_lakehouse.wrap_key('k') }}"
    result = databricks.invoke(
        "compile", "--no-populate-cache", "--target", "databricks", "--vars", vars_,
        "--inline", jinja, expect_success=False,
    )  # fmt: skip
    assert not result.success
    assert message in str(result.exception) + capsys.readouterr().out


def test_lake_root_puts_every_layer_on_adls(databricks: DbtProject) -> None:
    """Every Delta table the graph declares (models, snapshots, seeds) under its layer."""
    databricks.invoke("parse", "--target", "databricks", "--vars", json.dumps({"lake_root": LAKE}))
    tables = relations.delta_relations(databricks.manifest())
    assert {r.resource_type for r in tables} == {"model", "snapshot", "seed"}
    assert {r.name: r.location_root for r in tables} == {
        r.name: f"{LAKE}/{r.schema}" for r in tables
    }
    assert {r.schema for r in tables} >= {"bronze", "silver", "gold", "privacy", "snapshots"}
    databricks.invoke("parse", "--target", "databricks")
    assert {
        node["config"].get("location_root") for node in databricks.manifest()["nodes"].values()
    } == {None}


def test_the_cluster_metastore_renders_a_network_derby(monkeypatch: pytest.MonkeyPatch) -> None:
    url_key, driver_key = spark.METASTORE_KEYS
    monkeypatch.delenv("LAKEHOUSE_METASTORE_URL", raising=False)
    local = spark.spark_settings()
    assert local[url_key].startswith("jdbc:derby:;databaseName=")
    assert local[driver_key] == "org.apache.derby.jdbc.EmbeddedDriver"
    assert "spark.driver.extraClassPath" not in local
    monkeypatch.setenv("LAKEHOUSE_METASTORE_URL", "jdbc:derby://127.0.0.1:1527/metastore_db")
    cluster = spark.spark_settings()
    assert cluster[driver_key] == "org.apache.derby.jdbc.ClientDriver"
    assert "derbyclient" in cluster["spark.driver.extraClassPath"]
    assert jars.missing(jars.cluster_artifacts()) == [], "run `make setup`"
    assert project.profile_target("thrift")["method"] == "thrift"
