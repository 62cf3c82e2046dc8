"""``manage.py seed_sources``: fill a scope with N Sources quickly, for benchmarks.

The rows are written by ``sources.seeding`` exactly as capture would store them.
A share of the Sources (``--notes``) are Working Notes spread over ``--sessions``
session ids and the five note kinds, the rest plain Sources: exactly
``round(N * share)`` of N (halves to even, as Python rounds), spread evenly.

Every option is checked before anything is written, and so is the prefix: when
any of the ids PREFIX1..PREFIXN already names a Source of the scope, the command
refuses. A capture that takes one of those ids while seeding runs costs only the
batch it lands in (the identity constraint decides); the error says what was
written.
"""

from __future__ import annotations

import secrets
from fractions import Fraction
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import IntegrityError
from django.utils import timezone
from tqdm import tqdm

from powercontext.cli import ExplainedCommand, decimal_fraction, decimal_integer
from powercontext.db.constraints import violates_constraint
from powercontext.exceptions import RequestValidationError
from powercontext.inputs import validate_input
from powercontext.principals import SEED_PRINCIPAL, Principal
from powercontext.text import IDENTITY_MAX_LENGTH, text_problem
from sources.inputs import ScopeCreate
from sources.models import ContentSource, Scope
from sources.seeding import (
    COLLISIONS_SHOWN,
    SeedPlan,
    seed_batch,
    seed_collisions,
)
from sources.services import scope_create
from sources.services.capture import IDENTITY_CONSTRAINT


