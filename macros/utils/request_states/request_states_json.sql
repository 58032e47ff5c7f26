{#
    The erasure request's states, declared once. Jinja reads them with request_states()
    and request_status_in(); the Python jobs render request_states_json() from this file
    (python_jobs/request_states.py). A request moves
        pending -> erasing -> erased -> purged
    and is held while a legal hold covers its subject (pending again when released), or
    failed when a write kept losing its commit race (resumed by the next gdpr_erase).
      open        not fulfilled and not lawfully held: counts against the deadline
      unfinished  open or held: the subject has a request that is not done
      begun       a batch took it on and did not finish (resumed under its batch id)
      fulfilled   the subject is erased (and, once purged, its old files are gone)
#}
{% macro request_states_json() -%}
    {{ return(adapter.dispatch('request_states_json', 'gdpr_lakehouse')()) }}
{%- endmacro %}

{% macro spark__request_states_json() -%}
{"states": ["pending", "erasing", "erased", "purged", "held", "failed"],
 "open": ["pending", "erasing", "failed"],
 "unfinished": ["pending", "erasing", "held", "failed"],
 "begun": ["erasing", "failed"],
 "fulfilled": ["erased", "purged"]}
{%- endmacro %}
