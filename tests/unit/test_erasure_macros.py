"""Unit layer for erasure: the plan read from the graph, the batched SQL, argument checks.

Rendered in plain Jinja (tests/jinja_harness.py), no dbt, no warehouse connection, no JVM:
the plan without the savepoints' copies, which only a warehouse lists
(tests/functional/test_business_time.py erases from them).
"""

from __future__ import annotations

import json

import pytest

from tests.jinja_harness import Jinja

PLAN = (
    "{% set steps = [] %}{% for s in gdpr_lakehouse.erasure_plan(savepoints=false) %}"
    "{% do steps.append({'relation': s.relation_name, 'action': s.action, 'key': s.key, "
    "'kind': s.key_kind, 'type': s.subject_type, 'depth': s.depth}) %}{% endfor %}"
    "{{ tojson(steps) }}"
)


@pytest.fixture(scope="module")
def plan(jinja: Jinja) -> list[dict]:
    return json.loads(jinja.compile_inline(PLAN))


def test_plan_covers_every_subject_relation_in_dag_order(plan: list[dict]) -> None:
    relations = [step["relation"] for step in plan]
    assert relations[-1] == "privacy.subject_keys" and plan[-1]["action"] == "shred"
    layers = [r.split(".")[0] for r in relations[:-1]]
    assert set(layers) == {"bronze", "silver", "gold", "snapshots"}
    assert max(i for i, layer in enumerate(layers) if layer == "bronze") < min(
        i for i, layer in enumerate(layers) if layer != "bronze"
    )
    assert relations.index("silver.patients") < relations.index("snapshots.patients")
    assert relations.index("silver.clicks") < relations.index("gold.clicks_by_user")
    depths = [step["depth"] for step in plan[:-1]]
    assert depths == sorted(depths)
    # anonymous aggregates and control tables are left alone
    for kept in (
        "gold.encounters_monthly",
        "gold.clicks_hourly",
        "gold.patients_by_city",
        "privacy.erasure_requests",
    ):
        assert kept not in relations
    actions = {step["relation"]: step["action"] for step in plan}
    assert actions["bronze.orders"] == "anonymize" and actions["bronze.patients"] == "delete"


def test_batched_statements_are_one_merge_per_relation(jinja: Jinja) -> None:
    sql = jinja.compile_inline(
        "{% for s in gdpr_lakehouse.erasure_plan(savepoints=false) if s.relation_name in ('bronze.orders', 'silver.patients') %}"
        "{{ gdpr_lakehouse._erase_sql(s, 'select * from batch_view') }}@@{% endfor %}"
    )
    orders, patients = (part.strip() for part in sql.split("@@") if part.strip())
    assert orders.startswith("merge into bronze.orders as target")
    assert "when matched then update set" in orders and "target.`user_pseudonym` = null" in orders
    assert "delete" not in orders
    # the order's id, a direct identifier, is anonymized with the tombstone key, read
    # once into the MERGE's source (bronze stores it anonymous already: it stays as it
    # is; an adopter's table may hold the source's id)
    assert (
        "target.`order_ref` = case when cast(target.`order_ref` as string) rlike '^anon-[0-9a-f]{64}$'"
        in orders
    )
    assert "concat('anon-', gdpr_keyed_hash(erase.record_salt, " in orders
    assert "key_name = 'tombstone') as record_salt" in orders
    assert "record_salt" not in patients
    assert patients.startswith("merge into silver.patients as target")
    assert "on target.`patient_pseudonym` = erase.erase_key" in patients
    assert "subject_type = 'patient'" in patients
    assert "when matched then delete" in patients
    # the batch's keys are broadcast: no shuffle of the whole target (bench/run.py)
    for statement in (orders, patients):
        assert "using (\n    select /*+ BROADCAST */ distinct erase_key" in statement


def test_conflict_retry_catches_only_delta_conflicts(jinja: Jinja) -> None:
    sql = jinja.compile_inline(
        "{{ gdpr_lakehouse._conflict_retry_script('delete from t where id = 1', 3) }}"
    )
    assert "declare exit handler for sqlstate '2D521'" in sql
    assert "while not done and attempt < 3 do" in sql
    assert sql.count("delete from t where id = 1") == 1