class Command(ExplainedCommand):
    help = (
        "Seed a scope with N Sources (bulk insert; positions and digests as capture)."
    )
    explanation = """
        For benchmarks and trials: writes N Sources into an existing scope
        (--scope) or a new one (--create-scope), exactly as capture stores them
        - canonical content, digests, gap-free positions, an accepted attempt
        each - so they replay and conflict like captured ones. A share of them
        (--notes) are Working Notes spread over --sessions session ids and the
        five kinds. Batches of --batch rows are one transaction each (COPY on
        PostgreSQL), so captures may run meanwhile. Every option and the ids
        PREFIX1..PREFIXN are checked before anything is written. A progress bar
        goes to stderr (--no-progress turns it off); the scope id is printed on
        stdout.

          .venv/bin/python manage.py seed_sources 1000000 --create-scope 'Bench'
          .venv/bin/python manage.py seed_sources 5000 --scope scp_0123... --notes 0.5
        """

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "count", type=decimal_integer, help="how many Sources to add"
        )
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--scope", help="an existing scope id")
        target.add_argument(
            "--create-scope",
            metavar="TITLE",
            help="create a new scope with this title and seed it",
        )
        parser.add_argument(
            "--notes",
            type=decimal_fraction,
            default=Fraction(1, 4),
            help="share of Working Notes, 0..1 (default 0.25)",
        )
        parser.add_argument(
            "--sessions",
            type=decimal_integer,
            default=100,
            help="session ids the notes are spread over (default 100)",
        )
        parser.add_argument(
            "--batch",
            type=decimal_integer,
            default=10_000,
            help="Sources written per transaction (default 10000)",
        )
        parser.add_argument(
            "--prefix",
            default=None,
            help="source id prefix (default seed-<random>-), ids are PREFIX<n>",
        )
        parser.add_argument(
            "--no-progress", action="store_true", help="print no progress bar"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        count, batch = options["count"], options["batch"]
        share = Fraction(options["notes"])
        _check_options(count=count, batch=batch, share=share, options=options)
        prefix = options["prefix"] or f"seed-{secrets.token_hex(4)}-"
        _check_prefix(prefix, count)
        if options["scope"] is not None:
            scope_id = options["scope"]
            _check_scope(scope_id)
            _check_collisions(scope_id=scope_id, prefix=prefix, count=count)
        else:
            scope_id = self._new_scope(options["create_scope"])
        plan = SeedPlan(
            scope_id=scope_id,
            prefix=prefix,
            count=count,
            notes=round(count * share),
            sessions=options["sessions"],
            request_id=secrets.token_hex(8),
            created_at=timezone.now(),
        )
        with tqdm(
            total=count, unit="src", disable=options["no_progress"], smoothing=0.1
        ) as progress:
            done = 0
            while done < count:
                size = min(batch, count - done)
                first = _seed_batch_or_explain(plan, offset=done, size=size)
                done += size
                progress.update(size)
        self.stderr.write(
            f"Seeded {count} Sources ({plan.notes} Working Notes) into {scope_id} "
            f"(ids {plan.prefix}1..{plan.prefix}{count}; last position "
            f"{first + size - 1})."
        )
        self.stdout.write(scope_id)

    def _new_scope(self, title: str) -> str:
        """Create the scope to seed; its title is checked as the API checks it."""
        problem = text_problem(title)
        if problem:
            raise CommandError(f"Bad --create-scope title: title {problem}.")
        fields = {
            "title": title,
            "summary": f"Seeded by manage.py seed_sources: {title}",
            "idempotency_key": f"seed-{secrets.token_hex(8)}",
        }
        try:
            validate_input(ScopeCreate, fields, where="option")
        except RequestValidationError as invalid:
            problems = "; ".join(
                f"{error['loc'][-1]}: {error['msg']}" for error in invalid.errors
            )
            raise CommandError(f"Bad --create-scope title: {problems}") from None
        scope, _ = scope_create(
            principal=Principal(name=SEED_PRINCIPAL),
            parent_scope_id=None,
            context_references=[],
            external_references=[],
            request_id=secrets.token_hex(8),
            **fields,
        )
        return scope.scope_id


def _check_options(
    *, count: int, batch: int, share: Fraction, options: dict[str, Any]
) -> None:
    """``CommandError`` unless every number is in range (argparse checked syntax)."""
    if count < 1 or batch < 1 or options["sessions"] < 1:
        raise CommandError("count, --batch and --sessions must be at least 1.")
    if not 0 <= share <= 1:
        raise CommandError(f"--notes must be within 0..1, not {float(share)}.")


def _check_prefix(prefix: str, count: int) -> None:
    """``CommandError`` unless PREFIX1..PREFIX<count> are ids capture would accept."""
    problem = text_problem(prefix)
    if problem:
        raise CommandError(f"--prefix {problem}.")
    if prefix != prefix.lstrip():
        raise CommandError("--prefix must not start with whitespace.")
    longest = len(prefix) + len(str(count))
    if longest > IDENTITY_MAX_LENGTH:
        raise CommandError(
            f"--prefix is too long: {prefix}{count} would have {longest} "
            f"characters, source ids have at most {IDENTITY_MAX_LENGTH}."
        )


def _check_scope(scope_id: str) -> None:
    """``CommandError`` unless ``scope_id`` names a scope (no bad text is queried)."""
    if (
        text_problem(scope_id)
        or len(scope_id) > IDENTITY_MAX_LENGTH
        or not Scope.objects.filter(scope_id=scope_id).exists()
    ):
        raise CommandError(f"No scope {scope_id!r}.")


def _check_collisions(*, scope_id: str, prefix: str, count: int) -> None:
    """``CommandError`` when the scope already holds one of PREFIX1..PREFIX<count>."""
    found = seed_collisions(scope_id=scope_id, prefix=prefix, count=count)
    if found:
        raise CommandError(
            f"Scope {scope_id} already holds {', '.join(map(repr, found))}"
            f"{' and maybe more' if len(found) == COLLISIONS_SHOWN else ''}, "
            f"which seeding {count} Sources with --prefix {prefix!r} would write "
            "again. Nothing was written; choose another --prefix."
        )


def _seed_batch_or_explain(plan: SeedPlan, *, offset: int, size: int) -> int:
    """``_seed_batch``, with a capture that took one of its ids while seeding
    runs turned into a ``CommandError`` that says what was written."""
    try:
        return seed_batch(plan, offset=offset, size=size)
    except IntegrityError as exc:
        if not violates_constraint(exc, ContentSource, IDENTITY_CONSTRAINT):
            raise
        raise CommandError(
            f"A Source with an id in {plan.prefix}{offset + 1}.."
            f"{plan.prefix}{offset + size} was captured into {plan.scope_id} "
            f"while seeding ran. {offset} of the {plan.count} Sources were written "
            f"(the batches before); seed the other {plan.count - offset} with "
            "another --prefix."
        ) from None
