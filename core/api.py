"""Who am I, and token issue for API clients."""
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import NotAuthenticated, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.authentication import token_for
from core.parsers import DepthLimitedJSONParser
from core.roles import user_roles
from core.throttling import TokenFailureThrottle, token_limit


class MeApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=inline_serializer("Me", {
        "username": serializers.CharField(), "roles": serializers.ListField(child=serializers.CharField()),
        "is_staff": serializers.BooleanField()}))
    def get(self, request):
        user = request.user
        return Response({"username": user.username, "roles": sorted(user_roles(user)), "is_staff": user.is_staff})


class TokenApi(ObtainAuthToken):
    """POST username and password; returns the user's API token (send it as `Authorization: Token <key>`).

    Too many wrong passwords from one address get 429 (core.throttling); an expired token is replaced.
    DELETE (authenticated) revokes the caller's own token: 204, and the key no longer authenticates."""

    throttle_classes = [TokenFailureThrottle]
    parser_classes = (FormParser, MultiPartParser, DepthLimitedJSONParser)  # DRF's view names its own parsers

    def post(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            if "non_field_errors" in serializer.errors:  # the credentials were checked and are wrong
                token_limit().record_failure(request)
            raise ValidationError(serializer.errors)
        return Response({"token": token_for(serializer.validated_data["user"]).key})

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, *args, **kwargs):
        if not request.user or not request.user.is_authenticated:
            raise NotAuthenticated("Send the token to revoke (Authorization: Token <key>) or log in.")
        Token.objects.filter(user=request.user).delete()
        return Response(status=204)