@pytest.mark.parametrize(
    "ids,message",
    [
        ("'P0000001'", "must be a list"),
        ("[]", "is empty"),
        ("[\"P1' OR '1'='1\"]", "is not a subject id"),
        ("['a' * 65]", "is not a subject id"),
        ("[' P0000001']", "is not a subject id"),
        ("[42]", "not a string"),
    ],
)
def test_subject_ids_are_validated(jinja: Jinja, ids: str, message: str) -> None:
    success, errors = jinja.compile_errors(
        f"{{{{ gdpr_lakehouse._validate_subject_ids({ids}) }}}}",
    )
    assert not success
    assert message in errors


def test_valid_ids_are_deduplicated(jinja: Jinja) -> None:
    sql = jinja.compile_inline(
        "{{ tojson(gdpr_lakehouse._validate_subject_ids(['P0000001', 'U-2', 'P0000001'])) }}"
    )
    assert json.loads(sql) == ["P0000001", "U-2"]


def test_short_vacuum_retention_needs_the_opt_in(jinja: Jinja) -> None:
    success, errors = jinja.compile_errors(
        "{{ gdpr_lakehouse.spark__vacuum_relation('bronze.patients', 0) }}",
    )
    assert not success
    assert "vacuum_allow_short_retention" in errors


@pytest.mark.parametrize("hours", ["0.5", "167.9", "-1", "87601", "'24'", "true"])
def test_vacuum_retention_is_a_whole_number_of_hours(jinja: Jinja, hours: str) -> None:
    """A fractional retention is refused, never truncated: `retain 0.5` rendered
    `retain 0 hours`, deleting every removed file, and the purge job rounded the same
    0.5 up to 1 h (one rule, the macro's, for both)."""
    success, errors = jinja.with_vars({"vacuum_allow_short_retention": True}).compile_errors(
        f"{{{{ gdpr_lakehouse.spark__vacuum_relation('bronze.patients', {hours}) }}}}",
    )
    assert not success, "a fractional retention was accepted"
    assert "must be a whole number of hours from 0 to 87600" in errors


def test_free_text_keeps_quotes_escaped(jinja: Jinja) -> None:
    sql = jinja.compile_inline(
        "{{ gdpr_lakehouse._sql_string(gdpr_lakehouse._validate_text(\"patient's letter; «Art. 17»\", 'reason')) }}"
    )
    assert sql == "'patient\\'s letter; «Art. 17»'"


@pytest.mark.parametrize("text", ["two\\nlines", "back\\\\slash", "   "])
def test_free_text_rejects_control_characters_and_backslashes(jinja: Jinja, text: str) -> None:
    success, errors = jinja.compile_errors(
        f"{{{{ gdpr_lakehouse._validate_text('{text}', 'reason') }}}}",
    )
    assert not success
    assert "reason" in errors and "is not allowed" in errors


def test_the_sweep_counts_only_relations_a_subject_of_the_batch_is_typed_for() -> None:
    """gdpr_erase's sweep (no JVM): a relation keyed by another subject type than every
    subject of the batch had no key to erase and nothing written; its count would scan
    the whole relation for an empty key set, so it is not issued. A relation that was
    written, and whose newest commit cannot be shown to be the erasure, is counted."""
    from types import SimpleNamespace

    from python_jobs import macros as engine_macros

    statements: list[str] = []

    def run_query(sql: str) -> list:
        statements.append(sql)
        return []  # nothing came back: the sweep's one round ends

    adapter = SimpleNamespace(quote=lambda name: f"`{name}`")
    macros = engine_macros.Macros({"run_query": run_query, "adapter": adapter})
    adapter.dispatch = macros._dispatch

    def step(schema: str, identifier: str, key: str, subject_type: str) -> dict:
        return {
            "relation": f"{schema}.{identifier}",
            "relation_name": f"{schema}.{identifier}",
            "key": key,
            "key_kind": "id",
            "subject_type": subject_type,
            "action": "delete",
        }

    written = {
        "step": step("bronze", "patients", "patient_id", "patient"),
        "status": "erased",
        "applies": True,
        "attempts": 1,
        "versions": [],
    }
    other_type = {
        "step": step("bronze", "clicks", "user_id", "user"),
        "status": "erased",
        "applies": False,
        "attempts": 0,
        "versions": [],
    }
    ctx = {"requests": "privacy.erasure_requests"}
    swept = macros._sweep([written, other_type], ctx)
    assert swept == [written, other_type]
    counts = [sql for sql in statements if "left_rows" in sql]
    assert len(counts) == 1
    assert "from bronze.patients as target" in counts[0]
    assert "bronze.clicks" not in counts[0]


