"""A password change revokes the user's API token.

`set_password` keeps the new raw password on the instance until the save (`AbstractBaseUser._password`),
so the change is seen without reading the old hash: every path that changes a password (the admin site,
`changepassword`, `core.services.user_create_or_update`, a reset) goes through it. The token goes in the
same transaction as the save; the client asks /api/v1/auth/token/ with the new password for a new one."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

from core.models import ApiToken


@receiver(pre_save, sender=get_user_model())
def _note_password_change(sender, instance, update_fields=None, **kwargs):
    instance._similia_password_changed = (
        instance.pk is not None and getattr(instance, "_password", None) is not None
        and (update_fields is None or "password" in update_fields))


@receiver(post_save, sender=get_user_model())
def _revoke_tokens_on_password_change(sender, instance, created, **kwargs):
    if not created and getattr(instance, "_similia_password_changed", False):
        instance._similia_password_changed = False
        ApiToken.objects.filter(user=instance).delete()
