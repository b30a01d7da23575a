from django.contrib import admin
from django.urls import include, path
from django.views.decorators.csrf import csrf_protect
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from core.throttling import throttled_admin_login

api_v1 = [
    path("", include("core.urls")),
    path("", include("jobs.urls")),
    path("", include("benchmarks.urls")),
    path("", include("annotation.urls")),
    path("", include("detection.urls")),
    path("", include("workbench.urls")),
]

urlpatterns = [
    path("admin/login/", csrf_protect(throttled_admin_login(admin.site.login)), name="admin-login-throttled"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema", template_name="frontend/redoc.html"),
         name="api-redoc"),
    path("api/v1/", include(api_v1)),
    path("", include("annotation.page_urls")),
    path("benchmarks/", include("benchmarks.page_urls")),
    path("workbench/", include("workbench.page_urls")),
    path("corpora/", include("detection.page_urls")),
    path("", include("frontend.urls")),
]

# No view's error reaches a user as a stack trace; an outage (database, cache) is a 503 with Retry-After.
handler500 = "core.server_errors.server_error"