class _Result:
    """A run_query result: rows by position, and columns[0].values()."""

    def __init__(self, rows: list[tuple]) -> None:
        self.rows = rows
        first = [row[0] for row in rows]
        self.columns = [type("Column", (), {"values": lambda self: first})()]

    def __iter__(self):
        return iter(self.rows)


def _dry_run_warehouse(counts: dict[int, int], missing: set[str]):
    """A fake warehouse for gdpr_erase's dry run: the relations named in `missing` are
    not built; the one count query answers (position, rows) for each position in
    `counts`. Returns (macros, statements, printed)."""
    from types import SimpleNamespace

    from python_jobs import macros as engine_macros

    statements: list[str] = []
    printed: list[str] = []

    def run_query(sql: str) -> _Result:
        statements.append(sql)
        if "count(distinct subject_id)" in sql:
            return _Result([(2,)])
        return _Result(sorted(counts.items()))

    def get_relation(database=None, schema=None, identifier=None):
        return None if f"{schema}.{identifier}" in missing else object()

    adapter = SimpleNamespace(quote=lambda name: f"`{name}`", get_relation=get_relation)
    context = {"run_query": run_query, "adapter": adapter, "execute": True, "print": printed.append}
    macros = engine_macros.Macros(context)
    adapter.dispatch = macros._dispatch
    return macros, statements, printed


def _dry_run_plan() -> list[dict]:
    from python_jobs.macros import _Relation

    def step(schema: str, identifier: str, key: str, subject_type: str, action: str) -> dict:
        return {
            "relation": _Relation(schema, identifier),
            "relation_name": f"{schema}.{identifier}",
            "key": key,
            "key_kind": "pseudonym" if schema == "silver" else "id",
            "subject_type": subject_type,
            "action": action,
        }

    return [
        step("bronze", "patients", "patient_id", "patient", "delete"),
        step("bronze", "orders", "user_id", "user", "anonymize"),
        step("silver", "patients", "patient_pseudonym", "patient", "delete"),
        step("privacy", "subject_keys", "subject_id", None, "shred"),
    ]


def test_the_dry_run_counts_every_built_relation_in_one_query() -> None:
    """gdpr_erase --args '{dry_run: true}' on a fake warehouse (no JVM): one count
    query for every built relation of the plan, each relation's figure from its own
    position, a relation not built said so, and the total printed."""
    plan = _dry_run_plan()
    macros, statements, printed = _dry_run_warehouse({0: 1, 1: 2, 3: 2}, {"silver.patients"})
    ctx = {"holds": "privacy.legal_holds", "vault": "privacy.subject_keys"}
    lines = macros._erasure_dry_run(plan, ctx, ["P0000001", "U0000002"])
    assert lines == [
        ["bronze.patients", "delete", 1],
        ["bronze.orders", "anonymize", 2],
        ["silver.patients", "delete", "not built"],
        ["privacy.subject_keys", "shred", 2],
    ]
    counts = [sql for sql in statements if "erasable_rows" in sql]
    assert len(counts) == 1 and counts[0].count("union all") == 2
    assert "silver.patients" not in counts[0]
    assert not any(sql.lstrip().startswith(("merge", "delete", "update")) for sql in statements)
    assert any("would remove or anonymize 5 row(s)" in line for line in printed)


@pytest.mark.parametrize(
    "answer",
    [{0: 1, 3: 2}, {0: 1, 3: 2, 9: 5}],  # one count missing; one missing, one not asked for
)
def test_the_dry_run_stops_when_a_relation_s_count_does_not_come_back(answer: dict) -> None:
    """Fail closed: a count missing from the answer is an error, never a 0, even when
    the answer has as many rows as relations were counted."""
    from python_jobs.macros import Macros

    plan = _dry_run_plan()
    macros, _, printed = _dry_run_warehouse(answer, {"silver.patients"})
    ctx = {"holds": "privacy.legal_holds", "vault": "privacy.subject_keys"}
    with pytest.raises(
        Macros.CompilerError, match=r"3 relation\(s\) counted but the answer held positions"
    ):
        macros._erasure_dry_run(plan, ctx, ["P0000001"])
    assert not any("would remove" in line for line in printed)


