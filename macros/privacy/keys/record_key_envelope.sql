{#- Post-hook of the vault: record the mode it was made in, once, and that its keys
    and ciphertexts are bound (gdpr_lakehouse.ciphertext_binding: a vault made before
    bindings has keys and no record, and every command refuses it until macro
    bind_ciphertexts has run). -#}
{% macro record_key_envelope(vault) -%}
    {{ return(adapter.dispatch('record_key_envelope', 'gdpr_lakehouse')(vault)) }}
{%- endmacro %}

{% macro spark__record_key_envelope(vault) -%}
    {%- if execute -%}
        {%- set recorded = gdpr_lakehouse.tblproperties_of(vault) -%}
        {%- set properties = [] -%}
        {%- if 'gdpr_lakehouse.key_envelope' not in recorded -%}
            {%- do properties.append("'gdpr_lakehouse.key_envelope' = '" ~ (gdpr_lakehouse.key_envelope() | string | lower) ~ "'") -%}
        {%- endif -%}
        {%- if 'gdpr_lakehouse.ciphertext_binding' not in recorded -%}
            {%- do properties.append("'gdpr_lakehouse.ciphertext_binding' = '" ~ gdpr_lakehouse._ciphertext_binding_version() ~ "'") -%}
        {%- endif -%}
        {%- if properties -%}
            {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='build')) -%}
            {%- do run_query("alter table " ~ vault ~ " set tblproperties (" ~ properties | join(', ') ~ ")") -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
