"""What sources tells the apps built on it, without importing them.

``scope_created`` is sent inside the durable transaction that creates a scope,
after its rows are written, with ``scope_id``, ``principal`` (the creator) and
``request_id``. Receivers run in that transaction: what they write commits with
the scope, and an exception they raise rolls the creation back (``send``, not
``send_robust``). The access app's receiver gives the creator's principal
``admin`` on the new scope (``powercontext/access/scopes.py``); sources itself
knows nothing of grants, so the two apps do not import each other
(docs/decisions/0040-layers-without-cycles.md).
"""

from __future__ import annotations

from django.dispatch import Signal

scope_created = Signal()
