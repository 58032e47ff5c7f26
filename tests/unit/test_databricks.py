"""Azure Databricks, as far as it can be proven offline: dbt-databricks parses the
project and renders the `databricks__` macros (no workspace, no connection), and the
cluster/metastore settings render for the Spark cluster target."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from python_jobs import jars, project, relations, spark
from tests.dbt_harness import DbtProject
from tests.jinja_harness import Jinja

LAKE = "abfss://lake@gdprlakehouse.dfs.core.windows.net/gdpr"


@pytest.fixture()
def databricks(dbt: DbtProject, monkeypatch: pytest.MonkeyPatch) -> Iterator[DbtProject]:
    monkeypatch.setenv("DATABRICKS_HOST", "adb-0000000000000000.0.azuredatabricks.net")
    monkeypatch.setenv("DATABRICKS_HTTP_PATH", "/sql/1.0/warehouses/0000000000000000")
    monkeypatch.setenv("DBT_ENV_SECRET_DATABRICKS_TOKEN", "dapi-not-a-real-token")
    yield DbtProject(
        target_path=dbt.target_path.parent / "target-databricks", log_path=dbt.log_path
    )


def _render_on_dbt(project_: DbtProject, source: str, *vars_: str) -> str:
    """`source` rendered by dbt-databricks itself (a full parse for the target)."""
    args = ["compile", "--no-populate-cache", "--target", "databricks"]
    if vars_:
        args += ["--vars", vars_[0]]
    result = project_.invoke(*args, "--inline", source)
    return result.result.results[0].node.compiled_code.strip()


def _render(jinja: Jinja, source: str, *vars_: str) -> str:
    """`source` rendered for the databricks target (plain Jinja: databricks__, then
    spark__, as dbt-databricks dispatches; the last test proves that order on dbt)."""
    return jinja.with_vars(vars_[0] if vars_ else None, "databricks").compile_inline(source)


def test_masked_views_ask_unity_catalog_for_group_membership(jinja: Jinja) -> None:
    assert _render(jinja, "{{ gdpr_lakehouse.is_pii_reader() }}") == (
        "is_account_group_member('pii_readers')"
    )
    sql = _render(
        jinja,
        "{{ gdpr_lakehouse.reveal_pii('email_enc', 'k', 'p', 'email_enc', mask='email') }}",
        "{pii_reader_group: clinicians}",
    )
    assert "when is_account_group_member('clinicians') then" in sql
    # the stored key opened with the scope's key: NULL for a consumer without READ on it
    assert (
        "try_aes_decrypt(email_enc, try_aes_decrypt(k, unhex(try_secret('gdpr_lakehouse', "
        "'kek')), 'GCM', 'DEFAULT', encode(concat('subject/', p), 'utf-8')), 'GCM', 'DEFAULT', "
        "encode(concat(p, '/email_enc'), 'utf-8'))" in sql
    )
    assert "regexp_replace(" in sql


def test_the_key_encryption_key_is_a_secret_never_in_sql(jinja: Jinja) -> None:
    subject = "encode(concat('subject/', p), 'utf-8')"
    bound = "encode(concat(p, '/email_enc'), 'utf-8')"
    sql = _render(
        jinja,
        "{{ gdpr_lakehouse.wrap_key('data_key', gdpr_lakehouse.key_binding('p')) }}",
        "{key_envelope: true}",
    )
    assert sql == (
        f"aes_encrypt(data_key, unhex(secret('gdpr_lakehouse', 'kek')), 'GCM', 'DEFAULT', x'', {subject})"
    )
    sql = _render(
        jinja,
        "{{ gdpr_lakehouse.encrypt_pii('v', 'stored', 'p', 'email_enc') }}",
        "{key_envelope: true, kek_secret_scope: kv-hospital, kek_secret_key: lakehouse-kek}",
    )
    assert sql == (
        "aes_encrypt(encode(cast(v as string), 'utf-8'), "
        "aes_decrypt(stored, unhex(secret('kv-hospital', 'lakehouse-kek')), 'GCM', 'DEFAULT', "
        f"{subject}), 'GCM', 'DEFAULT', x'', {bound})"
    )
    # the masked views: a consumer without READ on the scope gets masked values
    sql = _render(
        jinja,
        "{{ gdpr_lakehouse.decrypt_pii('c', 'stored', 'p', 'email_enc', required=false) }}",
        "{key_envelope: true}",
    )
    assert sql == (
        "cast(try_aes_decrypt(c, try_aes_decrypt(stored, "
        f"unhex(try_secret('gdpr_lakehouse', 'kek')), 'GCM', 'DEFAULT', {subject}), 'GCM', "
        f"'DEFAULT', {bound}) as string)"
    )
    assert _render(jinja, "{{ gdpr_lakehouse._key_opens('k', 'b') }}", "{key_envelope: true}") == (
        "(try_aes_decrypt(k, unhex(try_secret('gdpr_lakehouse', 'kek')), 'GCM', 'DEFAULT', b) "
        "is not null)"
    )


@pytest.mark.parametrize(
    ("vars_", "message"),
    [
        ("{pii_reader_group: \"x') or true or ('\"}", "is not a group name"),
        ("{key_envelope: true, kek_secret_scope: \"a', 'b\"}", "is not a secret scope or key name"),
    ],
)
def test_names_that_would_escape_the_sql_are_refused(
    jinja: Jinja, vars_: str, message: str
) -> None:
    source = "{{ gdpr_lakehouse.is_pii_reader() }}{{ gdpr_lakehouse.wrap_key('k', 'b') }}"
    success, errors = jinja.with_vars(vars_, "databricks").compile_errors(source)
    assert not success
    assert message in errors


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


def test_dbt_databricks_falls_back_to_the_spark_implementation(databricks: DbtProject) -> None:
    """The engine's macros are dispatch stubs with spark__ implementations; dbt-databricks
    searches databricks__, then spark__ (its parent adapter), so both need only spark__.
    (Right after the test before: its last parse had the same target and vars, so this
    compile parses nothing again.)"""
    assert _render_on_dbt(databricks, "{{ gdpr_lakehouse.pseudonym('k', 'id') }}") == (
        "sha2(concat(k, encode(id, 'utf-8')), 256)"
    )
    # and a databricks__ implementation, where there is one, wins over spark__
    assert _render_on_dbt(databricks, "{{ gdpr_lakehouse.is_pii_reader() }}").startswith(
        "is_account_group_member("
    )


def test_the_cluster_metastore_renders_a_network_derby(monkeypatch: pytest.MonkeyPatch) -> None:
    url_key, driver_key = spark.METASTORE_KEYS
    monkeypatch.delenv("LAKEHOUSE_METASTORE_URL", raising=False)
    local = spark.spark_settings()
    assert local[url_key].startswith("jdbc:derby:;databaseName=")
    assert local[driver_key] == "org.apache.derby.jdbc.EmbeddedDriver"
    # profiles.yml: Delta's jars, then this project's, as the jobs' sessions have them
    # (spark.jars_by_path), so one class archive serves both (python_jobs.class_archive)
    delta_then_own = [*(str(a.jar) for a in jars.delta_artifacts()), str(jars.OWN.jar)]
    assert local["spark.driver.extraClassPath"].split(os.pathsep) == delta_then_own
    monkeypatch.setenv("LAKEHOUSE_METASTORE_URL", "jdbc:derby://127.0.0.1:1527/metastore_db")
    cluster = spark.spark_settings()
    assert cluster[driver_key] == "org.apache.derby.jdbc.ClientDriver"
    assert cluster["spark.driver.extraClassPath"].startswith(
        os.pathsep.join(delta_then_own) + os.pathsep
    )
    assert "derbyclient" in cluster["spark.driver.extraClassPath"]
    assert jars.missing(jars.cluster_artifacts()) == [], "run `make setup`"
    assert project.profile_target("thrift")["method"] == "thrift"


def _grants(project_: DbtProject) -> dict[str, dict]:
    return {
        node["name"]: node["config"].get("grants") or {}
        for node in project_.manifest()["nodes"].values()
        if node["resource_type"] in ("model", "seed", "snapshot")
        and node["config"].get("materialized") != "ephemeral"
    }


def test_consumers_are_granted_only_gold_and_the_masked_views(databricks: DbtProject) -> None:
    """Attack class: access control that is only cosmetic. On Databricks dbt grants
    SELECT per layer: consumer groups read gold and the masked views; every other
    relation (bronze, silver, the vault, the control tables, audit, snapshots, seeds)
    is granted to nobody, so dbt revokes any direct grant a person added by hand and
    only the pipeline's principal (the owner) reads it."""
    databricks.invoke(
        "parse", "--target", "databricks",
        "--vars", "{consumer_groups: [analysts, finance], pii_reader_group: clinicians}",
    )  # fmt: skip
    grants = _grants(databricks)
    published = {name for name, grant in grants.items() if grant.get("select")}
    assert published == {name for name in grants if name.startswith("gold_")} | {
        "privacy_patients_masked",
        "privacy_users_masked",
    }
    assert grants["gold_patients_by_city"] == {"select": ["analysts", "finance"]}
    assert grants["privacy_patients_masked"] == {"select": ["analysts", "finance", "clinicians"]}
    for name in ("bronze_patients", "silver_patients", "privacy_subject_keys",
                 "privacy_system_keys", "privacy_erasure_requests", "audit_change_log"):  # fmt: skip
        assert grants[name] == {"select": []}, name
    assert all(grant == {"select": []} for name, grant in grants.items() if name not in published)


