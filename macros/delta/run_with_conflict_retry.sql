{#
    Run one Delta write, retrying it when a concurrent writer wins the commit race
    (Delta's transaction conflicts all carry SQLSTATE 2D521: ConcurrentAppend,
    ConcurrentDeleteRead, ConcurrentDeleteDelete, ConcurrentTransaction,
    MetadataChanged). dbt's Jinja cannot catch an error, so the retry loop is a Spark
    SQL script (Spark 4 / Databricks SQL scripting) whose exit handler catches only
    that SQLSTATE; any other error fails at once. Between attempts it backs off
    exponentially with jitter (0.5 s doubling to at most 8 s, each wait between half
    and all of that), so a retry lands in a gap between a periodic writer's commits
    instead of racing it again at once. Returns {attempts, done}: done is false when every attempt
    hit a conflict, and the caller reports that; the write itself must be idempotent.
#}
{% macro run_with_conflict_retry(write_sql, max_attempts=none) -%}
    {{ return(adapter.dispatch('run_with_conflict_retry', 'gdpr_lakehouse')(write_sql, max_attempts)) }}
{%- endmacro %}

{% macro spark__run_with_conflict_retry(write_sql, max_attempts=none) -%}
    {%- set limit = max_attempts if max_attempts is not none else var('erasure_max_attempts', 8) -%}
    {%- if limit is not number or limit is sameas true or limit is sameas false or limit < 1 or limit > 50 -%}
        {%- do exceptions.raise_compiler_error("var erasure_max_attempts is " ~ (limit | string)[:40] ~ "; it must be a whole number from 1 to 50") -%}
    {%- endif -%}
    {%- set script = gdpr_lakehouse._conflict_retry_script(write_sql, limit | int) -%}
    {%- if not execute -%}{{ return({'attempts': 0, 'done': false, 'sql': script}) }}{%- endif -%}
    {%- set result = run_query(script) -%}
    {{ return({'attempts': result.rows[0][0] | int, 'done': result.rows[0][1], 'sql': script}) }}
{%- endmacro %}

{#- The retry loop as one Spark SQL script. -#}
{% macro _conflict_retry_script(write_sql, limit) -%}
begin
    declare attempt int default 0;
    declare done boolean default false;
    while not done and attempt < {{ limit }} do
        set attempt = attempt + 1;
        if attempt > 1 then
            select java_method('java.lang.Thread', 'sleep',
                cast(least(8000, 500 * pow(2, attempt - 2)) * (0.5 + rand() / 2) as bigint));
        end if;
        begin
            declare exit handler for sqlstate '2D521' begin set done = false; end;
            {{ write_sql | trim | trim(';') }};
            set done = true;
        end;
    end while;
    select attempt as attempts, done;
end
{%- endmacro %}
