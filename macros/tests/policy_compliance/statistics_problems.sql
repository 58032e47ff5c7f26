{#- specs: [{relation, pii_columns, truncated_key (optional: {key, chars})}]; problems
    as [relation, column, problem]. A truncated_key's column may be listed when the
    table cuts string statistics to at most chars characters
    (delta.dataSkippingStringPrefixLength): erasure by pruning reads them. -#}
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
            {%- set truncated = spec.get('truncated_key') or {} -%}
            {%- set cut = properties.get('delta.dataSkippingStringPrefixLength') -%}
            {%- for column in spec.pii_columns if column | lower in columns -%}
                {%- if truncated.get('key') and column | lower == truncated.key | lower -%}
                    {%- if cut is none or not (cut | string).isdigit() or (cut | int) > truncated.chars -%}
                        {%- do problems.append([spec.relation | string, column, 'is in delta.dataSkippingStatsColumns and delta.dataSkippingStringPrefixLength is '
                            ~ (cut | string if cut is not none else 'not set') ~ ', not at most ' ~ truncated.chars]) -%}
                    {%- endif -%}
                {%- else -%}
                    {%- do problems.append([spec.relation | string, column, 'is in delta.dataSkippingStatsColumns']) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- elif (properties.get('delta.dataSkippingNumIndexedCols', '32') | int) != 0 -%}
            {%- for column in spec.pii_columns -%}
                {%- do problems.append([spec.relation | string, column, 'may be in the statistics: set delta.dataSkippingStatsColumns without it']) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{%- endmacro %}
