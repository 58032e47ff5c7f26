{#- For a model whose columns changed: every column its existing table holds that the
    model no longer produces, as a typed null (", cast(null as T) as c" each), so
    dbt's MERGE (UPDATE SET *, INSERT *) still finds every target column after an
    upgrade. Empty on a first run. -#}
{% macro retired_columns(produced) -%}
    {{ return(adapter.dispatch('retired_columns', 'gdpr_lakehouse')(produced)) }}
{%- endmacro %}

{% macro spark__retired_columns(produced) -%}
    {%- set extra = [] -%}
    {%- if execute and is_incremental() -%}
        {%- for column in adapter.get_columns_in_relation(this) if column.name | lower not in produced -%}
            {%- if not modules.re.match('^[A-Za-z_][A-Za-z0-9_]{0,127}$', column.name) or not modules.re.match('^[A-Za-z0-9_(), <>:]{1,200}$', column.data_type) -%}
                {%- do exceptions.raise_compiler_error(this ~ " holds a column " ~ (column.name | string)[:80] ~ " " ~ (column.data_type | string)[:80]
                    ~ " the model no longer produces, and its name or type is not one to copy into SQL; drop that column by hand") -%}
            {%- endif -%}
            {%- do extra.append(', cast(null as ' ~ column.data_type ~ ') as ' ~ column.name) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(extra | join('')) }}
{%- endmacro %}