def test_grants_are_databricks_only(dbt: DbtProject) -> None:
    """Open-source Spark has no SHOW GRANTS: on local and thrift no grants are
    configured (there is no security boundary there; docs/guides/deploy.md)."""
    dbt.invoke("parse")
    assert set(map(json.dumps, _grants(dbt).values())) == {"{}"}


def test_a_pii_relation_granted_to_a_consumer_fails_compliance(databricks: DbtProject) -> None:
    """The compliance check asks Unity Catalog (information_schema.table_privileges,
    inherited grants included) for any privilege a consumer group or the PII reader
    group holds on a relation outside gold and the masked views; a row is a failure."""
    sql = _render_on_dbt(
        databricks,
        "{{ gdpr_lakehouse.consumer_grants_on_restricted_sql() }}",
        # the vars of the test before: dbt parses the project again for new vars
        "{consumer_groups: [analysts, finance], pii_reader_group: clinicians}",
    )
    assert "from system.information_schema.table_privileges" in sql
    assert "grantee in ('analysts', 'finance', 'clinicians')" in sql
    for relation in ("'main.bronze.patients'", "'main.privacy.subject_keys'",
                     "'main.silver.patients'", "'main.snapshots.patients'"):  # fmt: skip
        assert relation in sql, relation
    for published in ("'main.gold.patients_by_city'", "'main.privacy.patients_masked'"):
        assert published not in sql, published


@pytest.mark.parametrize(
    "vars_",
    [
        '{consumer_groups: ["a`; drop table x; --"]}',
        "{consumer_groups: []}",
        "{consumer_groups: analysts}",
    ],
    ids=["backtick", "empty", "not-a-list"],
)
def test_consumer_groups_must_be_a_list_of_group_names(jinja: Jinja, vars_: str) -> None:
    success, errors = jinja.with_vars(vars_, "databricks").compile_errors(
        "{{ gdpr_lakehouse.consumer_grants_on_restricted_sql() }}"
    )
    assert not success
    assert "consumer_groups" in errors
