"""Home-page sections contributed by apps: (template name, role that sees it, order)."""
from core.registries import Registry

_SECTIONS: Registry[int] = Registry("home-page section")  # (template, role) -> order


def register(template: str, role: str, order: int = 50) -> None:
    _SECTIONS.add((template, role), order)


def for_user(user) -> list[str]:
    from core.roles import has_role

    return [template for (template, role), _ in sorted(_SECTIONS.items(), key=lambda item: (item[1], item[0]))
            if has_role(user, role)]
