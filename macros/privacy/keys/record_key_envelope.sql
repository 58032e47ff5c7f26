{#- Post-hook of the vault: record the mode it was made in, once. -#}
{% macro record_key_envelope(vault) -%}
    {{ return(adapter.dispatch('record_key_envelope', 'gdpr_lakehouse')(vault)) }}
{%- endmacro %}

{% macro spark__record_key_envelope(vault) -%}
    {%- if execute -%}
        {%- if 'gdpr_lakehouse.key_envelope' not in gdpr_lakehouse.tblproperties_of(vault) -%}
            {%- set mode = gdpr_lakehouse.key_envelope() -%}
            {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='build')) -%}
            {%- do run_query("alter table " ~ vault ~ " set tblproperties ('gdpr_lakehouse.key_envelope' = '" ~ (mode | string | lower) ~ "')") -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
