// The Python extension's public API, called defensively: it may be absent, still activating, or an
// older release with only `settings.getExecutionDetails`.
import * as vscode from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';

interface EnvironmentPath { id?: string; path?: string }
interface ResolvedEnvironment { executable?: { uri?: vscode.Uri } }
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment?(env: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] };
    onDidChangeExecutionDetails?: vscode.Event<unknown>;
  };
}

async function api(): Promise<PythonApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (!ext) return undefined;
  return ext.isActive ? ext.exports : await ext.activate();
}

/** The active environment's interpreter for `resource`, or undefined. */
export async function activePythonFromExtension(resource?: vscode.Uri): Promise<string | undefined> {
  const py = await api();
  if (!py) return undefined;
  const envs = py.environments;
  if (envs?.getActiveEnvironmentPath) {
    const active = envs.getActiveEnvironmentPath(resource);
    if (envs.resolveEnvironment) {
      const resolved = await envs.resolveEnvironment(active);
      const exe = resolved?.executable?.uri?.fsPath;
      if (exe) return exe;
    }
    if (active?.path) return active.path;
  }
  const cmd = py.settings?.getExecutionDetails?.(resource)?.execCommand;
  return cmd && cmd.length === 1 ? cmd[0] : undefined; // a multi-word command (conda run …) is not a path
}

/** Calls `listener` when the user picks another interpreter in the Python extension. */
export async function onPythonEnvironmentChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  let py: PythonApi | undefined;
  try {
    py = await api();
  } catch {
    return undefined;
  }
  const event = py?.environments?.onDidChangeActiveEnvironmentPath ?? py?.settings?.onDidChangeExecutionDetails;
  return event ? event(() => listener()) : undefined;
}
