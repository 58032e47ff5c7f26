{# gdpr_erase's moves of the request log: held, claimed (erasing), failed, erased. #}

{#- An open request whose erasure has begun: a crashed or failed batch already wrote its
    tombstone (and maybe deleted rows or shredded the key, which cannot be undone). A
    legal hold placed after that cannot stop it: the batch is finished, and said so. -#}
{% macro _erasure_begun(ctx, alias='requests') -%}
    ({{ alias }}.status in {{ gdpr_lakehouse.request_status_in('begun') }} and exists (
        select 1 from {{ ctx.tombstones }} as begun
        where begun.subject_hash = {{ gdpr_lakehouse.tombstone_hash(alias ~ '.subject_id', keys=ctx.system_keys) }}
    ))
{%- endmacro %}

{#- Open requests of subjects under an active legal hold become held, with the reason;
    not those whose erasure has begun. -#}
{% macro _hold_requests_sql(ctx, ids) -%}
merge into {{ ctx.requests }} as requests
using (
    select
        requests.request_id,
        min(holds.reason) as hold_reason
    from {{ ctx.requests }} as requests
    inner join {{ ctx.holds }} as holds
        on requests.subject_id = holds.subject_id and holds.released_at is null
    where requests.status in {{ gdpr_lakehouse.request_status_in('open') }}{{ gdpr_lakehouse._subject_filter(ids, 'requests.subject_id') }}
        and not {{ gdpr_lakehouse._erasure_begun(ctx) }}
    group by requests.request_id
) as held
on requests.request_id = held.request_id
when matched then update set
    status = 'held',
    status_reason = concat('legal hold: ', held.hold_reason),
    updated_at = current_timestamp()
{%- endmacro %}

{#- Claim open requests (and held ones whose hold was released) for this batch, with
    the subject's type from the vault. Never its pseudonym: beside the subject id in
    this table, it would map the id to the subject's history in every version the
    table keeps (the erasure reads it from the tombstone: _batch_base). The claimable
    requests and their subjects' types into a map variable, then one UPDATE, which
    checks again that each is still unfinished (_with_variable_sql). -#}
{% macro _claim_requests_sql(ctx, ids) -%}
    {%- set claimable -%}
select map_from_entries(collect_list(struct(request_id, subject_type)))
from (
    select
        requests.request_id,
        vault.subject_type
    from {{ ctx.requests }} as requests
    left join {{ ctx.vault }} as vault on requests.subject_id = vault.subject_id
    where requests.status in {{ gdpr_lakehouse.request_status_in('unfinished') }}{{ gdpr_lakehouse._subject_filter(ids, 'requests.subject_id') }}
        and (not exists (
            select 1 from {{ ctx.holds }} as holds
            where holds.subject_id = requests.subject_id and holds.released_at is null
        ) or {{ gdpr_lakehouse._erasure_begun(ctx) }})
) as claim
    {%- endset -%}
    {%- set update -%}
update {{ ctx.requests }} as requests set
    status = 'erasing',
    status_reason = null,
    batch_id = '{{ ctx.batch }}',
    subject_type = coalesce(requests.subject_type, try_element_at(gdpr_erase_claim.claim, requests.request_id)),
    updated_at = current_timestamp()
where map_contains_key(gdpr_erase_claim.claim, requests.request_id)
    and requests.status in {{ gdpr_lakehouse.request_status_in('unfinished') }}
    {%- endset -%}
    {{ return(gdpr_lakehouse._with_variable_sql('gdpr_erase_claim', 'claim', 'map<string, string>', claimable, update)) }}
{%- endmacro %}

{% macro _fail_sql(step, ctx, attempts) -%}
merge into {{ ctx.requests }} as requests
using (select request_id from ({{ gdpr_lakehouse._batch_base(ctx) }}) as batch) as failed
on requests.request_id = failed.request_id
when matched then update set
    status = 'failed',
    status_reason = 'write conflicts on {{ step.relation_name }} after {{ attempts }} attempts; rerun gdpr_erase',
    updated_at = current_timestamp()
{%- endmacro %}

{#- Requests whose every relation is erased (or absent) become erased (a pseudonym an
    older version stored here is dropped); their tombstones then drop the encrypted
    pseudonym and keep only its hash (_unlink_erased_sql). The done requests and their
    shred times into a map variable, then one UPDATE (_with_variable_sql), which costs
    less than the MERGE this was: docs/guides/erase.md, "How fast". -#}
{% macro _complete_requests_sql(ctx) -%}
    {%- set done -%}
select map_from_entries(collect_list(struct(request_id, shredded_at)))
from (
    select
        batch.request_id,
        max(case when evidence.action = 'shred' then evidence.purged_at end) as shredded_at
    from ({{ gdpr_lakehouse._batch_base(ctx) }}) as batch
    left join {{ ctx.evidence }} as evidence on batch.request_id = evidence.request_id
    group by batch.request_id
    having count_if(evidence.status not in ('erased', 'absent')) = 0 and count(evidence.request_id) > 0
) as done
    {%- endset -%}
    {%- set update -%}
update {{ ctx.requests }} as requests set
    status = 'erased',
    shredded_at = coalesce(requests.shredded_at, try_element_at(gdpr_erase_done.shredded, requests.request_id)),
    erased_at = current_timestamp(),
    subject_pseudonym = null,
    updated_at = current_timestamp()
where map_contains_key(gdpr_erase_done.shredded, requests.request_id)
    {%- endset -%}
    {{ return(gdpr_lakehouse._with_variable_sql('gdpr_erase_done', 'shredded', 'map<string, timestamp>', done, update)) }}
{%- endmacro %}

{#- The tombstones of the requests just erased drop the pseudonym they held (encrypted
    under the tombstone key) while the erasure ran (a tombstone is shared by every request of its subject: not while one
    of them is unfinished). The hashes (macro tombstone_hash) into an array variable,
    then one UPDATE (_with_variable_sql). -#}
{% macro _unlink_erased_sql(ctx) -%}
    {#- the hash reads the key through java_method, which Spark counts non-deterministic:
        computed in a projection, then collected -#}
    {%- set hashes -%}
select collect_set(subject_hash)
from (
    select {{ gdpr_lakehouse.tombstone_hash('done.subject_id', keys=ctx.system_keys) }} as subject_hash
    from (
        select distinct requests.subject_id
        from {{ ctx.requests }} as requests
        where requests.status = 'erased' and requests.batch_id = '{{ ctx.batch }}'
            and not exists (
                select 1 from {{ ctx.requests }} as open
                where open.subject_id = requests.subject_id
                    and open.status in {{ gdpr_lakehouse.request_status_in('unfinished') }}
            )
    ) as done
) as erased
    {%- endset -%}
    {%- set update -%}
update {{ ctx.tombstones }} as tombstones set
    subject_pseudonym = null,
    pseudonym_enc = null
where array_contains(gdpr_erase_unlink.hashes, tombstones.subject_hash)
    and (tombstones.subject_pseudonym is not null or tombstones.pseudonym_enc is not null)
    {%- endset -%}
    {{ return(gdpr_lakehouse._with_variable_sql('gdpr_erase_unlink', 'hashes', 'array<string>', hashes, update)) }}
{%- endmacro %}

{#- The requests being erased: claimed by this run or left `erasing` by an interrupted
    one, with the subject's pseudonym from its tombstone (written first by the
    erasure, from the vault, encrypted under the tombstone key, and kept there until
    the erasure is done: a run resumed after the key was shredded still finds it).
    A ciphertext the tombstone key does not open stops the statement: read as NULL,
    it would leave the subject's rows in every relation keyed by pseudonym. Once
    gdpr_erase has cached the batch (_cache_batch, right after the tombstones), it is
    read from that cache. -#}
{% macro _batch_base(ctx) -%}
{%- if ctx.get('batch_cache') -%}
select request_id, subject_id, subject_type, subject_pseudonym, batch_id from {{ ctx.batch_cache }}
{%- else -%}
select
    requests.request_id,
    requests.subject_id,
    requests.subject_type,
    coalesce(
        requests.subject_pseudonym,
        tombstones.subject_pseudonym,
        case when tombstones.pseudonym_enc is not null then coalesce(
            {{ gdpr_lakehouse.decrypt_pii('tombstones.pseudonym_enc', gdpr_lakehouse.tombstone_key(ctx.system_keys), 'tombstones.subject_hash', 'pseudonym_enc',
                key_binding=gdpr_lakehouse.key_binding(system_key='tombstone')) }},
            raise_error('gdpr_erase: the tombstone key ({{ ctx.system_keys }}) does not open the pseudonym a tombstone holds for a running erasure; nothing was written. Restore the key: RESTORE TABLE {{ ctx.system_keys }} TO VERSION AS OF <v>')
        ) end
    ) as subject_pseudonym,
    requests.batch_id
from (
    {#- hashed in a projection: macro tombstone_hash -#}
    select *, {{ gdpr_lakehouse.tombstone_hash('subject_id', keys=ctx.system_keys) }} as subject_hash
    from {{ ctx.requests }}
    where status = 'erasing'
) as requests
left join {{ ctx.tombstones }} as tombstones
    on tombstones.subject_hash = requests.subject_hash
        and (tombstones.subject_pseudonym is not null or tombstones.pseudonym_enc is not null)
{%- endif -%}
{%- endmacro %}
