{#- A CDC bronze table restored to version V no longer holds what the landing files
    recorded after V brought: the ledger forgets them (bronze_version > V), so the next
    build reads them again and nothing landed is lost. The MERGE applies only events
    newer than each row's state and the delete markers still hold, so re-reading
    changes only what the restore took back. Called by restore_version once it
    re-erased, and by the heal of a restore killed before that. Nothing for a model
    that is not a CDC bronze model. -#}
{% macro forget_landing_files(node, version) -%}
    {{ return(adapter.dispatch('forget_landing_files', 'gdpr_lakehouse')(node, version)) }}
{%- endmacro %}

{% macro spark__forget_landing_files(node, version) -%}
    {%- set entities = gdpr_lakehouse.cdc_landing_entities() | map(attribute='name') | list -%}
    {%- set entity = node.name[7:] if node.name.startswith('bronze_') else none -%}
    {%- set ledger_node = gdpr_lakehouse.engine_node('bronze_landing_ledger') -%}
    {%- if entity in entities and ledger_node -%}
        {%- set ledger = adapter.get_relation(database=ledger_node.database, schema=ledger_node.schema, identifier=ledger_node.alias) -%}
        {%- if ledger is not none -%}
            {%- set forgotten = gdpr_lakehouse.scalar_query('select count(*) from ' ~ ledger ~ " where entity = '" ~ entity
                ~ "' and bronze_version > " ~ version, 0) | int -%}
            {%- if forgotten > 0 -%}
                {%- do run_query('delete from ' ~ ledger ~ " where entity = '" ~ entity ~ "' and bronze_version > " ~ version) -%}
                {%- do print('restore_version: ' ~ forgotten ~ ' landing file(s) of ' ~ entity ~ ' applied after version ' ~ version
                    ~ ' leave ' ~ ledger ~ ': the next build reads them again') -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
