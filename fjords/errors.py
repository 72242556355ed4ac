"""Errors a user can act on; the command line prints their one-line message."""


class FjordsError(Exception):
    """A problem with the user's input or environment, reported in one line.

    ``exit_code`` is what the command line exits with: 2 for input that cannot
    be read, 3 for a photo without a board, 4 for a photo that must be retaken.
    """

    exit_code = 2
