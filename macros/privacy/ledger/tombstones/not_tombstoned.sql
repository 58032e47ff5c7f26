{#- A filter: keep only rows whose subject has no tombstone. Fail closed: the tombstone
    key is checked when the model is compiled (_require_tombstone_key), not only when
    the filter runs: a build with nothing new to read prunes the filter away, and
    would pass with the key lost or duplicated. -#}
{% macro not_tombstoned(id_expr, keys=none) -%}
    {{ return(adapter.dispatch('not_tombstoned', 'gdpr_lakehouse')(id_expr, keys)) }}
{%- endmacro %}

{% macro spark__not_tombstoned(id_expr, keys=none) -%}
    {%- do gdpr_lakehouse._require_tombstone_key(keys or ref('privacy_system_keys')) -%}
    not exists (
        select 1 from {{ ref('privacy_erasure_tombstones') }} as tombstones
        where tombstones.subject_hash = {{ gdpr_lakehouse.tombstone_hash(id_expr, keys) }}
    )
{%- endmacro %}

{#- Stop unless `keys` holds exactly one tombstone key, stored in this lakehouse's key
    mode (the same rules macro tombstone_key enforces in SQL). A table not there yet is
    left to the statement, which fails on it. -#}
{% macro _require_tombstone_key(keys) -%}
    {%- if execute and flags.WHICH in ('run', 'build', 'test', 'seed', 'snapshot', 'run-operation', 'retry') -%}
        {%- set relation = adapter.get_relation(database=keys.database, schema=keys.schema, identifier=keys.identifier) -%}
        {%- if relation is not none -%}
            {%- set length = 60 if gdpr_lakehouse.key_envelope() else 32 -%}
            {#- a node filters several sources by tombstone (bronze_cdc_deletes four):
                checked once per node; privacy_system_keys, which writes the key, every time -#}
            {%- set memo = gdpr_lakehouse._node_memo(relation) -%}
            {%- set memo_key = 'tombstone key ' ~ relation ~ ' ' ~ length -%}
            {%- if memo is not none and memo_key in memo -%}
                {{ return('') }}
            {%- endif -%}
            {%- set row = run_query("select count(*), count_if(length(key_value) != " ~ length ~ ") from " ~ relation
                ~ " where key_name = 'tombstone'").rows[0] -%}
            {%- if row[0] | int != 1 -%}
                {%- do exceptions.raise_compiler_error(relation ~ " holds " ~ row[0] ~ " tombstone keys, and exactly one is needed to recognise "
                    ~ "erased subjects. Nothing was written. Recover the key: RESTORE TABLE " ~ relation ~ " TO VERSION AS OF <v> (DESCRIBE HISTORY "
                    ~ relation ~ ")") -%}
            {%- elif row[1] | int > 0 -%}
                {%- do exceptions.raise_compiler_error(relation ~ " holds the tombstone key "
                    ~ ("unwrapped, though this lakehouse wraps its keys (key_envelope): dbt build --select privacy_system_keys wraps it"
                       if length == 60 else "wrapped, though this lakehouse keeps its keys plain (key_envelope off)") ~ ". Nothing was written.") -%}
            {%- endif -%}
            {%- if memo is not none -%}
                {%- do memo.update({memo_key: true}) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
