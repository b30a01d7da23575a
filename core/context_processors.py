from core.roles import ALL_ROLES, has_role


def roles(request):
    """Exposes `roles.<name>` booleans to templates, for role-based navigation."""
    user = getattr(request, "user", None)
    return {"roles": {name: bool(user) and has_role(user, name) for name in ALL_ROLES}}
