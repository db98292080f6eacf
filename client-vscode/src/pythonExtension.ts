// The Python extension's public API, called defensively: it may be absent, still activating, or an
// older release with only `settings.getExecutionDetails`. The reading of the API object is pure
// (unit-tested with fake APIs); only `api()` touches VS Code.
import type * as vscode from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';

interface EnvironmentPath { id?: string; path?: string }
interface ResolvedEnvironment { executable?: { uri?: { fsPath?: string } } }
type Listener = (e: unknown) => unknown;
type Subscribe = (listener: Listener) => { dispose(): unknown };

export interface PythonApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: unknown): EnvironmentPath | undefined;
    resolveEnvironment?(env: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    onDidChangeActiveEnvironmentPath?: Subscribe;
  };
  settings?: {
    getExecutionDetails?(resource?: unknown): { execCommand?: string[] } | undefined;
    onDidChangeExecutionDetails?: Subscribe;
  };
}

/** The active environment's interpreter from the API object, or undefined. */
export async function interpreterFromApi(py: PythonApi | undefined, resource?: unknown): Promise<string | undefined> {
  const envs = py?.environments;
  if (envs?.getActiveEnvironmentPath) {
    const active = envs.getActiveEnvironmentPath(resource);
    if (active && envs.resolveEnvironment) {
      // A conda or pyenv environment's path may be its folder: resolve it to the executable.
      const exe = (await envs.resolveEnvironment(active))?.executable?.uri?.fsPath;
      if (exe) return exe;
    }
    if (active?.path) return active.path;
  }
  const cmd = py?.settings?.getExecutionDetails?.(resource)?.execCommand;
  return cmd && cmd.length === 1 && cmd[0] ? cmd[0] : undefined; // "conda run -n x python" is not a path
}

/** The event that fires when the user picks another interpreter, whichever API generation is there. */
export function environmentChangeEvent(py: PythonApi | undefined): Subscribe | undefined {
  return py?.environments?.onDidChangeActiveEnvironmentPath ?? py?.settings?.onDidChangeExecutionDetails;
}

async function api(): Promise<PythonApi | undefined> {
  // Loaded lazily so that this module's pure part runs under plain node.
  const vs: typeof vscode = require('vscode');
  const ext = vs.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (!ext) return undefined;
  return ext.isActive ? ext.exports : await ext.activate();
}

/** The Python extension's active interpreter for `resource`, or undefined. */
export async function activePythonFromExtension(resource?: vscode.Uri): Promise<string | undefined> {
  return interpreterFromApi(await api(), resource);
}

/** Calls `listener` when the user picks another interpreter in the Python extension. */
export async function onPythonEnvironmentChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  let py: PythonApi | undefined;
  try {
    py = await api();
  } catch {
    return undefined;
  }
  const event = environmentChangeEvent(py);
  if (!event) return undefined;
  const sub = event(() => listener());
  return { dispose: () => void sub.dispose() };
}
