"""The language server: lifecycle, document sync and settings. Each LSP method lives in its own
module; each service with state (compile on save, profile on save, the Triton API index,
measurements) is a LanguageFeature that the lifecycle handlers below drive.

Handlers whose options depend on the client register at `initialize`, once its capabilities are
resolved (pull diagnostics only for clients that pull, resolve only for clients that resolve).
"""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from tritonlens import __version__

from . import (
    code_actions,
    code_lens,
    commands,
    completion,
    diagnostics,
    document_symbols,
    hover,
    inlay_hints,
    show_ir,
    signature_help,
)
from .api_index import ApiIndexService
from .capabilities import ClientSupport
from .capture_tests import CaptureTests
from .compile_on_save import CompileOnSave
from .config import SECTION, SettingsStore
from .confirm_errors import ConfirmErrors
from .debounce import Debouncer
from .measurements import Measurements
from .profile_on_save import ProfileOnSave
from .protocol import TritonLensProtocol
from .request_guard import guarded
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
        self.client_support = ClientSupport()  # resolved at initialize
        self._pending_problems: list[str] = []
        self.background: set[asyncio.Task] = set()
        # The services with a lifecycle; each keeps its own state.
        self.compiles = CompileOnSave(self)
        self.profile_on_save = ProfileOnSave(self)
        self.capture_tests = CaptureTests(self)
        self.api_index = ApiIndexService(self)
        self.measured = Measurements(self)
        self.confirm_errors = ConfirmErrors(self)
        self.features = [self.api_index, self.compiles, self.profile_on_save, self.measured, self.confirm_errors,
                         self.capture_tests]

    def feature(self, feature_name: str, options=None):
        """pygls' decorator, with every handler guarded: it answers and logs instead of failing."""
        register = super().feature(feature_name, options)
        return lambda fn: register(guarded(feature_name, fn))

    @property
    def measurements(self):
        """The latest profiles and verified rewrites (the measurements feature's store)."""
        return self.measured.store

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
        if self.client_support.inlay_hints and self.client_support.inlay_hint_refresh:
            self.workspace_inlay_hint_refresh(None, callback=lambda _r: None)
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
    for module in (inlay_hints, completion, signature_help, document_symbols, show_ir):
        module.register(server)

    @server.feature(types.INITIALIZE)
    def on_initialize(params: types.InitializeParams):
        server.client_support = ClientSupport.of(params.capabilities)
        server._pending_problems = server.settings.load_initialization_options(params.initialization_options)
        # These offer what the client supports, so they register once its capabilities are known.
        for module in (diagnostics, hover, code_lens, code_actions):
            module.register(server)
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
        for feature in server.features:
            feature.initialized()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_did_change_configuration(params: types.DidChangeConfigurationParams):
        problems: list[str] = []
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get(SECTION), dict):
            problems += server.settings.set_scope("", settings[SECTION])
        server.problems(problems)
        await server.fetch_configuration()
        for feature in server.features:
            feature.settings_changed()
        server.refresh_all()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_did_open(params: types.DidOpenTextDocumentParams):
        uri = params.text_document.uri
        server.schedule_diagnostics(uri, 0)
        for feature in server.features:
            feature.opened(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_did_change(params: types.DidChangeTextDocumentParams):
        server.schedule_diagnostics(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_did_save(params: types.DidSaveTextDocumentParams):
        uri = params.text_document.uri
        server.schedule_diagnostics(uri, 0)
        for feature in server.features:
            feature.saved(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_did_close(params: types.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        server.debouncer.cancel(("diagnostics", uri))
        for feature in server.features:
            feature.closed(uri)
        server.analysis.forget(uri)
        if not server.client_support.pull_diagnostics:
            diagnostics.clear(server, uri)

    @server.feature(types.SHUTDOWN)
    def on_shutdown(params: None):
        server.debouncer.cancel_all()
        for feature in server.features:
            feature.shutdown()
        server.analysis.shutdown()

    return server
