"""Search queries: what a ``q`` means, checked once for both databases.

Two kinds of match (docs/api.md, "Search"):

- ``words``: PostgreSQL's websearch syntax - words, ``"exact phrase"``, ``or``
  between alternatives, ``-word`` to exclude. PostgreSQL parses ``q`` itself
  (``websearch_to_tsquery`` with the language-neutral ``simple`` configuration);
  ``parse_words`` reads the same syntax to refuse what could match without an
  index (no positive word in an alternative) and to spell the query for SQLite's
  FTS5 (``fts5_words``), where an alternative is its positive phrases ANDed, then
  ``NOT`` each excluded one.
- ``substring``: the text appears as is, ignoring case, 3 characters or more.

The searched text of a Source is every string and number of its content and its
metadata, one per line (``sources_search_text`` on PostgreSQL, the FTS5 triggers
on SQLite: migration ``sources.0012_search``); of an envelope, its live notes.

On PostgreSQL one trigram index serves both kinds (migration
``sources.0014_words_through_trigrams``). A words query is PostgreSQL's own parse
of ``q`` (``querytree`` of the ``tsquery``), read back by ``words_prefilter`` into
the words a matching text must contain: every word of the tsvector is a lowercased
run of the text, so a Source that matches the query contains them, and the
trigram index finds those Sources; the tsvector match then decides, exactly as
before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from powercontext.exceptions import InvalidRequest

QUERY_MAX_LENGTH = 256
SUBSTRING_MIN_LENGTH = 3
# A snippet is cut to this many characters around the first match in SQL, then
# to SNIPPET_MAX_BYTES of UTF-8 at a character boundary.
SNIPPET_BEFORE = 60
SNIPPET_CHARS = 200
SNIPPET_MAX_BYTES = 256

_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')


class Match(StrEnum):
    WORDS = "words"
    SUBSTRING = "substring"


@dataclass(frozen=True)
class Alternative:
    """Phrases that must all appear, and phrases that must not."""

    required: tuple[str, ...]
    excluded: tuple[str, ...]


@dataclass(frozen=True)
class SearchQuery:
    """A checked query: its text, its kind, and (words) its alternatives."""

    text: str
    match: Match
    alternatives: tuple[Alternative, ...] = ()

    @classmethod
    def of(cls, text: str, match: Match) -> SearchQuery:
        """Raises ``InvalidRequest`` (422, field ``q``): ``empty``, ``too_short``
        (substring under 3 characters), ``too_long`` (over 256), ``no_words``
        (words: an alternative without a word to find)."""
        stripped = text.strip()
        if not stripped:
            raise InvalidRequest.for_field("q", "empty", "The query is empty.")
        if len(text) > QUERY_MAX_LENGTH:
            raise InvalidRequest.for_field(
                "q",
                "too_long",
                f"The query is over {QUERY_MAX_LENGTH} characters.",
                max_length=QUERY_MAX_LENGTH,
            )
        if match is Match.SUBSTRING:
            if len(text) < SUBSTRING_MIN_LENGTH:
                raise InvalidRequest.for_field(
                    "q",
                    "too_short",
                    f"A substring query needs {SUBSTRING_MIN_LENGTH} characters.",
                    min_length=SUBSTRING_MIN_LENGTH,
                )
            return cls(text, match)
        return cls(text, match, parse_words(text))

    @property
    def first_term(self) -> str:
        """What the snippet is centred on: the substring, or the first word."""
        if self.match is Match.SUBSTRING:
            return self.text
        return self.alternatives[0].required[0].split()[0]

    def fts5(self) -> str:
        """The FTS5 MATCH expression of this query (SQLite)."""
        if self.match is Match.SUBSTRING:
            return _fts5_string(self.text)
        return fts5_words(self.alternatives)


def parse_words(text: str) -> tuple[Alternative, ...]:
    """The alternatives of a websearch query; ``InvalidRequest`` (``no_words``)
    when one has no required word (it would match nearly everything)."""
    alternatives: list[Alternative] = []
    required: list[str] = []
    excluded: list[str] = []
    for negated, phrase, word in _TOKEN.findall(text):
        if not phrase and word.lower() == "or" and (required or excluded):
            alternatives.append(Alternative(tuple(required), tuple(excluded)))
            required, excluded = [], []
            continue
        if not phrase and word.startswith("-") and len(word) > 1:
            negated, word = "-", word[1:]
        words = " ".join(_words(phrase or word))
        if words:
            (excluded if negated else required).append(words)
    alternatives.append(Alternative(tuple(required), tuple(excluded)))
    if any(not alternative.required for alternative in alternatives):
        raise InvalidRequest.for_field(
            "q",
            "no_words",
            "Each alternative needs a word to find (letters or digits); "
            "use match=substring for symbols.",
        )
    return tuple(alternatives)


def _words(text: str) -> list[str]:
    """The runs of letters and digits in ``text`` (what both engines index)."""
    return re.findall(r"[^\W_]+", text)


def fts5_words(alternatives: tuple[Alternative, ...]) -> str:
    """FTS5: each alternative's required phrases ANDed, then NOT each excluded."""
    parts = []
    for alternative in alternatives:
        expression = " AND ".join(_fts5_string(p) for p in alternative.required)
        for excluded in alternative.excluded:
            expression = f"({expression}) NOT {_fts5_string(excluded)}"
        parts.append(f"({expression})")
    return " OR ".join(parts)


