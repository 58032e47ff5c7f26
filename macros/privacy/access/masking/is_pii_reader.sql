{#
    True for whoever may see decrypted PII in the masked views. Locally: Spark's
    current_user() in var pii_readers (a list of user names). Databricks: membership of
    the account group in var pii_reader_group.
#}
{% macro is_pii_reader() -%}
    {{ return(adapter.dispatch('is_pii_reader', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__is_pii_reader() -%}
    {%- set readers = var('pii_readers', []) -%}
    {%- if readers is string -%}{%- set readers = [readers] -%}{%- endif -%}
    {%- for reader in readers -%}
        {%- if not modules.re.match('^[A-Za-z0-9_.@-]{1,128}$', reader | string) -%}
            {%- do exceptions.raise_compiler_error("pii_readers: " ~ (reader | string)[:64]
                ~ " is not a user name (letters, digits and _ . @ - only)") -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if readers -%}
        current_user() in ({% for reader in readers %}'{{ reader }}'{{ ', ' if not loop.last }}{% endfor %})
    {%- else -%}
        false
    {%- endif -%}
{%- endmacro %}

{% macro databricks__is_pii_reader() -%}
    is_account_group_member('{{ gdpr_lakehouse.pii_reader_group() }}')
{%- endmacro %}
