"""A service of the server with its own state and lifecycle (esbonio's LanguageFeature).

The server calls every feature at the same moments: when the session is up, when settings
change, when a document opens, is saved or closes, and at shutdown. A feature keeps what it
knows on itself, never on the server object.
"""

from __future__ import annotations


class LanguageFeature:
    name = "feature"

    def __init__(self, ls):
        self.ls = ls

    def register(self) -> None:
        """Add the feature's LSP handlers (called once, before `initialize`)."""

    def initialized(self) -> None:
        """The session is up and the settings are read: start what should be warm."""

    def settings_changed(self) -> None:
        """Settings changed: restart what depends on them, withdraw what no longer applies."""

    def opened(self, uri: str) -> None:
        pass

    def saved(self, uri: str) -> None:
        pass

    def closed(self, uri: str) -> None:
        pass

    def shutdown(self) -> None:
        """Stop: cancel running work, end worker processes; never block the shutdown answer long."""