def _fts5_string(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


@dataclass(frozen=True)
class Lexeme:
    """A word of PostgreSQL's parse of a words query."""

    text: str


@dataclass(frozen=True)
class AllOf:
    """Every part must hold; with no parts, anything holds."""

    parts: tuple[Prefilter, ...]


@dataclass(frozen=True)
class AnyOf:
    """One part must hold; with no parts, nothing holds."""

    parts: tuple[Prefilter, ...]


Prefilter = Lexeme | AllOf | AnyOf
ANYTHING = AllOf(())
NOTHING = AnyOf(())

# The text form of a tsquery: quoted lexemes ('' is a quote, a backslash escapes
# the next character) with an optional weight or prefix mark, the operators & | !,
# phrase operators <-> and <N>, parentheses, and T (querytree's "no index term").
_TSQUERY_TOKEN = re.compile(
    r"\s*(?:'((?:[^'\\]|''|\\.)*)'(?::[*A-Da-d]+)?|(<(?:-|\d+)>|[&|!()T]))"
)


def words_prefilter(tree: str) -> Prefilter:
    """What a text must contain to match the tsquery whose ``querytree`` text is
    ``tree``: ``&`` and phrases need every side, ``|`` one side, and a negated
    part asks nothing (``ANYTHING``). An empty tree (no word at all) matches
    ``NOTHING``. Text this reader does not know gives ``ANYTHING``: the tsvector
    match still decides, the index just cannot narrow the search."""
    tokens = _tsquery_tokens(tree)
    if tokens is None:
        return ANYTHING
    if not tokens:
        return NOTHING
    reader = _TsqueryReader(tokens)
    try:
        prefilter = reader.alternatives()
    except ValueError:
        return ANYTHING
    return prefilter if reader.done() else ANYTHING


def _tsquery_tokens(tree: str) -> list[tuple[str, str]] | None:
    """``("word", lexeme)`` and ``("op", operator)`` pairs; None if unreadable."""
    tokens: list[tuple[str, str]] = []
    at = 0
    rest = tree.rstrip()
    while at < len(rest):
        token = _TSQUERY_TOKEN.match(rest, at)
        if token is None or token.end() == at:
            return None
        quoted, operator = token.groups()
        if operator is None:
            tokens.append(("word", re.sub(r"''|\\(.)", _unescape, quoted)))
        else:
            tokens.append(("op", "&" if operator.startswith("<") else operator))
        at = token.end()
    return tokens


def _unescape(escape: re.Match[str]) -> str:
    return "'" if escape.group(0) == "''" else escape.group(1)


class _TsqueryReader:
    """Reads tsquery tokens by precedence: ``|`` below ``&`` and phrases, below
    ``!``. Raises ValueError on anything else."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.at = 0

    def done(self) -> bool:
        return self.at == len(self.tokens)

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        token = self._peek()
        if token is None:
            raise ValueError("the query ends early")
        self.at += 1
        return token

    def alternatives(self) -> Prefilter:
        parts = [self.conjunction()]
        while self._peek() == ("op", "|"):
            self._take()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))

    def conjunction(self) -> Prefilter:
        parts = [self.operand()]
        while self._peek() == ("op", "&"):
            self._take()
            parts.append(self.operand())
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def operand(self) -> Prefilter:
        kind, value = self._take()
        if kind == "word":
            return Lexeme(value)
        if value == "!":
            self.operand()
            return ANYTHING
        if value == "T":
            return ANYTHING
        if value == "(":
            inner = self.alternatives()
            if self._take() != ("op", ")"):
                raise ValueError("an unclosed parenthesis")
            return inner
        raise ValueError(f"unexpected {value!r}")


def like_pattern(text: str) -> str:
    """A LIKE pattern finding ``text`` anywhere (``\\`` is the escape)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def snippet_cut(text: str | None) -> str:
    """``text`` cut to ``SNIPPET_MAX_BYTES`` of UTF-8 at a character boundary."""
    if not text:
        return ""
    return text.encode()[:SNIPPET_MAX_BYTES].decode(errors="ignore")
