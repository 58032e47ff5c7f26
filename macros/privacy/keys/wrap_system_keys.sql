{#- Post-hook of privacy.system_keys: with the envelope on, a key stored plain (a
    lakehouse made before system keys were wrapped) is wrapped by the key-encryption key
    in place, once. The plain bytes stay in the table's history until its files are
    vacuumed (30 days: the table's file retention). -#}
{% macro wrap_system_keys(relation) -%}
    {{ return(adapter.dispatch('wrap_system_keys', 'gdpr_lakehouse')(relation)) }}
{%- endmacro %}

{% macro spark__wrap_system_keys(relation) -%}
    {%- if execute and gdpr_lakehouse.key_envelope() -%}
        {%- set plain = gdpr_lakehouse.scalar_query("select count(*) from " ~ relation ~ " where key_name = 'tombstone' and length(key_value) = 32", 0) | int -%}
        {%- if plain > 0 -%}
            {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='build')) -%}
            {#- a MERGE, not an UPDATE: the key-encryption key is read by a
                non-deterministic expression, which only a query may hold -#}
            {%- do run_query("merge into " ~ relation ~ " as stored using (select key_name, " ~ gdpr_lakehouse.wrap_key('key_value', gdpr_lakehouse.key_binding(system_key='tombstone'))
                ~ " as wrapped from " ~ relation ~ " where key_name = 'tombstone' and length(key_value) = 32) as plain on stored.key_name = plain.key_name"
                ~ " when matched then update set stored.key_value = plain.wrapped") -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
            {%- do log(relation ~ ': wrapped ' ~ plain ~ ' key(s) stored plain with the key-encryption key', info=true) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
