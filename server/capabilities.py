"""What the client can do, read once from its `initialize` capabilities.

Every feature asks this object, never the raw capability tree: the questions are few and the
answers do not change during a session.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

MARKDOWN = types.MarkupKind.Markdown
PLAINTEXT = types.MarkupKind.PlainText


def _markup(formats: list | None) -> types.MarkupKind:
    """Markdown unless the client lists its formats and markdown is not among them."""
    if formats and MARKDOWN not in formats:
        return PLAINTEXT
    return MARKDOWN


@dataclass(frozen=True)
class ClientSupport:
    """The client features the server adapts to. The defaults are those of a client that
    declared nothing (markup and related information are assumed, as the specification does)."""

    hover_markup: types.MarkupKind = MARKDOWN
    completion_markup: types.MarkupKind = MARKDOWN
    signature_markup: types.MarkupKind = MARKDOWN
    pull_diagnostics: bool = False
    diagnostic_refresh: bool = False
    related_information: bool = True
    code_description: bool = True
    code_action_literals: bool = False
    code_action_resolves_edit: bool = False
    document_changes: bool = False
    inlay_hints: bool = False
    inlay_hint_refresh: bool = False
    code_lens_refresh: bool = False
    work_done_progress: bool = False
    hierarchical_symbols: bool = False
    configuration: bool = False
    configuration_registration: bool = False
    # The client shows profile and optimize results itself (the VS Code extension, with buttons that
    # open the report or preview the rewrite); other clients hear them in window/showMessage.
    shows_command_results: bool = False
    # The client runs the command a message action item names (`command`, `arguments`) when it is
    # picked: buttons that write a setting, copy a command or open its log.
    message_commands: bool = False
    # Interpreters the client knows the project uses (the VS Code Python extension's choice).
    python_candidates: tuple[str, ...] = ()

    @classmethod
    def of(cls, caps: types.ClientCapabilities | None) -> ClientSupport:
        if caps is None:
            return cls()
        td = caps.text_document or types.TextDocumentClientCapabilities()
        ws = caps.workspace or types.WorkspaceClientCapabilities()
        window = caps.window or types.WindowClientCapabilities()
        hover = td.hover
        item = td.completion.completion_item if td.completion else None
        sig = td.signature_help.signature_information if td.signature_help else None
        publish = td.publish_diagnostics
        action = td.code_action
        refresh = bool(ws.diagnostics and ws.diagnostics.refresh_support)
        resolve = action.resolve_support if action else None
        return cls(
            hover_markup=_markup(hover.content_format if hover else None),
            completion_markup=_markup(item.documentation_format if item else None),
            signature_markup=_markup(sig.documentation_format if sig else None),
            # Findings that come late (compile, profile, Triton's verdict on an error) reach a pull
            # client only when it is told to pull again: one that cannot be told (Neovim 0.11)
            # would show them after its next edit, so it is pushed to, as it also accepts.
            pull_diagnostics=td.diagnostic is not None and refresh,
            diagnostic_refresh=refresh,
            related_information=publish is None or publish.related_information is not False,
            code_description=publish is None or publish.code_description_support is not False,
            code_action_literals=bool(action and action.code_action_literal_support is not None),
            code_action_resolves_edit=bool(resolve and "edit" in (resolve.properties or [])),
            document_changes=bool(ws.workspace_edit and ws.workspace_edit.document_changes),
            inlay_hints=td.inlay_hint is not None,
            inlay_hint_refresh=bool(ws.inlay_hint and ws.inlay_hint.refresh_support),
            code_lens_refresh=bool(ws.code_lens and ws.code_lens.refresh_support),
            work_done_progress=bool(window.work_done_progress),
            hierarchical_symbols=bool(td.document_symbol and td.document_symbol.hierarchical_document_symbol_support),
            configuration=bool(ws.configuration),
            configuration_registration=bool(ws.did_change_configuration
                                            and ws.did_change_configuration.dynamic_registration),
            shows_command_results=_experimental(caps, "showsCommandResults") is True,
            message_commands=_experimental(caps, "messageCommands") is True,
            python_candidates=tuple(p for p in (_experimental(caps, "projectPython"),) if isinstance(p, str) and p),
        )


def _experimental(caps: types.ClientCapabilities, key: str):
    """A flag of `experimental.tritonlens`, which only this project's own clients send."""
    ours = caps.experimental.get("tritonlens") if isinstance(caps.experimental, dict) else None
    return ours.get(key) if isinstance(ours, dict) else None
