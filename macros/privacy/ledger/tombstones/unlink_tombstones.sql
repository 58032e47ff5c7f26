{#- Tombstones of older lakehouses held the subject's pseudonym in clear, which joined
    with the request log (subject id, request id) mapped every erased person to the
    pseudonym that keys their history. Hash such rows under the tombstone key and drop
    the clear value (the purge job then rewrites the old files). Idempotent; runs before
    anything reads the hashes (heal_interrupted_restores: gdpr_erase, restore_version)
    and after each build of the tombstones (their post-hook). -#}
{% macro unlink_tombstones(tombstones, system_keys=none) -%}
    {{ return(adapter.dispatch('unlink_tombstones', 'gdpr_lakehouse')(tombstones, system_keys)) }}
{%- endmacro %}

{% macro spark__unlink_tombstones(tombstones, system_keys=none) -%}
    {%- if execute -%}
        {%- set columns = adapter.get_columns_in_relation(tombstones) | map(attribute='name') | map('lower') | list -%}
        {%- if 'pseudonym_hash' not in columns -%}
            {%- do run_query("alter table " ~ tombstones ~ " add columns (pseudonym_hash string)") -%}
        {%- endif -%}
        {%- if gdpr_lakehouse.scalar_query("select count(*) from " ~ tombstones ~ " where subject_pseudonym is not null", 0) | int > 0 -%}
            {#- the tombstones' own post-hook cannot ref() the system keys (they read the
                tombstones): looked up here, and a missing table stops the hashing -#}
            {%- set system_keys = system_keys or gdpr_lakehouse._control_relation('privacy_system_keys') -%}
            {%- do run_query(gdpr_lakehouse.set_commit_metadata(purpose='unlink_tombstones')) -%}
            {%- do run_query("update " ~ tombstones ~ " set pseudonym_hash = coalesce(pseudonym_hash, "
                ~ gdpr_lakehouse.tombstone_hash('subject_pseudonym', keys=system_keys) ~ "), subject_pseudonym = null where subject_pseudonym is not null") -%}
            {%- do run_query(gdpr_lakehouse.reset_commit_metadata()) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('') }}
{%- endmacro %}
