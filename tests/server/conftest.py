"""pytest-lsp fixtures: the real server over stdio, driven with the capabilities of VS Code and
of Neovim (push vs pull diagnostics, UTF-16 vs UTF-8 positions, resolve support differ)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

CLIENTS = ["visual-studio-code", "neovim"]
SERVER = [sys.executable, "-m", "tritonlens", "serve"]
REPO = Path(__file__).resolve().parents[2]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published = {}  # uri -> last PublishDiagnosticsParams (with its version)
    client.publications = []  # every PublishDiagnosticsParams in arrival order
    client.lens_refreshes = 0
    client.inlay_refreshes = 0
    client.registrations = []
    client.diagnostic_refreshes = 0

    def publish(c: LanguageClient, params: types.PublishDiagnosticsParams):
        c.diagnostics[params.uri] = params.diagnostics
        c.published[params.uri] = params
        c.publications.append(params)

    def code_lens_refresh(c: LanguageClient, params):
        c.lens_refreshes += 1

    def inlay_hint_refresh(c: LanguageClient, params):
        c.inlay_refreshes += 1

    def register_capability(c: LanguageClient, params: types.RegistrationParams):
        c.registrations.extend(params.registrations)

    def diagnostic_refresh(c: LanguageClient, params):
        c.diagnostic_refreshes += 1

    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[types.WORKSPACE_CODE_LENS_REFRESH] = code_lens_refresh
    features[types.WORKSPACE_INLAY_HINT_REFRESH] = inlay_hint_refresh
    features[types.CLIENT_REGISTER_CAPABILITY] = register_capability
    features[types.WORKSPACE_DIAGNOSTIC_REFRESH] = diagnostic_refresh
    register_lsp_features(client, features)
    return client


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)


def init_params(name: str, root: Path, options=None) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=client_capabilities(name),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        initialization_options=options,
    )


@pytest_lsp.fixture(config=CONFIG, params=CLIENTS)
async def client(lsp_client: LanguageClient, request, tmp_path):
    # A short debounce keeps the suite fast; test_debounce_is_honoured checks the setting itself.
    lsp_client.init_result = await lsp_client.initialize_session(
        init_params(request.param, tmp_path, {"debounceMs": 20}))
    lsp_client.profile_name = request.param
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG, params=CLIENTS, scope="module")
async def module_client(lsp_client: LanguageClient, request, tmp_path_factory):
    """One server per test module and client profile (starting one costs seconds on a busy
    machine); each test works on its own files, so tests do not see each other's documents.
    A module opts in with `client = module_client` fixtures and a module-scoped event loop."""
    root = tmp_path_factory.mktemp("workspace")
    # A short debounce keeps the suite fast; test_debounce_is_honoured checks the setting itself.
    # A module's SERVER_OPTIONS add to it (the compile rules, off by default, are selected so).
    options = {"debounceMs": 20, **getattr(request.module, "SERVER_OPTIONS", {})}
    lsp_client.init_result = await lsp_client.initialize_session(init_params(request.param, root, options))
    lsp_client.profile_name = request.param
    lsp_client.root = root
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG, params=CLIENTS)
async def bare_client(lsp_client: LanguageClient, request, tmp_path):
    """A started server the test initializes itself (to choose initializationOptions)."""

    async def initialize(options=None, configuration=None):
        if configuration is not None:
            lsp_client.set_configuration(configuration, section="tritonlens")
        lsp_client.profile_name = request.param
        lsp_client.root = tmp_path
        return await lsp_client.initialize_session(init_params(request.param, tmp_path, options))

    lsp_client.initialize_for_test = initialize
    yield
    await lsp_client.shutdown_session()
