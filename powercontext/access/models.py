"""API tokens and their grants.

A token is stored only as the SHA-256 of its secret (tokens are 256-bit random
values, so a fast hash is enough: there is nothing to brute-force) plus a short
visible prefix that identifies it in lists, logs and ``revoketoken``.
"""

from __future__ import annotations

from django.db import models

from powercontext.db.immutable import ImmutableModel
from powercontext.principals import Role

ROLE_CHOICES = [(role.value, role.value) for role in Role]
# Column widths, which ``tokens.token_request_check`` enforces before any write.
PREFIX_MAX_LENGTH = 16
PRINCIPAL_MAX_LENGTH = 150
GRANT_SCOPE_MAX_LENGTH = 256


class PrincipalRecord(models.Model):
    """A principal: the identity every token of its name acts as.

    Created by the first mint for its name (never deleted, never renamed). Who may
    mint for it is decided by ``owner`` (``access.identities``): a blank owner is
    controlled by operators only (``*:admin``, ``createtoken``, a superuser in
    the admin); otherwise by the principal (or ``admin:USER``) it is namespaced
    under, whose name it starts with.
    """

    name = models.CharField(max_length=PRINCIPAL_MAX_LENGTH)
    owner = models.CharField(
        max_length=PRINCIPAL_MAX_LENGTH,
        blank=True,
        help_text="Who may mint for it besides operators: a principal or admin:USER.",
    )
    created_by = models.CharField(
        max_length=PRINCIPAL_MAX_LENGTH,
        help_text="Who created it: a principal, admin:USER, cli:NAME or migration.",
    )
    created_at = models.DateTimeField()

    class Meta:
        verbose_name = "principal"
        constraints = [
            models.UniqueConstraint(fields=["name"], name="api_principal_name_uniq"),
        ]

    def __str__(self) -> str:
        return self.name


class ApiToken(models.Model):
    prefix = models.CharField(
        max_length=PREFIX_MAX_LENGTH,
        unique=True,
        help_text="Visible start of the token.",
    )
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    principal = models.CharField(
        max_length=PRINCIPAL_MAX_LENGTH, help_text="Who acts with this token."
    )
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked = models.BooleanField(default=False)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_by = models.CharField(
        max_length=PRINCIPAL_MAX_LENGTH,
        blank=True,
        db_default="",  # old workers insert tokens without it while migrating
        help_text="Who minted it: a principal, admin:USER or cli:createtoken.",
    )

    class Meta:
        verbose_name = "API token"
        indexes = [models.Index(fields=["principal"], name="api_token_principal_idx")]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.principal})"


class TokenGrant(models.Model):
    # Indexed by api_grant_token_scope_uniq, which leads with it.
    token = models.ForeignKey(
        ApiToken, on_delete=models.CASCADE, related_name="grants", db_index=False
    )
    scope_id = models.CharField(
        max_length=GRANT_SCOPE_MAX_LENGTH,
        help_text='A scope id, or "*" for every scope.',
    )
    role = models.CharField(max_length=16, choices=ROLE_CHOICES)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["token", "scope_id"], name="api_grant_token_scope_uniq"
            ),
            models.CheckConstraint(
                condition=models.Q(role__in=[role.value for role in Role]),
                name="api_grant_role_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope_id}:{self.role}"


class PrincipalGrant(models.Model):
    """A grant held by every token of a principal (a scope's creator is its admin).

    Read with the token's own grants on every authentication (one query); a token
    acts with the higher of the two roles on a scope.
    """

    principal = models.CharField(max_length=PRINCIPAL_MAX_LENGTH)
    scope_id = models.CharField(max_length=GRANT_SCOPE_MAX_LENGTH)
    role = models.CharField(max_length=16, choices=ROLE_CHOICES)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["principal", "scope_id"], name="api_pgrant_principal_scope_uniq"
            ),
            models.CheckConstraint(
                condition=models.Q(role__in=[role.value for role in Role]),
                name="api_pgrant_role_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.principal}: {self.scope_id}:{self.role}"


class AccessAction(models.TextChoices):
    MINT = "mint"
    REVOKE = "revoke"
    ROTATE = "rotate"
    EXPIRY = "expiry"
    GRANT_ADD = "grant_add"
    GRANT_REMOVE = "grant_remove"
    PRINCIPAL_GRANT_ADD = "principal_grant_add"
    PRINCIPAL_CREATE = "principal_create"


class AccessChange(ImmutableModel):
    """One change to tokens or grants: who, what, when, from which request.

    Written in the transaction of the change it records; never changed or deleted
    (PostgreSQL triggers refuse UPDATE, DELETE and TRUNCATE).
    """

    at = models.DateTimeField()
    actor = models.CharField(
        max_length=PRINCIPAL_MAX_LENGTH,
        help_text="The principal, admin user (admin:NAME) or command (cli:NAME).",
    )
    actor_token_id = models.BigIntegerField(null=True, blank=True)
    request_id = models.CharField(max_length=16, blank=True)
    action = models.CharField(max_length=32, choices=AccessAction.choices)
    token_id = models.BigIntegerField(null=True, blank=True)
    token_prefix = models.CharField(max_length=PREFIX_MAX_LENGTH, blank=True)
    principal = models.CharField(max_length=PRINCIPAL_MAX_LENGTH)
    scope_id = models.CharField(max_length=GRANT_SCOPE_MAX_LENGTH, blank=True)
    role = models.CharField(max_length=16, blank=True)
    detail = models.JSONField(default=dict)

    class Meta:
        indexes = [
            models.Index(fields=["token_id", "id"], name="api_change_token_idx"),
            models.Index(fields=["scope_id", "id"], name="api_change_scope_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%dT%H:%M:%SZ} {self.actor} {self.action}"
