"""The language server: lifecycle, document sync and settings; features live in their own modules.

Features are registered at `initialize`, once the client's capabilities are known (pull
diagnostics only for clients that pull, resolve only for clients that resolve).
"""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from tritonlens import __version__

from . import code_actions, code_lens, commands, compile_feature, diagnostics, hover, language_features, on_save
from .capabilities import ClientSupport
from .config import SECTION, SettingsStore
from .debounce import Debouncer
from .protocol import TritonLensProtocol
from .results import MeasurementStore
from .state import AnalysisService

log = logging.getLogger("tritonlens.server")


class TritonLensServer(LanguageServer):
    def __init__(self):
        super().__init__(
            "tritonlens",
            __version__,
            protocol_cls=TritonLensProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.settings = SettingsStore()
        self.analysis = AnalysisService()
        self.debouncer = Debouncer()
        self.measurements = MeasurementStore()
        self.client_support = ClientSupport()  # resolved at initialize
        self._pending_problems: list[str] = []
        self.background: set[asyncio.Task] = set()
        self.on_save_tasks: dict[str, asyncio.Task] = {}

    # -- helpers used by the feature modules ------------------------------------------------------

    def spawn(self, coro) -> asyncio.Task:
        """Run a background coroutine, keeping a reference so it is not collected mid-flight."""
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    def show_error(self, message: str) -> None:
        log.error(message)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"tritonlens: {message}"))

    def show_info(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"tritonlens: {message}"))

    def notify_published(self, uri: str, version: int | None, count: int) -> None:
        log.debug("diagnostics for %s v%s: %d", uri, version, count)

    def schedule_diagnostics(self, uri: str, delay_s: float | None = None) -> None:
        """Push clients: (re)analyze after the debounce. Pull clients ask by themselves."""
        if self.client_support.pull_diagnostics:
            return
        if delay_s is None:
            delay_s = self.settings.for_uri(uri).debounce_ms / 1000
        self.debouncer.schedule(("diagnostics", uri), delay_s, lambda: diagnostics.publish(self, uri))

    def refresh_all(self) -> None:
        """Something other than the text changed (settings, measurements): show it everywhere."""
        for uri in list(self.workspace.text_documents):
            st = self.analysis.state(uri)
            st.generation += 1
            self.schedule_diagnostics(uri, 0)
        if self.client_support.pull_diagnostics and self.client_support.diagnostic_refresh:
            self.workspace_diagnostic_refresh(None)
        code_lens.refresh(self)

    def problems(self, problems: list[str]) -> None:
        if problems:
            self.show_error("invalid settings, using defaults for: " + "; ".join(problems))

    async def fetch_configuration(self) -> None:
        """workspace/configuration for the global scope and every workspace folder."""
        if not self.client_support.configuration:
            return
        folders = list(self.workspace.folders.values())
        items = [types.ConfigurationItem(section=SECTION)]
        items += [types.ConfigurationItem(scope_uri=f.uri, section=SECTION) for f in folders]
        try:
            values = await self.workspace_configuration_async(types.ConfigurationParams(items=items))
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return
        problems: list[str] = []
        if values:
            if values[0] is not None:
                problems += self.settings.set_scope("", values[0])
            for folder, value in zip(folders, values[1:]):
                if value is not None:
                    problems += self.settings.set_scope(folder.uri, value)
        self.problems(problems)


def create_server() -> TritonLensServer:
    server = TritonLensServer()
    commands.register(server)
    language_features.register(server)  # inlay hints, completion, signature help, symbols (issue 9)
    compile_feature.register(server)  # compile on save, tritonlens/showIr (issue 10)

    @server.feature(types.INITIALIZE)
    def on_initialize(params: types.InitializeParams):
        caps = params.capabilities
        server._pending_problems = server.settings.load_initialization_options(params.initialization_options)
        server.client_support = ClientSupport.of(caps)
        diagnostics.register(server)
        hover.register(server)
        code_lens.register(server)
        code_actions.register(server)
        client = params.client_info.name if params.client_info else "unknown client"
        log.info("tritonlens %s initializing for %s (%s diagnostics)", __version__, client,
                 "pull" if server.client_support.pull_diagnostics else "push")

    @server.feature(types.INITIALIZED)
    async def on_initialized(params: types.InitializedParams):
        server.problems(server._pending_problems)
        server._pending_problems = []
        if server.client_support.configuration_registration:
            # Without registering, clients using the pull model never send didChangeConfiguration.
            server.client_register_capability(
                types.RegistrationParams(registrations=[
                    types.Registration(id="tritonlens-configuration", method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                                       register_options={"section": SECTION})
                ]),
                callback=lambda _r: None,
            )
        before = [s.analysis_key() for s in server.settings.all()]
        await server.fetch_configuration()
        if [s.analysis_key() for s in server.settings.all()] != before:
            server.refresh_all()
        compile_feature.initialized(server)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_did_change_configuration(params: types.DidChangeConfigurationParams):
        problems: list[str] = []
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get(SECTION), dict):
            problems += server.settings.set_scope("", settings[SECTION])
        server.problems(problems)
        await server.fetch_configuration()
        compile_feature.settings_changed(server)
        server.refresh_all()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_did_open(params: types.DidOpenTextDocumentParams):
        server.schedule_diagnostics(params.text_document.uri, 0)
        compile_feature.opened(server, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_did_change(params: types.DidChangeTextDocumentParams):
        server.schedule_diagnostics(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_did_save(params: types.DidSaveTextDocumentParams):
        uri = params.text_document.uri
        server.schedule_diagnostics(uri, 0)
        on_save.saved(server, uri)
        compile_feature.saved(server, uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_did_close(params: types.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        server.debouncer.cancel(("diagnostics", uri))
        on_save.closed(server, uri)
        compile_feature.closed(server, uri)
        server.analysis.forget(uri)
        if not server.client_support.pull_diagnostics:
            diagnostics.clear(server, uri)

    @server.feature(types.SHUTDOWN)
    def on_shutdown(params: None):
        server.debouncer.cancel_all()
        on_save.cancel_all(server)
        compile_feature.shutdown(server)
        server.analysis.shutdown()

    return server

