{#- Before a command writes anything: the vars agree with the lakehouse's key mode, the
    vault's keys agree with the record, and with the envelope on the key-encryption key
    is there. on-run-start of every dbt run/build/test and first step of the
    operations. -#}
{% macro assert_key_envelope() -%}
    {{ return(adapter.dispatch('assert_key_envelope', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__assert_key_envelope() -%}
    {%- if execute -%}
        {%- set mode = gdpr_lakehouse.key_envelope() -%}
        {%- set vault = gdpr_lakehouse._vault_relation() -%}
        {%- if vault is not none -%}
            {%- set expected = 60 if mode else 32 -%}
            {%- set odd = gdpr_lakehouse.scalar_query("select count(*) from " ~ vault ~ " where left(subject_id, 2) != '__' and length(data_key) != " ~ expected, 0) | int -%}
            {%- if odd > 0 -%}
                {%- do exceptions.raise_compiler_error(vault ~ " is recorded with key_envelope " ~ (mode | string | lower) ~ " but " ~ odd
                    ~ " of its keys are not " ~ expected ~ " bytes long (" ~ ('wrapped' if mode else 'plain') ~ "); the vault is inconsistent. Nothing was run") -%}
            {%- endif -%}
        {%- endif -%}
        {%- if mode -%}{%- set kek = gdpr_lakehouse._kek() -%}{%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
