"""Every URL pattern of the URL conf, for the bad-input tests that visit them all."""
from django.urls import URLPattern, URLResolver, get_resolver


def url_routes() -> list[tuple[str, type | None]]:
    """(route pattern, DRF view class or None) of every URL, in URL-conf order."""
    found = []

    def walk(patterns, prefix):
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                found.append((prefix + str(p.pattern), getattr(p.callback, "cls", None)))

    walk(get_resolver().url_patterns, "/")
    return found
