{#- A Delta table's properties as a dict.

    SHOW TBLPROPERTIES redacts a value that matches spark.sql.redaction.options.regex
    (default `(?i)url`): a delta.dataSkippingStatsColumns naming a `url` column
    reads `*********(redacted)`, and a check reading it would pass blind. Those values
    are read again from DESCRIBE DETAIL (the Delta log's own metadata, not redacted);
    one still unreadable stops the caller rather than be taken for a real value. -#}
{% macro tblproperties_of(relation) -%}
    {{ return(adapter.dispatch('tblproperties_of', 'gdpr_lakehouse')(relation)) }}
{%- endmacro %}

{% macro spark__tblproperties_of(relation) -%}
    {%- set redacted = '*********(redacted)' -%}
    {%- set properties = {} -%}
    {%- for row in run_query('show tblproperties ' ~ relation) -%}
        {%- do properties.update({row[0]: row[1]}) -%}
    {%- endfor -%}
    {%- set hidden = [] -%}
    {%- for key, value in properties.items() if value == redacted -%}
        {%- do hidden.append(key) -%}
    {%- endfor -%}
    {%- if hidden -%}
        {%- set detail = gdpr_lakehouse._delta_detail_properties(relation) -%}
        {%- for key in hidden -%}
            {%- if detail.get(key) is none or detail.get(key) == redacted -%}
                {{ exceptions.raise_compiler_error(
                    "Property " ~ key ~ " of " ~ relation ~ " is redacted by Spark (spark.sql.redaction.options.regex)"
                    ~ " and DESCRIBE DETAIL does not show it either; it cannot be checked.") }}
            {%- endif -%}
            {%- do properties.update({key: detail[key]}) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(properties) }}
{%- endmacro %}

{#- DESCRIBE DETAIL's `properties` map as a dict. dbt hands a map column over as JSON
    (an object, or a list of [key, value] pairs from Arrow-based drivers). -#}
{% macro _delta_detail_properties(relation) -%}
    {%- set values = [] -%}
    {%- for row in run_query('describe detail ' ~ relation) -%}
        {%- do values.append(row['properties']) -%}
    {%- endfor -%}
    {%- set value = values[0] if values | length == 1 else none -%}
    {%- set parsed = fromjson(value) if value is string else value -%}
    {%- if parsed is mapping -%}
        {{ return(parsed) }}
    {%- elif parsed is iterable and parsed is not string -%}
        {%- set properties = {} -%}
        {%- for pair in parsed -%}
            {%- do properties.update({pair[0]: pair[1]}) -%}
        {%- endfor -%}
        {{ return(properties) }}
    {%- endif -%}
    {{ exceptions.raise_compiler_error("DESCRIBE DETAIL " ~ relation ~ " returned no readable properties: " ~ value) }}
{%- endmacro %}
