{#
    dbt-spark's tblproperties clause, with two additions for every Delta relation:
    - PII, subject keys, direct identifiers and special-category values stay out of
      Delta statistics: when the node's privacy meta names pii_columns, a subject_key
      or columns of those classes, delta.dataSkippingStatsColumns is set to its other
      documented columns (but those whose yml data_type is a map, array or
      struct). The min/max of such a column in the transaction log would be a copy
      that erasure cannot reach and that outlives a purge by the log's retention:
      a raw id or a pseudonym beside a file's other statistics. An explicit value in
      the config wins. One exception, for erasure by pruning (gdpr_erase,
      _pruning_prefixes): a subject key of kind pseudonym keeps statistics cut to
      var erasure_pruning_prefix_chars characters (delta.dataSkippingStringPrefixLength,
      every string column of the table alike), so the log holds 16 bits of a
      pseudonym per file by default, never one whole, and Delta can skip the files
      whose key range holds none of a batch's prefixes.
    - Keys and values are checked, since dbt-spark quotes them without escaping.
#}
{% macro spark__tblproperties_clause() -%}
  {%- set tblproperties = dict(config.get('tblproperties') or {}) -%}
  {%- set privacy = (config.get('meta') or {}).get('privacy') or {} -%}
  {%- if model is defined -%}
      {%- do tblproperties.update(gdpr_lakehouse._stats_columns_property(privacy, model.columns, tblproperties)) -%}
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


{#- The columns a relation's Delta statistics must not hold: its PII columns, its
    subject key (a raw id or a pseudonym), any other pseudonym column (named
    *pseudonym) among the given column names, and every column the contract classes
    direct_identifier or special_category (privacy_column_classes). -#}
{% macro _stats_excluded_columns(privacy, column_names) -%}
    {%- set excluded = [] -%}
    {%- set classes = gdpr_lakehouse.privacy_column_classes(privacy) -%}
    {%- for name in (privacy.get('pii_columns') or []) + [privacy.get('subject_key')]
          + (column_names | select('string') | select('ne', none) | list)
          if name and name not in excluded
          and (name in (privacy.get('pii_columns') or []) or name == privacy.get('subject_key')
               or (name | lower).endswith('pseudonym')
               or classes.get(name | lower) in ('direct_identifier', 'special_category')) -%}
        {%- do excluded.append(name) -%}
    {%- endfor -%}
    {{ return(excluded) }}
{%- endmacro %}

{#- {'delta.dataSkippingStatsColumns': the documented columns but the excluded ones
    (and those whose yml data_type is a map, array or struct, on which Delta keeps no
    statistics)} when the relation has columns to exclude and sets no list itself;
    {'delta.dataSkippingNumIndexedCols': '0'} (no statistics) when no documented column
    is left to list; else {}. The clause above uses it when a table is made,
    apply_tblproperties when it already exists. -#}
{% macro _stats_columns_property(privacy, columns, tblproperties) -%}
    {%- set private = gdpr_lakehouse._stats_excluded_columns(privacy, columns.keys()) -%}
    {%- if not private or 'delta.dataSkippingStatsColumns' in tblproperties -%}{{ return({}) }}{%- endif -%}
    {%- set pruning = gdpr_lakehouse._stats_pruning_key(privacy) -%}
    {%- set stats_columns = [] -%}
    {%- for name, column in columns.items() if (name not in private or name == pruning.key) and '<' not in (column.data_type or '') -%}
        {%- do stats_columns.append(name) -%}
    {%- endfor -%}
    {#- no documented column may keep statistics: keep none (the yml documents too
        little to name the columns that may) -#}
    {%- if not stats_columns -%}
        {{ return({'delta.dataSkippingNumIndexedCols': '0'}) }}
    {%- endif -%}
    {%- set wanted = {'delta.dataSkippingStatsColumns': stats_columns | join(',')} -%}
    {%- if pruning.key in stats_columns -%}
        {%- do wanted.update({'delta.dataSkippingStringPrefixLength': pruning.chars | string}) -%}
    {%- endif -%}
    {{ return(wanted) }}
{%- endmacro %}

{#- {key, chars}: the subject key whose statistics erasure by pruning reads, cut to
    chars characters (the contract classes a pseudonym key a direct identifier: it is
    the subject's key); key none when the relation is not keyed by pseudonym, the key
    is also a PII column or special-category, or pruning is off (var
    erasure_pruning_max_prefixes 0). And none on Databricks: that it cuts statistics
    by the table property is not tested here, so the key stays out of them there. -#}
{% macro _stats_pruning_key(privacy) -%}
    {%- set settings = gdpr_lakehouse._pruning_settings() -%}
    {%- set key = privacy.get('subject_key') -%}
    {%- set classes = gdpr_lakehouse.privacy_column_classes(privacy) -%}
    {%- if not key or privacy.get('subject_key_kind') != 'pseudonym' or settings.max_prefixes == 0 or target.type == 'databricks'
          or key in (privacy.get('pii_columns') or []) or classes.get(key | lower) == 'special_category' -%}
        {{ return({'key': none, 'chars': settings.prefix_chars}) }}
    {%- endif -%}
    {{ return({'key': key, 'chars': settings.prefix_chars}) }}
{%- endmacro %}
