"""Every page of the admin audit console, listed from the admin site itself.

For each registered model admin: its list, the list under every choice of every
filter it offers (as the filter sidebar links them), its last page, with the facet
counts asked for, searched by each exact-search field of a sample row, and the
sample row's own page. A model admin registered later is covered without editing this file.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.contrib.admin.views.main import IS_FACETS_VAR, PAGE_VAR
from django.db.models import Model
from django.test import RequestFactory
from django.urls import reverse


def console_pages(user: Any, samples: dict[type[Model], Model]) -> list[str]:
    """The URLs of every console page; ``samples`` picks the row shown per model
    (default: the newest row)."""
    pages = [reverse("admin:index")]
    for model, model_admin in admin.site._registry.items():
        changelist = reverse(
            f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"
        )
        pages.append(changelist)
        pages.append(f"{changelist}?{IS_FACETS_VAR}=True")
        pages.extend(_filtered(changelist, model_admin, user))
        sample = samples.get(model) or model._default_manager.order_by("-pk").first()
        if sample is None:
            continue
        for field in getattr(model_admin, "exact_search_fields", ()):
            term = (
                model._default_manager.filter(pk=sample.pk)
                .values_list(field, flat=True)
                .get()
            )
            if term is not None:
                pages.append(f"{changelist}?{urlencode({'q': term})}")
        pages.append(
            reverse(
                f"admin:{model._meta.app_label}_{model._meta.model_name}_change",
                args=[sample.pk],
            )
        )
    return list(dict.fromkeys(pages))


def _filtered(changelist: str, model_admin: Any, user: Any) -> list[str]:
    """The list under each filter choice the sidebar offers, and its last page."""
    request = RequestFactory().get(changelist)
    request.user = user
    cl = model_admin.get_changelist_instance(request)
    pages = [
        f"{changelist}{choice['query_string']}"
        for spec in cl.filter_specs
        for choice in spec.choices(cl)
        if choice["query_string"] != "?"
    ]
    if cl.paginator.num_pages > 1:
        pages.append(f"{changelist}?{PAGE_VAR}={cl.paginator.num_pages}")
    return pages
