{#- specs: [{relation, pii_columns}]; problems as [relation, column, problem]. -#}
{% macro statistics_problems(specs) -%}
    {{ return(adapter.dispatch('statistics_problems', 'gdpr_lakehouse')(specs)) }}
{%- endmacro %}

{% macro spark__statistics_problems(specs) -%}
    {%- set problems = [] -%}
    {%- for spec in specs
          if spec.pii_columns
          and adapter.get_relation(database=spec.relation.database, schema=spec.relation.schema, identifier=spec.relation.identifier) is not none -%}
        {%- set properties = gdpr_lakehouse.tblproperties_of(spec.relation) -%}
        {%- set listed = properties.get('delta.dataSkippingStatsColumns') -%}
        {%- if listed is not none -%}
            {%- set columns = listed.split(',') | map('trim') | map('lower') | list -%}
            {%- for column in spec.pii_columns if column | lower in columns -%}
                {%- do problems.append([spec.relation | string, column, 'is in delta.dataSkippingStatsColumns']) -%}
            {%- endfor -%}
        {%- elif (properties.get('delta.dataSkippingNumIndexedCols', '32') | int) != 0 -%}
            {%- for column in spec.pii_columns -%}
                {%- do problems.append([spec.relation | string, column, 'may be in the statistics: set delta.dataSkippingStatsColumns without it']) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}
