"""Registry routes under ``/v1/``, derived from the declarations in ``operations.py``.

A trailing ``source_id`` may hold any character an identity may: ``/`` (sent as
``%2F``, decoded by the server before routing), ``%``, ``?``, ``#``, spaces,
control characters and line feeds. It is captured by the ``identity`` converter
(``[\\s\\S]+``: Django's ``path`` converter stops at a line feed), and it is always
the **last** segment of its route: no route puts a fixed suffix after an id, so
an id ending in ``/attempts`` or ``/window`` can never be read as another route
(docs/decisions/0005-trailing-identity-routes.md).
"""

from django.urls import register_converter

from powercontext.api.operations import routes

from .operations import MEMORY_OPERATIONS, OPERATIONS, SCOPE


class IdentityConverter:
    """Any non-empty text, line feeds included (the rest of the path)."""

    regex = r"[\s\S]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(IdentityConverter, "identity")

# Routed before every other route (powercontext/urls.py): the busiest requests,
# on paths no other route can match - fixed text, or one segment after
# ``scopes/`` where every other scope route has more. URL resolution tries routes
# in order, and each miss costs about as much as a regular expression search.
first_urlpatterns = routes(
    OPERATIONS,
    "capture-working-note",
    "capture-content",
    # Before scope-detail, which would read ``default`` as a scope id (none is).
    "scope-default",
    "scope-detail",
    "scope-collection",
)

urlpatterns = routes(
    OPERATIONS,
    *(operation.route.name for operation in MEMORY_OPERATIONS),
    "source-collection",
    "source-window",
    "source-audit-collection",
    "source-search",
    "source-audit-detail",
    "source-attempts",
    "source-detail",
)

__all__ = ["SCOPE", "first_urlpatterns", "urlpatterns"]
