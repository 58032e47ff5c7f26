{#
    dbt-spark's tblproperties clause, with two additions for every Delta relation:
    - PII stays out of Delta statistics: when the node's privacy meta lists
      pii_columns, delta.dataSkippingStatsColumns is set to its other documented
      columns (but those whose yml data_type is a map, array or struct) (min/max of a PII column in the transaction log would be a copy that
      erasure cannot reach). An explicit value in the config wins.
    - Keys and values are checked, since dbt-spark quotes them without escaping.
#}
{% macro spark__tblproperties_clause() -%}
  {%- set tblproperties = dict(config.get('tblproperties') or {}) -%}
  {%- set privacy = (config.get('meta') or {}).get('privacy') or {} -%}
  {%- set pii = privacy.get('pii_columns') or [] -%}
  {%- if pii and 'delta.dataSkippingStatsColumns' not in tblproperties and model is defined -%}
      {%- set stats_columns = [] -%}
      {#- Delta keeps no statistics on maps, arrays and structs: leave out columns whose
          yml declares such a data_type. -#}
      {%- for name, column in model.columns.items()
            if name not in pii and '<' not in (column.data_type or '') -%}
          {%- do stats_columns.append(name) -%}
      {%- endfor -%}
      {%- if stats_columns -%}{%- do tblproperties.update({'delta.dataSkippingStatsColumns': stats_columns | join(',')}) -%}{%- endif -%}
  {%- endif -%}
  {%- if tblproperties %}
    tblproperties (
      {%- for prop, value in tblproperties.items() -%}
      {%- if not modules.re.match('^[A-Za-z0-9_.]+$', prop | string) or "'" in (value | string) or '\\' in (value | string) -%}
          {%- do exceptions.raise_compiler_error("tblproperty " ~ prop ~ " = " ~ (value | string)[:60]
              ~ " is not allowed: names are letters, digits, _ and . ; values may not contain quotes or backslashes") -%}
      {%- endif %}
      '{{ prop }}' = '{{ value }}' {% if not loop.last %}, {% endif %}
      {%- endfor %}
    )
  {%- endif %}
{%- endmacro -%}
