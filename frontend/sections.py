"""Home-page sections contributed by apps: (template name, role that sees it, order)."""
_SECTIONS: list[tuple[int, str, str]] = []


def register(template: str, role: str, order: int = 50) -> None:
    if (order, template, role) not in _SECTIONS:
        _SECTIONS.append((order, template, role))


def for_user(user) -> list[str]:
    from core.roles import has_role

    return [template for _, template, role in sorted(_SECTIONS) if has_role(user, role)]
