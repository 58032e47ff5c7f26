{#- A tombstone holds the subject's pseudonym only while its erasure runs (gdpr_erase
    drops it when the requests are erased); tombstones of older lakehouses kept it. Hash
    such rows under the tombstone key and drop the clear value (the purge job then
    rewrites the old files), except where a request of the subject is unfinished (a
    crashed erasure resumes from the pseudonym). Idempotent; runs before anything reads
    the hashes (heal_interrupted_restores: gdpr_erase, restore_version) and after each
    build of the tombstones (their post-hook). -#}
{% macro unlink_tombstones(tombstones, system_keys=none) -%}
    {{ return(adapter.dispatch('unlink_tombstones', 'gdpr_lakehouse')(tombstones, system_keys)) }}
{%- endmacro %}

{% macro spark__unlink_tombstones(tombstones, system_keys=none) -%}
    {%- if execute -%}
        {%- set columns = adapter.get_columns_in_relation(tombstones) | map(attribute='name') | map('lower') | list -%}
        {%- if 'pseudonym_hash' not in columns -%}
            {%- do run_query("alter table " ~ tombstones ~ " add columns (pseudonym_hash string)") -%}
        {%- endif -%}
        {%- if 'pseudonym_enc' not in columns -%}
            {%- do run_query("alter table " ~ tombstones ~ " add columns (pseudonym_enc binary)") -%}
        {%- endif -%}
        {%- if gdpr_lakehouse.scalar_query("select count(*) from " ~ tombstones ~ " where subject_pseudonym is not null", 0) | int > 0 -%}
            {#- the tombstones' own post-hook cannot ref() the system keys (they read the
                tombstones): looked up here, and a missing table stops the hashing -#}
            {%- set system_keys = system_keys or gdpr_lakehouse._control_relation('privacy_system_keys') -%}
            {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='unlink_tombstones')) -%}
            {#- not the tombstone of an erasure still running: a resumed run reads the
                pseudonym there (_batch_base) -#}
            {%- set node = gdpr_lakehouse.engine_node('privacy_erasure_requests') -%}
            {%- set requests = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
            {#- a MERGE, hashing in its source's projection (macro tombstone_hash) -#}
            {%- set sql -%}
                merge into {{ tombstones }} as tombstones
                using (
                    select
                        linked.subject_hash,
                        {{ gdpr_lakehouse.tombstone_hash('linked.subject_pseudonym', keys=system_keys) }} as hashed
                    from {{ tombstones }} as linked
                    {%- if requests is not none %}
                    left anti join (
                        select {{ gdpr_lakehouse.tombstone_hash('subject_id', keys=system_keys) }} as subject_hash
                        from {{ requests }}
                        where status in {{ gdpr_lakehouse.request_status_in('unfinished') }}
                    ) as running on running.subject_hash = linked.subject_hash
                    {%- endif %}
                    where linked.subject_pseudonym is not null
                ) as linked
                on tombstones.subject_hash = linked.subject_hash
                when matched then update set
                    pseudonym_hash = coalesce(tombstones.pseudonym_hash, linked.hashed),
                    subject_pseudonym = null
            {%- endset -%}
            {%- do run_query(sql) -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
