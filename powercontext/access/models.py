"""API tokens and their grants.

A token is stored only as the SHA-256 of its secret (tokens are 256-bit random
values, so a fast hash is enough: there is nothing to brute-force) plus a short
visible prefix that identifies it in lists, logs and ``revoketoken``.
"""

from __future__ import annotations

from django.db import models

from powercontext.principals import Role

ROLE_CHOICES = [(role.value, role.value) for role in Role]
# Column widths, which ``tokens.token_request_check`` enforces before any write.
PREFIX_MAX_LENGTH = 16
PRINCIPAL_MAX_LENGTH = 150
GRANT_SCOPE_MAX_LENGTH = 256


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

    class Meta:
        verbose_name = "API token"
        indexes = [models.Index(fields=["principal"], name="api_token_principal_idx")]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.principal})"


class TokenGrant(models.Model):
    token = models.ForeignKey(ApiToken, on_delete=models.CASCADE, related_name="grants")
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