@pytest.mark.parametrize("target", ["spark", "databricks"])
def test_the_batch_is_computed_once_in_memory_and_released(jinja: Jinja, target: str) -> None:
    """gdpr_erase computes its batch once (_cache_batch), after the tombstones: every
    MERGE, the sweep, the evidence and the completion read it from a temporary view
    cached in memory only, under a plan carrying the run's invocation id (a later run
    in the same JVM never matches this cache), and the run drops it at the end. A
    Databricks SQL warehouse cannot CACHE TABLE: there every reader computes the batch
    from the request log and the tombstones, as before."""
    statements: list[str] = []
    run = "0f8fad5b-d9cb-469f-a165-70867728950e"
    # a run of this session an error stopped left its batch; a name gdpr_erase never
    # writes is left alone, never put into SQL
    stale = "gdpr_erase_batch_" + "1" * 8 + "_2222_3333_4444_" + "5" * 12
    views = [
        {"viewName": stale, "isTemporary": True},
        {"viewName": "gdpr_erase_batch_x; drop table privacy.subject_keys", "isTemporary": True},
    ]

    def run_query(sql: str) -> list:
        statements.append(sql)
        return views if sql.startswith("show views") else []

    macros = jinja.with_vars(None, target).macros({"run_query": run_query, "invocation_id": run})
    ctx = {
        "requests": "privacy.erasure_requests",
        "tombstones": "privacy.erasure_tombstones",
        "system_keys": "privacy.system_keys",
    }
    uncached = str(macros._batch_base(ctx))
    name = macros._cache_batch(ctx)
    if target == "databricks":
        assert name is None and statements == []
        return
    view = "gdpr_erase_batch_" + run.replace("-", "_")
    assert name == view
    listed, *dropped, cache = statements
    assert listed == "show views like 'gdpr_erase_batch_*'"
    assert dropped == [f"uncache table if exists {stale}", f"drop view if exists {stale}"]
    assert cache.startswith(
        f"cache table {view} options ('storageLevel' 'MEMORY_ONLY') as select '{run}' as cached_by"
    )
    assert uncached in cache and "where status = 'erasing'" in cache
    ctx["batch_cache"] = name
    cached = str(macros._batch_base(ctx))
    assert (
        cached
        == f"select request_id, subject_id, subject_type, subject_pseudonym, batch_id from {view}"
    )
    # every reader of the batch reads the cache
    step = {"key_kind": "pseudonym", "subject_type": None, "action": "delete"}
    assert f"from {view}" in str(macros._batch_source(step, macros._batch_base(ctx)))
    assert f"from {view}" in str(macros._complete_requests_sql(ctx))
    statements.clear()
    macros._release_batch(ctx)
    assert statements == [f"uncache table if exists {view}", f"drop view if exists {view}"]
    assert ctx["batch_cache"] is None and "privacy.erasure_tombstones" in str(
        macros._batch_base(ctx)
    )


