"""Who am I, and token issue for API clients."""
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import NotAuthenticated, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.models import ApiToken
from core.parsers import DepthLimitedJSONParser
from core.roles import user_roles
from core.services import token_issue
from core.throttling import TokenFailureThrottle, token_limit


class MeApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=inline_serializer("Me", {
        "username": serializers.CharField(), "roles": serializers.ListField(child=serializers.CharField()),
        "is_staff": serializers.BooleanField()}))
    def get(self, request):
        user = request.user
        return Response({"username": user.username, "roles": sorted(user_roles(user)), "is_staff": user.is_staff})


@method_decorator(never_cache, name="dispatch")  # Cache-Control: no-store: an answer may hold a key
class TokenApi(ObtainAuthToken):
    """POST username and password; returns a new API token (send it as `Authorization: Token <key>`), which
    replaces the user's previous one. Only its digest is stored: keep the key, it is not shown again.

    Too many wrong passwords from one address get 429 (core.throttling).
    DELETE (authenticated) revokes the caller's own token: 204, and the key no longer authenticates."""

    throttle_classes = [TokenFailureThrottle]
    parser_classes = (FormParser, MultiPartParser, DepthLimitedJSONParser)  # DRF's view names its own parsers

    def post(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            if "non_field_errors" in serializer.errors:  # the credentials were checked and are wrong
                token_limit().record_failure(request)
            raise ValidationError(serializer.errors)
        return Response({"token": token_issue(user=serializer.validated_data["user"])})

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, *args, **kwargs):
        """Revoke the caller's own token (send it, or be logged in): 204, and the key no longer authenticates."""
        if not request.user or not request.user.is_authenticated:
            raise NotAuthenticated("Send the token to revoke (Authorization: Token <key>) or log in.")
        ApiToken.objects.filter(user=request.user).delete()
        return Response(status=204)
