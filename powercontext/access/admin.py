"""Admin for API tokens: mint (the secret is shown once), view, revoke.

Tokens are never edited or deleted here: revocation keeps the row for audit.
Minting follows the API's principal rule (``identities``): a superuser names any
principal but a reserved one; other staff get principals under ``admin:USER/``.
Staff permissions mean what they say (spec/limits.md 5): minting needs the add
permission and only superusers mint ``*`` grants; revoking needs the change
permission. A minted secret is shown on a page of its own, never put in a
message (Django's message storage keeps messages in a cookie the browser and its
extensions can read), and that page is not cached.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.management.base import CommandError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers

from powercontext.admintools import ExactSearchMixin, ReadOnlyAdminMixin
from powercontext.exceptions import InvalidRequest
from powercontext.principals import ALL_SCOPES, Role

from .changes import Actor
from .exceptions import PrincipalNotYours
from .identities import principal_name_for, principal_owned_or_refuse
from .management.commands.createtoken import grants_check, parse_grant
from .models import (
    AccessChange,
    ApiToken,
    PrincipalGrant,
    PrincipalRecord,
    TokenGrant,
)
from .tokens import token_create, token_request_check, token_revoke

# token_request_check's ``details.field`` -> the form field to show it on.
_FORM_FIELD = {
    "principal": "principal",
    "name": "principal",
    "grants": "grants_text",
    "expires_at": "expires_at",
}


def _admin_actor(request: HttpRequest) -> Actor:
    """The admin user making a change, as its change record names it."""
    return Actor(f"admin:{request.user.get_username()}")


class TokenMintForm(forms.ModelForm):
    grants_text = forms.CharField(
        label="Grants",
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=(
            "One SCOPE:ROLE per line; SCOPE a scope id or *, "
            "ROLE viewer|contributor|admin."
        ),
    )

    class Meta:
        model = ApiToken
        fields = ["principal", "expires_at"]

    def clean_grants_text(self) -> list[tuple[str, Role]]:
        lines = [line.strip() for line in self.cleaned_data["grants_text"].splitlines()]
        try:
            grants = [parse_grant(line) for line in lines if line]
        except CommandError as exc:
            raise forms.ValidationError(str(exc)) from None
        if not grants:
            raise forms.ValidationError("Give at least one SCOPE:ROLE grant.")
        return grants

    superuser = False  # set per request by ApiTokenAdmin.get_form
    # None for a superuser (an operator: names any principal); ``admin:USER``
    # for other staff, whose principals are created under that name.
    owner: str | None = None

    def clean(self) -> dict[str, Any]:
        """The rules ``createtoken`` applies, so the add view never writes bad rows."""
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        grants = cleaned["grants_text"]
        if not self.superuser and any(scope == ALL_SCOPES for scope, _ in grants):
            self.add_error(
                "grants_text", "Only a superuser may mint grants on every scope (*)."
            )
            return cleaned
        try:
            cleaned["principal"] = principal_name_for(
                requested=cleaned["principal"], owner=self.owner
            )
            principal_owned_or_refuse(name=cleaned["principal"], owner=self.owner)
            token_request_check(
                principal=cleaned["principal"],
                grants=grants,
                expires_at=cleaned.get("expires_at"),
                now=timezone.now(),
            )
            grants_check(grants)
        except InvalidRequest as exc:
            field = str((exc.details or {}).get("field"))
            self.add_error(_FORM_FIELD.get(field), exc.message)
        except PrincipalNotYours as exc:
            self.add_error("principal", exc.message)
        except CommandError as exc:
            self.add_error("grants_text", str(exc))
        return cleaned


class TokenGrantInline(admin.TabularInline):
    model = TokenGrant
    extra = 0
    can_delete = False
    readonly_fields = ["scope_id", "role"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(ExactSearchMixin, admin.ModelAdmin):
    list_display = [
        "prefix",
        "principal",
        "revoked",
        "expires_at",
        "last_used_at",
        "created_at",
    ]
    list_filter = ["revoked"]
    search_fields = ["prefix"]
    exact_search_fields = ("prefix", "principal")
    readonly_fields = [
        "prefix",
        "principal",
        "created_at",
        "expires_at",
        "revoked",
        "revoked_at",
        "last_used_at",
        "created_by",
    ]
    inlines = [TokenGrantInline]
    actions = ["revoke_tokens"]

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is None:
            superuser = bool(getattr(request.user, "is_superuser", False))
            kwargs["form"] = type(
                "TokenMintForm",
                (TokenMintForm,),
                {
                    "superuser": superuser,
                    "owner": None if superuser else _admin_actor(request).name,
                },
            )
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.readonly_fields if obj is not None else []

    def get_inlines(self, request: HttpRequest, obj: Any) -> Any:
        return self.inlines if obj is not None else []

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ["principal", "grants_text", "expires_at"]
        return self.readonly_fields

    def save_model(
        self, request: HttpRequest, obj: ApiToken, form: Any, change: bool
    ) -> None:
        if change:
            return
        token, raw = token_create(
            principal=form.cleaned_data["principal"],
            grants=form.cleaned_data["grants_text"],
            expires_at=form.cleaned_data.get("expires_at"),
            actor=_admin_actor(request),
            owner=form.owner,
        )
        # The admin continues with ``obj``; make it the row the service wrote.
        obj.pk = token.pk
        obj.prefix = token.prefix
        obj.created_at = token.created_at
        obj._state.adding = False
        request._minted_secret = raw  # type: ignore[attr-defined]

    def response_add(
        self, request: HttpRequest, obj: ApiToken, post_url_continue: Any = None
    ) -> HttpResponse:
        """The secret on a page of its own, once, not cached."""
        response = TemplateResponse(
            request,
            "admin/api/apitoken/minted.html",
            {
                **self.admin_site.each_context(request),
                "token": obj,
                "secret": request._minted_secret,  # type: ignore[attr-defined]
                "change_url": reverse(
                    f"{self.admin_site.name}:api_apitoken_change", args=[obj.pk]
                ),
                "list_url": reverse(f"{self.admin_site.name}:api_apitoken_changelist"),
                "opts": self.opts,
            },
        )
        add_never_cache_headers(response)
        return response

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        """Revoking changes a token: it needs the change permission."""
        return bool(request.user.has_perm("api.change_apitoken"))

    @admin.action(description="Revoke selected tokens", permissions=["revoke"])
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset:
            token_revoke(prefix=token.prefix, actor=_admin_actor(request))
        messages.success(request, f"Revoked {queryset.count()} token(s).")


@admin.register(AccessChange)
class AccessChangeAdmin(ReadOnlyAdminMixin, ExactSearchMixin, admin.ModelAdmin):
    """Every change to tokens and grants, read-only (spec/access.md 1)."""

    list_display = [
        "at",
        "actor",
        "action",
        "token_prefix",
        "principal",
        "scope_id",
        "role",
        "request_id",
    ]
    list_filter = ["action"]
    search_fields = ["actor"]
    exact_search_fields = (
        "actor",
        "token_prefix",
        "principal",
        "scope_id",
        "request_id",
    )
    readonly_fields = [field.name for field in AccessChange._meta.fields]
    ordering = ["-id"]


@admin.register(PrincipalGrant)
class PrincipalGrantAdmin(ReadOnlyAdminMixin, ExactSearchMixin, admin.ModelAdmin):
    """Grants every token of a principal holds (a scope's creator is its admin)."""

    list_display = ["principal", "scope_id", "role", "created_at"]
    search_fields = ["principal"]
    exact_search_fields = ("principal", "scope_id")
    readonly_fields = ["principal", "scope_id", "role", "created_at"]


@admin.register(PrincipalRecord)
class PrincipalRecordAdmin(ReadOnlyAdminMixin, ExactSearchMixin, admin.ModelAdmin):
    """Principals: who created each and who may mint for it (decision 0031)."""

    list_display = ["name", "owner", "created_by", "created_at"]
    search_fields = ["name"]
    exact_search_fields = ("name", "owner", "created_by")
    readonly_fields = ["name", "owner", "created_by", "created_at"]
    ordering = ["name"]
