"""Registry routes under ``/v1/``. Trailing ids use the ``path`` converter so ids
containing ``/`` (sent as ``%2F``) round-trip."""

from django.urls import path

from . import views

urlpatterns = [
    path("scopes", views.ScopeCollectionView.as_view(), name="scope-collection"),
    path("scopes/<str:scope_id>", views.ScopeDetailView.as_view(), name="scope-detail"),
]