def test_a_small_batch_prunes_relations_keyed_by_pseudonym_only(jinja: Jinja) -> None:
    """The pruning path (issue 23): the batch's pseudonym prefixes join the write's
    condition as target-only predicates Delta skips files with; a relation keyed by a
    raw id (the vault) never gets a literal. A relation whose rows are deleted gets a
    DELETE whose keys are a script's array variable (issue 25), one whose rows are
    anonymized the MERGE."""
    sql = jinja.compile_inline(
        "{% for s in gdpr_lakehouse.erasure_plan(savepoints=false) if s.relation_name in ('bronze.orders', 'silver.patients', 'privacy.subject_keys') %}"
        "{{ gdpr_lakehouse._erase_sql(s, 'select * from batch_view', ['0a1f', 'e3b0']) }}@@{% endfor %}"
    )
    orders, patients, vault = (part.strip() for part in sql.split("@@") if part.strip())
    prefixes = (
        "left(target.`{key}`, 4) in ('0a1f', 'e3b0') and "
        "(startswith(target.`{key}`, '0a1f') or startswith(target.`{key}`, 'e3b0'))"
    )
    assert patients.startswith(
        "begin\n    gdpr_erase_batch: begin\n        declare erase_keys array<string>;"
    )
    assert "select collect_set(cast(erase_key as string)) from (select" in patients
    assert "subject_type = 'patient'" in patients and "where erase_key is not null" in patients
    assert (
        "delete from silver.patients as target\nwhere true and "
        + prefixes.format(key="patient_pseudonym")
        + "\n    and array_contains(gdpr_erase_batch.erase_keys, cast(target.`patient_pseudonym` as string));"
        + "\n    end;\nend"
    ) in patients
    assert "merge" not in patients
    assert orders.startswith("merge into bronze.orders as target")
    assert (
        "on target.`user_pseudonym` = erase.erase_key and " + prefixes.format(key="user_pseudonym")
    ) in orders
    assert vault.startswith("merge into privacy.subject_keys")
    assert "startswith" not in vault and "0a1f" not in vault
    # without prefixes: the MERGE as before, every file read
    plain = jinja.compile_inline(
        "{% for s in gdpr_lakehouse.erasure_plan(savepoints=false) if s.relation_name == 'silver.patients' %}"
        "{{ gdpr_lakehouse._erase_sql(s, 'select * from batch_view') }}{% endfor %}"
    )
    assert "on target.`patient_pseudonym` = erase.erase_key\n" in plain
    assert "startswith" not in plain


@pytest.mark.parametrize(
    "prefix", ["0A1F", "0a1f' or '1'='1", "", "0a1g", None, "0a1f0a1f0a1f0a1f0"]
)
def test_a_pruning_prefix_that_is_not_lower_case_hex_never_reaches_sql(
    jinja: Jinja, prefix: object
) -> None:
    success, errors = jinja.compile_errors(
        f"{{{{ gdpr_lakehouse._pruning_predicate('target.k', [{json.dumps(prefix)}]) }}}}"
    )
    assert not success and "is not lower-case hex" in errors


@pytest.mark.parametrize(
    "settings,message",
    [
        ({"erasure_pruning_max_prefixes": -1}, "erasure_pruning_max_prefixes is -1"),
        ({"erasure_pruning_max_prefixes": 5000}, "from 0 to 1024 (0 turns pruning off)"),
        ({"erasure_pruning_max_prefixes": "256"}, "erasure_pruning_max_prefixes is 256"),
        ({"erasure_pruning_max_prefixes": True}, "erasure_pruning_max_prefixes is True"),
        (
            {"erasure_pruning_prefix_chars": 0},
            "erasure_pruning_prefix_chars is 0; it must be a whole number from 1 to 16",
        ),
        ({"erasure_pruning_prefix_chars": 2.5}, "erasure_pruning_prefix_chars is 2.5"),
    ],
)
def test_pruning_settings_are_checked(jinja: Jinja, settings: dict, message: str) -> None:
    success, errors = jinja.with_vars(settings).compile_errors(
        "{{ tojson(gdpr_lakehouse._pruning_settings()) }}"
    )
    assert not success and message in errors and "Nothing was run" in errors


def test_pruning_settings_default_and_off(jinja: Jinja) -> None:
    assert json.loads(jinja.compile_inline("{{ tojson(gdpr_lakehouse._pruning_settings()) }}")) == {
        "max_prefixes": 256,
        "prefix_chars": 4,
    }
    off = jinja.with_vars({"erasure_pruning_max_prefixes": 0})
    assert json.loads(off.compile_inline("{{ tojson(gdpr_lakehouse._pruning_settings()) }}")) == {
        "max_prefixes": 0,
        "prefix_chars": 4,
    }


