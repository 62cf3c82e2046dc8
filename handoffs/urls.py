"""Evidence and handoff routes under ``/v1/``."""

from django.urls import path

from . import views

urlpatterns = [
    path(
        "scopes/<str:scope_id>/evidence/resolve",
        views.EvidenceResolveView.as_view(),
        name="evidence-resolve",
    ),
    path(
        "handoff/finalize", views.FinalizeHandoffView.as_view(), name="handoff-finalize"
    ),
    path("handoff/commit", views.CommitHandoffView.as_view(), name="handoff-commit"),
    path(
        "handoff/continue", views.ContinueHandoffView.as_view(), name="handoff-continue"
    ),
    path("handoff/hint", views.PrepareHandoffHintView.as_view(), name="handoff-hint"),
    path("handoff/prepare", views.PrepareHandoffView.as_view(), name="handoff-prepare"),
    path(
        "handoff/activate",
        views.ActivateHandoffView.as_view(),
        name="handoff-activate",
    ),
]
