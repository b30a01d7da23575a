"""Small formatting filters for benchmark pages."""
from django import template

register = template.Library()


@register.filter
def ms(value, digits=3):
    """(mean, std) → "0.512 ± 0.034"; None → "–"."""
    if not value:
        return "–"
    mean, std = value
    if mean is None:
        return "–"
    return f"{mean:.{digits}f} ± {std:.{digits}f}" if std is not None else f"{mean:.{digits}f}"


@register.filter
def num(value, digits=3):
    if value is None or value == "":
        return "–"
    try:
        return f"{float(value):.{int(digits)}f}"
    except (TypeError, ValueError):
        return value


@register.filter
def get(mapping, key):
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.filter
def params(value):
    """A parameter dict as ``k1=1.2, b=0.75`` (never a raw Python dict on a page); empty → "defaults"."""
    if not value:
        return "defaults"
    if not isinstance(value, dict):
        return str(value)
    return ", ".join(f"{key}={val}" for key, val in value.items())
