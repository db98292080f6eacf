// The buttons of the server's messages (window/showMessageRequest) that only the editor can act on:
// an action item may name one of the commands below (`command`, `arguments`), which runs when it is
// picked; the server hears the pick as usual and runs its own actions (a capture) itself.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { MessageType, ShowMessageRequest } from 'vscode-languageclient/node';
import type { ServerController } from './server';

/** The commands a message button may name: what only the client can do. */
export const MESSAGE_COMMANDS = ['tritonlens.setPython', 'tritonlens.copyText', 'tritonlens.showOutput', 'tritonlens.pickHarness', 'tritonlens.recordCommand'];

interface CommandItem extends vscode.MessageItem {
  command?: unknown;
  arguments?: unknown;
}

/** Shows the server's message with its buttons; runs the picked button's client command, if any. */
export function handleMessageRequests(client: LanguageClient, output: vscode.OutputChannel): void {
  client.onRequest(ShowMessageRequest.type, async params => {
    const show =
      params.type === MessageType.Error
        ? vscode.window.showErrorMessage
        : params.type === MessageType.Warning
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    const items = (params.actions ?? []) as CommandItem[];
    output.appendLine(`[server says] ${params.message}`);
    const picked = await show(params.message, ...items);
    if (picked && typeof picked.command === 'string' && MESSAGE_COMMANDS.includes(picked.command)) {
      const args = Array.isArray(picked.arguments) ? picked.arguments : [];
      void Promise.resolve(vscode.commands.executeCommand(picked.command, ...args)).catch(e => output.appendLine(`[client] ${picked.command}: ${String(e)}`));
    }
    return picked ? { title: picked.title } : null;
  });
}

/** The commands themselves (registered with the extension's others). */
export function registerMessageCommands(server: ServerController): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('tritonlens.setPython', (python: unknown, uri?: unknown) => setPython(python, uri)),
    vscode.commands.registerCommand('tritonlens.copyText', async (text: unknown) => {
      if (typeof text !== 'string') return;
      await vscode.env.clipboard.writeText(text);
      void vscode.window.showInformationMessage(`tritonlens: copied \`${text}\``);
    }),
    vscode.commands.registerCommand('tritonlens.pickHarness', (uri: unknown) => pickHarness(server, uri)),
    vscode.commands.registerCommand('tritonlens.recordCommand', (uri: unknown) => recordCommand(server, uri)),
  ];
}

/** Writes `tritonlens.python` for the workspace: the server re-reads it and captures again. */
async function setPython(python: unknown, uri?: unknown): Promise<boolean> {
  if (typeof python !== 'string' || !python) return false;
  const scope = typeof uri === 'string' ? vscode.Uri.parse(uri) : undefined;
  await vscode.workspace.getConfiguration('tritonlens', scope).update('python', python, vscode.ConfigurationTarget.Workspace);
  void vscode.window.showInformationMessage(`tritonlens: tritonlens.python is now ${python} for this workspace; recording launches with it.`);
  return true;
}

/** A function of a Python file as the harness of the file's Profile, then profiles with it. */
async function pickHarness(server: ServerController, uri: unknown): Promise<unknown> {
  if (typeof uri !== 'string') return undefined;
  const files = await vscode.window.showOpenDialog({
    title: 'tritonlens: the file with the harness (a function returning the cases to run)',
    canSelectMany: false,
    defaultUri: vscode.Uri.parse(uri),
    filters: { Python: ['py'] },
  });
  if (!files?.length) return undefined;
  const text = Buffer.from(await vscode.workspace.fs.readFile(files[0])).toString('utf8');
  const functions = [...text.matchAll(/^def ([A-Za-z_]\w*)\(/gm)].map(m => m[1]);
  if (!functions.length) {
    void vscode.window.showWarningMessage(`tritonlens: ${vscode.workspace.asRelativePath(files[0])} defines no top-level function.`);
    return undefined;
  }
  const func = functions.length === 1 ? functions[0] : await vscode.window.showQuickPick(functions, { placeHolder: 'Which function returns the cases?' });
  if (!func) return undefined;
  await server.executeServerCommand('tritonlens.server.useHarness', [uri, `${files[0].fsPath}::${func}`], 'harness');
  return vscode.commands.executeCommand('tritonlens.profileKernel', uri);
}

/** Records the launches of a command of the project the user types (pytest ..., python script.py). */
async function recordCommand(server: ServerController, uri: unknown): Promise<unknown> {
  if (typeof uri !== 'string') return undefined;
  const command = await vscode.window.showInputBox({
    title: 'tritonlens: record the launches of a command',
    prompt: 'Run in the project under the capture hook: pytest ARGS, python FILE ARGS or python -m MODULE ARGS',
    placeHolder: 'pytest -k rms_norm tests/',
    ignoreFocusOut: true,
  });
  if (!command?.trim()) return undefined;
  return server.executeServerCommand('tritonlens.server.captureCommand', [uri, command.trim()], 'recording launches');
}
