{#
    The rows erasure deleted from `upstream` in versions consumed + 1 .. latest, for an
    anonymous aggregate that keeps counting erased subjects (on_erasure: retain): a
    select of `columns` over the Change Data Feed of every commit gdpr_erase made
    (userMetadata purpose "erase") that deleted rows. A restore's re-erasure (purpose
    "reapply_erasure") deletes rows that were already counted once: it is not one of
    them. An erasure whose change files a VACUUM already deleted cannot be read; it is
    named in the log (its rows are then no longer counted) and left out.
#}
{% macro erased_changes(upstream, consumed, latest, columns) -%}
    {%- set found = {'readable': [], 'lost': []} -%}
    {%- if execute and latest > consumed -%}
        {%- set found = gdpr_lakehouse._erasure_versions(gdpr_lakehouse.delta_history(upstream), consumed, latest) -%}
    {%- endif -%}
    {%- for version in found.lost -%}
        {%- do log(this ~ ": the erasure at version " ~ version ~ " of " ~ upstream ~ " can no longer be read "
            ~ "(a VACUUM deleted its change files before this model consumed it); its rows are not counted as erased", info=true) -%}
    {%- endfor -%}
    {%- if found.readable -%}
        {%- for version in found.readable %}
    select {{ columns | join(', ') }} from table_changes('{{ upstream }}', {{ version }}, {{ version }}) where _change_type = 'delete'
            {%- if not loop.last %} union all{% endif %}
        {%- endfor %}
    {%- else %}
    select {{ columns | join(', ') }} from {{ upstream }} where false
    {%- endif -%}
{%- endmacro %}

{#- Of a history (delta_history), the versions consumed + 1 .. latest where gdpr_erase
    deleted rows, oldest first: {readable: [...], lost: [...]}, lost being those whose
    change files a VACUUM has deleted. -#}
{% macro _erasure_versions(history, consumed, latest) -%}
    {%- set readable_from = gdpr_lakehouse._cdf_readable_from_history(history) | int -%}
    {%- set found = {'readable': [], 'lost': []} -%}
    {%- for commit in history | sort(attribute='version')
        if commit.version > consumed and commit.version <= latest
        and commit.tag.get('purpose') == 'erase' and commit.operation in ('DELETE', 'MERGE') -%}
        {%- do found['readable' if commit.version >= readable_from else 'lost'].append(commit.version) -%}
    {%- endfor -%}
    {{ return(found) }}
{%- endmacro %}

{#- The upstream version an incremental CDF consumer has consumed (its source_version
    column), or -1 on its first run or while its table predates that column. -#}
{% macro consumed_version(relation) -%}
    {%- if not execute or relation is none -%}{{ return(-1) }}{%- endif -%}
    {%- set names = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
    {%- if 'source_version' not in names -%}{{ return(-1) }}{%- endif -%}
    {{ return(gdpr_lakehouse.scalar_query('select coalesce(max(source_version), -1) from ' ~ relation, -1) | int) }}
{%- endmacro %}

{#- For a model whose columns changed: every column its existing table holds that the
    model no longer produces, as a typed null (", cast(null as T) as c" each), so
    dbt's MERGE (UPDATE SET *, INSERT *) still finds every target column after an
    upgrade. Empty on a first run. -#}
{% macro retired_columns(produced) -%}
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
