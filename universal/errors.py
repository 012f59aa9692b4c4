"""Errors that mean "the user asked for something impossible".

The CLI turns a :class:`UserError` into one clear line on stderr and exit status 2;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(ValueError):
    """Bad input from the user: unknown names, malformed files, impossible parameters."""
