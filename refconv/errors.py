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
