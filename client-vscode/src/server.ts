// Owns the language server process: picks the interpreter, checks that tritonlens is importable there
// (offering the exact pip install otherwise), passes settings and the LLM key, and restarts it when
// the interpreter, the key or workspace trust changes.
import * as os from 'os';
import * as vscode from 'vscode';
import {
  CodeActionRequest,
  CodeActionResolveRequest,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  Middleware,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import type { FeatureState, StaticFeature } from 'vscode-languageclient/node';
import type * as lsp from 'vscode-languageclient/node';
import { checkImportable, importCheckMessage, ImportCheck, pipInstallCommand, resolveInterpreter, ResolvedInterpreter } from './interpreter';
import { handleMessageRequests } from './messageActions';
import { activePythonFromExtension } from './pythonExtension';
import { readRewriteData } from './rewriteData';
import { backendLabel, configSection, RESTART_SETTINGS, serverCwd, serverEnvironment, ServerConfig, toServerConfig } from './settings';
import { StatusBar } from './status';

export const API_KEY_SECRET = 'tritonlens.llm.apiKey';
export const SHOW_REPORT_COMMAND = 'tritonlens.showReport';

/** A rewrite code action remembered for `tritonlens.previewRewrite` (by id, from the lightbulb). */
export interface StoredRewrite {
  uri: string;
  action: lsp.CodeAction;
}

export class ServerController implements vscode.Disposable {
  client: LanguageClient | undefined;
  interpreter: ResolvedInterpreter | undefined;
  lastCheck: ImportCheck | undefined;
  readonly output: vscode.OutputChannel;
  private readonly trace: vscode.OutputChannel;
  private starting: Promise<void> | undefined;
  private readonly rewrites = new Map<string, StoredRewrite>();
  private rewriteCounter = 0;
  private readonly stateChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeState = this.stateChanged.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly status: StatusBar,
  ) {
    this.output = vscode.window.createOutputChannel('tritonlens');
    this.trace = vscode.window.createOutputChannel('tritonlens (trace)');
  }

  get trusted(): boolean {
    return vscode.workspace.isTrusted;
  }

  /** The server configuration for `scope` (a resource or folder), with problems logged. */
  serverConfig(scope?: vscode.Uri): ServerConfig {
    const cfg = vscode.workspace.getConfiguration('tritonlens', scope);
    const { config, problems } = toServerConfig(key => cfg.get(key), this.trusted);
    for (const p of problems) this.output.appendLine(`[settings] ${p}`);
    return config;
  }

  refreshStatus(): void {
    const c = this.serverConfig();
    this.status.setTarget(backendLabel(c.backend), c.targetGpu, this.trusted);
  }

  /** Starts the server unless it is running; resolves when it is up or has been refused. */
  start(): Promise<void> {
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = undefined;
        this.stateChanged.fire();
      });
    }
    return this.starting;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (e) {
        this.output.appendLine(`[client] stopping the server: ${String(e)}`);
      }
      await client.dispose();
    }
    this.status.setState('stopped');
    this.stateChanged.fire();
  }

  async restart(reason: string): Promise<void> {
    if (this.starting) await this.starting;
    this.output.appendLine(`[client] restarting the server: ${reason}`);
    await this.stop();
    await this.start();
  }

  private async doStart(): Promise<void> {
    this.refreshStatus();
    this.status.setState('starting');
    const folder = vscode.workspace.workspaceFolders?.[0];
    const settings = vscode.workspace.getConfiguration('tritonlens', folder?.uri);
    this.interpreter = await resolveInterpreter({
      setting: settings.get<string>('interpreter'),
      // The Python extension's choice is the workspace's code: only in a trusted workspace.
      pythonExtension: this.trusted ? () => activePythonFromExtension(folder?.uri) : undefined,
      workspaceFolder: folder?.uri.fsPath,
      home: os.homedir(),
      env: process.env,
      untrusted: !this.trusted,
    });
    const python = this.interpreter.path;
    this.output.appendLine(`[client] interpreter: ${python} (from ${this.interpreter.source})`);
    if (!this.trusted && this.interpreter.source === 'default' && settings.get<string>('interpreter', '').trim()) {
      this.output.appendLine('[client] the tritonlens.interpreter setting points into this untrusted folder; not using it');
    }

    const config = this.serverConfig(folder?.uri);
    const apiKey = await this.context.secrets.get(API_KEY_SECRET);
    const env = serverEnvironment(process.env, config.llm.apiKeyEnv, apiKey, this.trusted);
    const cwd = serverCwd(folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined, this.trusted, os.tmpdir());

    this.lastCheck = await checkImportable(python, env, cwd);
    if (!this.lastCheck.ok) {
      this.status.setState('not-installed', importCheckMessage(python, this.lastCheck));
      this.output.appendLine(`[client] ${importCheckMessage(python, this.lastCheck)}`);
      void this.offerInstall(python, this.lastCheck);
      return;
    }
    this.output.appendLine(`[client] tritonlens ${this.lastCheck.version} at ${this.lastCheck.executable}`);

    const serverOptions: ServerOptions = {
      command: python,
      args: ['-m', 'tritonlens', 'serve'],
      options: { env, cwd },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
      ],
      outputChannel: this.output,
      traceOutputChannel: this.trace,
      initializationOptions: () => this.serverConfig(folder?.uri),
      middleware: this.middleware(),
      // The kernel hover's "Full report" link runs this command; no other command link is trusted.
      markdown: { isTrusted: { enabledCommands: [SHOW_REPORT_COMMAND] } },
      // Restarts after crashes are capped by the client (5 in 3 minutes), then the status says so.
    };
    const client = new LanguageClient('tritonlens', 'tritonlens', serverOptions, clientOptions);
    // The project's interpreter as the Python extension chose it: the server offers it when a
    // capture misses a module (the workspace's choice, so only in a trusted workspace).
    const projectPython = this.trusted ? await activePythonFromExtension(folder?.uri).catch(() => undefined) : undefined;
    client.registerFeature(new ShowsCommandResults(projectPython));
    handleMessageRequests(client, this.output);
    client.onDidChangeState(e => {
      if (e.newState === State.Running) this.status.setState('running', `${python} · tritonlens ${this.lastCheck?.ok ? this.lastCheck.version : ''}`);
      else if (e.newState === State.Stopped && this.client === client) this.status.setState('error', 'The server stopped; see the log.');
      this.stateChanged.fire();
    });
    // After every profile, however it was started, the server names the backend's device.
    client.onNotification('tritonlens/device', (p: { backend?: unknown; device?: unknown }) => {
      if (typeof p?.device === 'string') this.status.setDevice(p.device, backendLabel(typeof p.backend === 'string' ? p.backend : ''));
    });
    this.client = client;
    try {
      await client.start();
      void vscode.commands.executeCommand('setContext', 'tritonlens.active', true);
    } catch (e) {
      this.status.setState('error', String(e));
      this.output.appendLine(`[client] the server did not start: ${String(e)}`);
      void vscode.window.showErrorMessage(`tritonlens: the language server did not start (${String(e)}).`, 'Show log').then(pick => {
        if (pick) this.output.show();
      });
    }
  }

  /** The notification with the exact pip command and an Install button that runs it in a terminal. */
  private async offerInstall(python: string, check: Exclude<ImportCheck, { ok: true }>): Promise<void> {
    const message = importCheckMessage(python, check);
    if (check.reason === 'no-interpreter') {
      const pick = await vscode.window.showErrorMessage(message, 'Open settings');
      if (pick) await vscode.commands.executeCommand('workbench.action.openSettings', 'tritonlens.interpreter');
      return;
    }
    const pick = await vscode.window.showWarningMessage(message, 'Install', 'Copy command', 'Open settings');
    if (pick === 'Install') await this.runInstall(python);
    else if (pick === 'Copy command') await vscode.env.clipboard.writeText(pipInstallCommand(python));
    else if (pick === 'Open settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'tritonlens.interpreter');
  }

  /** Runs the pip command as a task (in a terminal the user sees) and starts the server when it succeeds. */
  async runInstall(python: string): Promise<void> {
    const command = pipInstallCommand(python);
    const task = new vscode.Task(
      { type: 'shell', tritonlens: 'install' },
      vscode.TaskScope.Workspace,
      'install tritonlens',
      'tritonlens',
      new vscode.ShellExecution(command),
    );
    task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.Dedicated };
    const execution = await vscode.tasks.executeTask(task);
    const sub = vscode.tasks.onDidEndTaskProcess(async e => {
      if (e.execution !== execution) return;
      sub.dispose();
      if (e.exitCode === 0) {
        this.output.appendLine('[client] tritonlens installed; starting the server');
        await this.start();
      } else {
        void vscode.window.showErrorMessage(`tritonlens: "${command}" failed (exit ${e.exitCode}); see the terminal.`);
      }
    });
    this.context.subscriptions.push(sub);
  }

  /** Restarts the server when a change needs a new process; the rest goes through the middleware. */
  async onConfigurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration('tritonlens')) return;
    this.refreshStatus();
    if (RESTART_SETTINGS.some(key => e.affectsConfiguration(key)) || (!this.client && !this.starting)) {
      await this.restart('settings changed');
    }
  }

  /** didChangeConfiguration with the mapped section (the server parses the payload, then pulls). */
  private async sendConfiguration(): Promise<void> {
    const client = this.client;
    if (!client?.isRunning()) return;
    const config = this.serverConfig(vscode.workspace.workspaceFolders?.[0]?.uri);
    await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { tritonlens: config } });
  }

  /** The running client, or an error the user can read. */
  async ready(): Promise<LanguageClient> {
    if (this.starting) await this.starting;
    if (!this.client) await this.start();
    const client = this.client;
    if (!client || !client.isRunning()) {
      const why = this.lastCheck && !this.lastCheck.ok && this.interpreter ? importCheckMessage(this.interpreter.path, this.lastCheck) : 'the language server is not running';
      throw new Error(why);
    }
    return client;
  }

  /** workspace/executeCommand on the server, shown as running work in the status bar. */
  async executeServerCommand(command: string, args: unknown[], label: string): Promise<unknown> {
    const client = await this.ready();
    const done = this.status.beginWork(label);
    try {
      return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    } finally {
      done();
    }
  }

  /** The server's code actions for a range, with rewrite data intact (the editor API drops `data`). */
  async codeActionsAt(document: vscode.TextDocument, range: vscode.Range): Promise<lsp.CodeAction[]> {
    const client = await this.ready();
    const diagnostics = vscode.languages.getDiagnostics(document.uri).filter(d => d.range.intersection(range));
    const result = await client.sendRequest(CodeActionRequest.type, {
      textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri) },
      range: client.code2ProtocolConverter.asRange(range),
      context: { diagnostics: client.code2ProtocolConverter.asDiagnosticsSync(diagnostics), only: ['quickfix'] },
    });
    return (result ?? []).filter((a): a is lsp.CodeAction => 'title' in a && !('command' in a && typeof a.command === 'string'));
  }

  /** Fills in a code action's edit through codeAction/resolve when the server deferred it. */
  async resolveAction(action: lsp.CodeAction): Promise<lsp.CodeAction> {
    if (action.edit) return action;
    const client = await this.ready();
    const provider = client.initializeResult?.capabilities.codeActionProvider;
    if (provider && typeof provider === 'object' && provider.resolveProvider) {
      return client.sendRequest(CodeActionResolveRequest.type, action);
    }
    return action;
  }

  rememberRewrite(stored: StoredRewrite): string {
    const id = `r${++this.rewriteCounter}`;
    this.rewrites.set(id, stored);
    if (this.rewrites.size > 100) this.rewrites.delete(this.rewrites.keys().next().value as string);
    return id;
  }

  storedRewrite(id: string): StoredRewrite | undefined {
    return this.rewrites.get(id);
  }

  private middleware(): Middleware {
    return {
      workspace: {
        // The client would send the raw settings (with client-only keys such as `interpreter`).
        didChangeConfiguration: async () => this.sendConfiguration(),
        // Answer workspace/configuration from the mapped settings (with `trusted`), not the raw ones.
        configuration: async (params, token, next) => {
          const raw = await next(params, token);
          if (!Array.isArray(raw)) return raw;
          return params.items.map((item, i) => {
            if (!item.section || !item.section.startsWith('tritonlens')) return raw[i];
            const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
            return configSection(this.serverConfig(scope), item.section);
          });
        },
      },
      executeCommand: async (command, args, next) => {
        const kernel = typeof args[1] === 'string' ? ` ${args[1]}` : '';
        const verb = command.replace(/^tritonlens\.server\./, '');
        if ((verb === 'profile' || verb === 'optimize') && !this.trusted) {
          void vscode.window.showWarningMessage(UNTRUSTED_MESSAGE);
          return undefined;
        }
        // The lenses name the server's commands, whose results the client would drop: they run
        // as the extension's own commands (same arguments), so a lens answers as the palette does.
        const own = LENS_COMMANDS[verb];
        if (own) return vscode.commands.executeCommand(own, ...args);
        const done = this.status.beginWork(`${verb}${kernel}`);
        try {
          return await next(command, args);
        } finally {
          done();
        }
      },
      // Each rewrite quick fix gets a "Preview" sibling that opens its diff and evidence first.
      provideCodeActions: async (document, range, context, token, next) => {
        const actions = await next(document, range, context, token);
        const client = this.client;
        if (!actions || !client) return actions;
        const out: (vscode.Command | vscode.CodeAction)[] = [];
        for (const a of actions) {
          out.push(a);
          if (!(a instanceof vscode.CodeAction)) continue;
          const protocol = await client.code2ProtocolConverter.asCodeAction(a, token);
          if (!readRewriteData(protocol.data)) continue;
          const id = this.rememberRewrite({ uri: document.uri.toString(), action: protocol });
          const preview = new vscode.CodeAction(`Preview: ${a.title}`, vscode.CodeActionKind.QuickFix.append('preview'));
          preview.command = { command: 'tritonlens.previewRewrite', title: 'Preview rewrite', arguments: [id] };
          preview.diagnostics = a.diagnostics;
          out.push(preview);
        }
        return out;
      },
    };
  }

  dispose(): void {
    void this.stop();
    this.output.dispose();
    this.trace.dispose();
    this.stateChanged.dispose();
  }
}

/** The extension's command for each server command a lens names. */
const LENS_COMMANDS: Record<string, string | undefined> = {
  profile: 'tritonlens.profileKernel',
  optimize: 'tritonlens.optimizeKernel',
  report: SHOW_REPORT_COMMAND,
  showIr: 'tritonlens.showIr',
};

/**
 * Tells the server (experimental.tritonlens.showsCommandResults) that this client shows profile and
 * optimize results itself, with its buttons: the server then sends no window/showMessage of its own.
 */
class ShowsCommandResults implements StaticFeature {
  constructor(private readonly projectPython: string | undefined) {}
  fillClientCapabilities(capabilities: lsp.ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    // messageCommands: a message button naming one of messageActions' commands runs it here.
    const ours = { showsCommandResults: true, messageCommands: true, ...(this.projectPython ? { projectPython: this.projectPython } : {}) };
    capabilities.experimental = { ...experimental, tritonlens: ours };
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: 'static' };
  }
  clear(): void {}
}

export const UNTRUSTED_MESSAGE =
  'tritonlens: profiling and optimizing run this workspace\'s code, so they are off until you trust the workspace.';
