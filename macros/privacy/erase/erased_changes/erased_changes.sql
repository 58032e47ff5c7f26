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
    {{ return(adapter.dispatch('erased_changes', 'gdpr_lakehouse')(upstream, consumed, latest, columns)) }}
{%- endmacro %}

{% macro spark__erased_changes(upstream, consumed, latest, columns) -%}
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
