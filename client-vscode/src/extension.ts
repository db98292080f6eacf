// Entry point: wires the server controller, the commands, the status bar and the self-test hook.
import * as vscode from 'vscode';
import { Commands } from './commands';
import { registerMessageCommands } from './messageActions';
import { onPythonEnvironmentChange } from './pythonExtension';
import { ServerController } from './server';
import { StatusBar } from './status';
import { SCHEME, VirtualDocuments } from './virtualDocs';

let server: ServerController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<{ server: ServerController; commands: Commands }> {
  const status = new StatusBar();
  server = new ServerController(context, status);
  const docs = new VirtualDocuments();
  const commands = new Commands(context, server, docs);
  const controller = server;
  context.subscriptions.push(
    status,
    controller,
    docs,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, docs),
    ...commands.register(),
    ...registerMessageCommands(controller),
    vscode.workspace.onDidChangeConfiguration(e => controller.onConfigurationChanged(e)),
    // Trust brings the Python extension's interpreter and profiling in: a new server with trusted=true.
    vscode.workspace.onDidGrantWorkspaceTrust(() => controller.restart('workspace trusted')),
  );
  void onPythonEnvironmentChange(() => {
    const setting = vscode.workspace.getConfiguration('tritonlens').get<string>('interpreter', '');
    if (!setting.trim()) void controller.restart('the Python extension selected another interpreter');
  }).then(d => d && context.subscriptions.push(d));

  await controller.start();

  // Test hook: drive the real editor through the extension's own commands and record what it saw.
  if (process.env.TRITONLENS_SELFTEST_OUT) {
    const { runSelfTest } = await import('./selfTest');
    void runSelfTest(controller, status);
  }
  return { server: controller, commands };
}

export function deactivate(): Thenable<void> | undefined {
  return server?.stop();
}
