"""`fixed`: Django's `floatformat:N` (N ≥ 0) for this English-only site without the locale lookups,
which made most of the dashboard's rendering time (1,500 numbers). Same rounding: half up on the
number's decimal representation; "" for what is not a number (so `|default:"–"` still applies)."""
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation

from django import template

register = template.Library()


@register.filter(is_safe=True)
def fixed(value, places=3):
    if value is None or value == "":
        return ""
    try:
        d = Decimal(str(value))
    except InvalidOperation:
        try:
            d = Decimal(str(float(value)))
        except (ValueError, InvalidOperation, TypeError):
            return ""
    if not d.is_finite():
        return str(value)
    p = int(places)
    sign, digits, exponent = d.as_tuple()
    if len(digits) + abs(exponent) > 200:  # as floatformat: huge numbers as they are
        return str(value)
    rounded = d.quantize(Decimal(1).scaleb(-p), ROUND_HALF_UP, Context(prec=max(28, len(digits) + abs(exponent) + p + 1)))
    if not rounded:
        rounded = abs(rounded)  # floatformat writes no "-0.000"
    return f"{rounded:f}"
