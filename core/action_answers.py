"""What an API action that changes or removes an object answers, in every app: a sentence saying what was done
(`done`, the message the page shows after the same action), and the plan of a deletion or archiving (`plan_answer`:
what goes, what is kept, and why it is refused when it is: what the confirmation page, `frontend/confirm.py`,
shows before it)."""
from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response


class DoneSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="what was done, in words (what the page says)")


class PlanSerializer(serializers.Serializer):
    """What a deletion (or archiving) removes and keeps; ``refused`` says why it cannot be done, when it cannot
    (the action then answers 409 or 400 with that reason)."""

    goes = serializers.ListField(child=serializers.CharField())
    stays = serializers.ListField(child=serializers.CharField())
    refused = serializers.CharField(allow_null=True, help_text="null when the action can be done")


def done(message: str) -> Response:
    return Response({"detail": message})


def plan_answer(plan: dict) -> Response:
    return Response({"goes": list(plan.get("goes", [])), "stays": list(plan.get("stays", [])),
                     "refused": plan.get("refused")})
