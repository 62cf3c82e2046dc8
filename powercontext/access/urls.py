"""Token and grant management routes under ``/v1/`` (docs/api.md)."""

from django.urls import path

from . import views

TOKEN = "tokens/<str:token_id>"  # noqa: S105 - a route

urlpatterns = [
    path("tokens", views.TokenCollectionView.as_view(), name="token-collection"),
    path(TOKEN, views.TokenDetailView.as_view(), name="token-detail"),
    path(f"{TOKEN}/revoke", views.TokenRevokeView.as_view(), name="token-revoke"),
    path(f"{TOKEN}/rotate", views.TokenRotateView.as_view(), name="token-rotate"),
    path(
        f"{TOKEN}/grants",
        views.TokenGrantCollectionView.as_view(),
        name="token-grants",
    ),
    path(
        f"{TOKEN}/grants/<str:scope>",
        views.TokenGrantDetailView.as_view(),
        name="token-grant-detail",
    ),
]
