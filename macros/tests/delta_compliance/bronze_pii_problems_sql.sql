{#- One row per (relation, column) whose values are not ciphertext under the subject's
    key, written for that subject and column (macro encrypt_pii: a value moved from
    another row or column counts). relation_specs: [{relation, subject_key, pii_columns, key_column (default
    subject_id: the vault's column the subject key holds), require_key (default true:
    a row whose subject has no key is a problem; false: only its plaintext is, since
    a row downstream of bronze may wait for its rebuild after a shred)}]. -#}
{% macro bronze_pii_problems_sql(relation_specs) -%}
    {{ return(adapter.dispatch('bronze_pii_problems_sql', 'gdpr_lakehouse')(relation_specs)) }}
{%- endmacro %}

{% macro spark__bronze_pii_problems_sql(relation_specs) -%}
    {%- set vault = ref('privacy_subject_keys') -%}
    {%- set checks = [] -%}
    {%- for spec in relation_specs if spec.pii_columns -%}
        {%- if spec.get('missing') -%}
            {#- dbt build runs this test before bronze exists; `dbt test` reports it. -#}
            {%- if flags.WHICH != 'build' -%}
                {%- for column in spec.pii_columns -%}
                    {%- do checks.append("select '" ~ spec.relation ~ "' as relation_name, '" ~ column ~ "' as column_name, -1 as bad_rows") -%}
                {%- endfor -%}
            {%- endif -%}
        {%- else -%}
            {#- one join with the vault per relation, every column counted in it -#}
            {%- set check -%}
            select relation_name, column_name, bad_rows from (
                select
                    '{{ spec.relation }}' as relation_name,
                    stack({{ spec.pii_columns | length }},
                        {%- for column in spec.pii_columns %}
                        '{{ column }}', bad_{{ loop.index }}{{ ',' if not loop.last }}
                        {%- endfor %}
                    ) as (column_name, bad_rows)
                from (
                    {#- counted over flags computed in a projection: the tombstone key
                        is a scalar subquery, which Spark refuses inside an aggregate's
                        argument -#}
                    select
                        {%- for column in spec.pii_columns %}
                        count_if(flags.bad_{{ loop.index }}) as bad_{{ loop.index }}{{ ',' if not loop.last }}
                        {%- endfor %}
                    from (
                        select
                            {%- for column in spec.pii_columns %}
                            coalesce(
                                data.{{ column }} is not null
                                and (
                                    typeof(data.{{ column }}) != 'binary'
                                    {#- one AES-GCM attempt per value where the subject
                                        has a key: a value it opens cannot also open
                                        with the tombstone key (GCM authenticates under
                                        one key; a subject key equal to the tombstone
                                        key reads as no key, below). Only a subject
                                        without a key has its values tried with the
                                        tombstone key. #}
                                    or case when vault.data_key is not null
                                            then {{ gdpr_lakehouse.decrypt_pii('cast(data.' ~ column ~ ' as binary)', 'vault.data_key', 'vault.subject_pseudonym', column) }} is null
                                            else {{ 'true' if spec.get('require_key', true) else gdpr_lakehouse.decrypt_pii('cast(data.' ~ column ~ ' as binary)', gdpr_lakehouse.tombstone_key(), 'cast(data.' ~ spec.subject_key ~ ' as string)', column, key_binding=gdpr_lakehouse.key_binding(system_key='tombstone')) ~ ' is not null' }}
                                       end
                                ),
                                false
                            ) as bad_{{ loop.index }}{{ ',' if not loop.last }}
                            {%- endfor %}
                        from {{ spec.relation }} as data
                        left join (
                            {#- a subject key equal to the tombstone key is no key: its
                                values count as what the tombstone key opens. Stored
                                keys compare by a keyed hash of nothing (the same
                                key wrapped twice differs), opened inside the engine -#}
                            select
                                keys.{{ spec.get('key_column', 'subject_id') }} as key_id,
                                keys.subject_pseudonym,
                                case when {{ gdpr_lakehouse.keyed_hash('keys.data_key', "x''", gdpr_lakehouse.key_binding('keys.subject_pseudonym')) }}
                                          = {{ gdpr_lakehouse.keyed_hash(gdpr_lakehouse.tombstone_key(), "x''", gdpr_lakehouse.key_binding(system_key='tombstone')) }}
                                     then null else keys.data_key end as data_key
                            from {{ vault }} as keys
                        ) as vault on data.{{ spec.subject_key }} = vault.key_id
                    ) as flags
                ) as counts
            ) as per_column
            where bad_rows > 0
            {%- endset -%}
            {%- do checks.append(check) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if checks -%}
        {{ checks | join('\nunion all\n') }}
    {%- else -%}
        select cast(null as string) as relation_name, cast(null as string) as column_name, 0 as bad_rows where false
    {%- endif -%}
{%- endmacro %}
