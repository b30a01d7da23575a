"""The one confirmation page before a lasting change (delete, archive): what goes and what is kept, said plainly,
then one button that posts to the action. A refusal known in advance (the thing holds judgements) is shown
instead of the button."""
from __future__ import annotations

from django.shortcuts import render


def confirm_page(request, *, title: str, action: str, cancel: str, button: str, goes: list[str] = (),
                 stays: list[str] = (), refused: str | None = None, danger: bool = True, hidden: dict | None = None):
    return render(request, "frontend/confirm.html", {
        "title": title, "action": action, "cancel": cancel, "button": button, "goes": list(goes),
        "stays": list(stays), "refused": refused, "danger": danger, "hidden": sorted((hidden or {}).items())})
