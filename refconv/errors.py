"""The error a user's input causes: :class:`UsageError`.

Rule: a command line, environment value or input file that refconv does not accept raises
``UsageError`` where it is read, with a message naming what was given and what is accepted;
``refconv`` prints that message on stderr and exits 2.  Any other exception inside a command is
a bug of refconv or of a plugin and ends in a traceback.  ``UsageError`` is a ``ValueError``, so
code that catches ``ValueError`` around a parser (the pytest plugin, a plugin's own checks) keeps
working.
"""
from __future__ import annotations


class UsageError(ValueError):
    """A usage or environment error: the command prints the message on stderr and exits 2."""


#: the most characters of a user's value a message repeats (a 40,000-character glob is not echoed whole)
QUOTE_LIMIT = 80


def quoted(value, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters with its length said when longer:
    ``'xxxx…' (40000 characters)``."""
    text = repr(value)
    if len(text) <= limit:
        return text
    close = text[0] if text[0] in "'\"" else ""   # a string's quote, closed again
    return f"{text[:limit - 1]}…{close} ({len(str(value))} characters)"
