"""The one exception type that reaches the user as a one-line message."""


class WsbenchError(Exception):
    """A problem the user can act on; printed as one line, never as a traceback."""
