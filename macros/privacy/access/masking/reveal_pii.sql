{#- A PII column for a masked view: decrypted for PII readers, else the mask
    (`'***'`, or the e-mail's domain only with mask='email'). A consumer whose process
    holds no key-encryption key reads NULL instead of an error (decrypt_pii
    required=false); so does a value moved from another row or column. The stored view
    text names the KEK's variable, never the key. owner_expr and column: as
    decrypt_pii. -#}
{% macro reveal_pii(cipher_expr, key_expr, owner_expr, column, mask='***') -%}
    {{ return(adapter.dispatch('reveal_pii', 'gdpr_lakehouse')(cipher_expr, key_expr, owner_expr, column, mask)) }}
{%- endmacro %}

{% macro spark__reveal_pii(cipher_expr, key_expr, owner_expr, column, mask='***') -%}
    {%- set plaintext = gdpr_lakehouse.decrypt_pii(cipher_expr, key_expr, owner_expr, column, required=false) -%}
    case
        when {{ gdpr_lakehouse.is_pii_reader() }} then {{ plaintext }}
        {%- if mask == 'email' %}
        else regexp_replace({{ plaintext }}, '^[^@]+', '***')
        {%- else %}
        else '{{ mask | replace("'", "") }}'
        {%- endif %}
    end
{%- endmacro %}