def test_cluster_by_subject_lays_out_every_relation_keyed_by_pseudonym(jinja: Jinja) -> None:
    steps = json.loads(
        jinja.compile_inline(
            "{% set out = [] %}{% for s in gdpr_lakehouse._cluster_steps() %}"
            "{% do out.append([s.relation_name, s.key, s.layout]) %}{% endfor %}{{ tojson(out) }}"
        )
    )
    relations = {name: (key, layout) for name, key, layout in steps}
    assert relations["silver.patients"] == ("patient_pseudonym", "zorder")
    assert relations["bronze.clicks"] == ("user_pseudonym", "zorder")
    assert "privacy.subject_keys" not in relations  # the vault: a raw id, shredded
    assert len(relations) >= 8
    zorder, liquid, again = (
        jinja.compile_inline(
            "{% for s in gdpr_lakehouse._cluster_steps() if s.relation_name == 'silver.patients' %}"
            "{% do s.update({'layout': '" + layout + "'}) %}"
            "{{ tojson(gdpr_lakehouse._cluster_statements(s, {'clusteringColumns': "
            + columns
            + "})) }}"
            "{% endfor %}"
        )
        for layout, columns in (
            ("zorder", "[]"),
            ("liquid", "[]"),
            ("liquid", "['patient_pseudonym']"),
        )
    )
    # Delta's curve without its noise and with 65,536 ranges, around the statements
    # (_curve_settings: test_erasure_pruning shows the files no longer overlap)
    settings = [
        "set spark.databricks.io.skipping.mdc.addNoise = false",
        "set spark.databricks.io.skipping.mdc.rangeId.max = 65536",
    ]
    reset = [
        "reset spark.databricks.io.skipping.mdc.addNoise",
        "reset spark.databricks.io.skipping.mdc.rangeId.max",
    ]
    assert json.loads(zorder) == [
        *settings,
        "optimize silver.patients zorder by (`patient_pseudonym`)",
        *reset,
    ]
    assert json.loads(liquid) == [
        *settings,
        "alter table silver.patients cluster by (`patient_pseudonym`)",
        "optimize silver.patients",
        *reset,
    ]
    assert json.loads(again) == [*settings, "optimize silver.patients", *reset]


@pytest.mark.parametrize(
    "args,message",
    [
        ("relations='silver.patients'", "must be a non-empty list"),
        ("relations=[]", "must be a non-empty list"),
        ("relations=['privacy.subject_keys']", "is not a relation keyed by pseudonym"),
        ("relations=['silver.patients; drop table x']", "is not a relation keyed by pseudonym"),
        ("layout='zorder'", "layout"),
    ],
)
def test_cluster_by_subject_refuses_bad_arguments(jinja: Jinja, args: str, message: str) -> None:
    success, errors = jinja.compile_errors(f"{{{{ gdpr_lakehouse.cluster_by_subject({args}) }}}}")
    assert not success and message in errors


def test_cluster_after_build_takes_only_a_boolean(jinja: Jinja) -> None:
    success, errors = jinja.with_vars({"cluster_after_build": "yes"}).compile_errors(
        "{{ gdpr_lakehouse.cluster_after_build() }}"
    )
    assert not success and "it must be true or false" in errors


@pytest.mark.parametrize(
    ("label", "name"), [("Batch", "keys"), ("batch", "keys; drop table x"), ("", "keys")]
)
def test_a_script_variable_is_named_by_lower_case_identifiers_only(
    jinja: Jinja, label: str, name: str
) -> None:
    success, errors = jinja.compile_errors(
        f"{{{{ gdpr_lakehouse._with_variable_sql({json.dumps(label)}, {json.dumps(name)}, "
        "'array<string>', 'select 1', 'select 2') }}"
    )
    assert not success and "label and name are lower-case identifiers" in errors


def test_a_script_variable_block_keeps_its_value_and_statement_as_given(jinja: Jinja) -> None:
    """The value's query and the statement are placed as given (a literal that spans
    lines keeps its text), inside a labelled block nested in an unlabelled one."""
    sql = jinja.compile_inline(
        "{{ gdpr_lakehouse._with_variable_sql('blk', 'keys', 'array<string>', "
        "\"select collect_set(k) from t where note = 'a\\n  b'\", 'delete from t where array_contains(blk.keys, k);') }}"
    )
    assert sql == (
        "begin\n    blk: begin\n        declare keys array<string>;\n        set blk.keys = (\n"
        "select collect_set(k) from t where note = 'a\n  b'\n        );\n"
        "delete from t where array_contains(blk.keys, k);\n    end;\nend"
    )
