// Which Python runs the language server, and what to tell the user when tritonlens is not there.
// Pure (no `vscode` import): unit-tested under plain node with fake sources.
import * as path from 'path';
import { execFile } from 'child_process';

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface ResolvedInterpreter {
  path: string;
  source: InterpreterSource;
}

export interface InterpreterInputs {
  /** The `tritonlens.interpreter` setting as written. */
  setting: string | undefined;
  /** Asks the Python extension for its active environment; undefined when it is absent or has none. */
  pythonExtension?: () => Promise<string | undefined>;
  /** The first workspace folder, for `${workspaceFolder}` and relative paths. */
  workspaceFolder?: string;
  home: string;
  env: NodeJS.ProcessEnv;
  /** Interpreter used when nothing else names one. */
  fallback?: string;
  /** Untrusted workspace: an interpreter inside the folder would be the folder's code running. */
  untrusted?: boolean;
}

function inside(file: string, folder: string): boolean {
  const rel = path.relative(folder, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`; resolves relative paths. */
export function expandInterpreterSetting(
  value: string,
  ctx: { workspaceFolder?: string; home: string; env: NodeJS.ProcessEnv },
): string {
  let v = value.trim();
  if (v === '') return '';
  v = v.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name: string, envName?: string) => {
    if (envName) return ctx.env[envName] ?? '';
    if (name === 'userHome') return ctx.home;
    return ctx.workspaceFolder ?? whole;
  });
  if (v === '~' || v.startsWith('~/')) v = path.join(ctx.home, v.slice(1));
  // A bare name ("python3") is looked up on PATH; a relative path is relative to the workspace.
  const hasSeparator = v.includes('/') || v.includes('\\');
  if (hasSeparator && !path.isAbsolute(v) && ctx.workspaceFolder) v = path.resolve(ctx.workspaceFolder, v);
  return v;
}

/** The setting first, else the Python extension's active environment, else `python3`. */
export async function resolveInterpreter(inputs: InterpreterInputs): Promise<ResolvedInterpreter> {
  const fromSetting = expandInterpreterSetting(inputs.setting ?? '', inputs);
  const refused = inputs.untrusted && inputs.workspaceFolder && path.isAbsolute(fromSetting) && inside(fromSetting, inputs.workspaceFolder);
  if (fromSetting && !refused) return { path: fromSetting, source: 'setting' };
  if (inputs.pythonExtension) {
    let fromExtension: string | undefined;
    try {
      fromExtension = await inputs.pythonExtension();
    } catch {
      fromExtension = undefined; // a broken or still-loading Python extension must not block the server
    }
    if (fromExtension && fromExtension.trim()) return { path: fromExtension.trim(), source: 'python-extension' };
  }
  return { path: inputs.fallback ?? (process.platform === 'win32' ? 'python' : 'python3'), source: 'default' };
}

/** Quotes one word for the shell the install command is typed into. */
export function shellQuote(word: string, platform: NodeJS.Platform = process.platform): string {
  if (/^[A-Za-z0-9_./:=@%+-]+$/.test(word)) return word;
  if (platform === 'win32') return `"${word.replace(/"/g, '\\"')}"`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The exact command that installs tritonlens with every extra into `python`. */
export function pipInstallCommand(python: string, platform: NodeJS.Platform = process.platform): string {
  const spec = platform === 'win32' ? '"tritonlens[all]"' : "'tritonlens[all]'";
  const exe = shellQuote(python, platform);
  // PowerShell runs a quoted path only behind the call operator.
  return `${platform === 'win32' && exe.startsWith('"') ? '& ' : ''}${exe} -m pip install ${spec}`;
}

export type ImportCheck =
  | { ok: true; version: string; executable: string }
  | { ok: false; reason: 'no-interpreter' | 'not-installed' | 'missing-server-deps' | 'error'; detail: string };

// Prints one JSON line: which interpreter ran, tritonlens' version and the server extras it lacks.
export const IMPORT_CHECK_SCRIPT = [
  'import importlib.util, json, sys',
  'out = {"executable": sys.executable}',
  'try:',
  '    import tritonlens',
  '    out["version"] = getattr(tritonlens, "__version__", "?")',
  'except Exception as e:',
  '    out["error"] = f"{type(e).__name__}: {e}"',
  'out["missing"] = [m for m in ("pygls", "lsprotocol") if importlib.util.find_spec(m) is None]',
  'print(json.dumps(out))',
].join('\n');

/** Interprets the check script's run: exit error, stdout and stderr. */
export function parseImportCheck(err: (Error & { code?: unknown }) | null, stdout: string, stderr: string): ImportCheck {
  if (err && (err.code === 'ENOENT' || err.code === 'EACCES')) {
    return { ok: false, reason: 'no-interpreter', detail: err.message };
  }
  const line = stdout.trim().split('\n').pop() ?? '';
  let parsed: { executable?: string; version?: string; error?: string; missing?: string[] } | undefined;
  try {
    parsed = JSON.parse(line);
  } catch {
    parsed = undefined;
  }
  if (!parsed) {
    return { ok: false, reason: 'error', detail: (stderr || err?.message || stdout || 'no output').trim() };
  }
  if (parsed.error) return { ok: false, reason: 'not-installed', detail: parsed.error };
  if (parsed.missing && parsed.missing.length) {
    return { ok: false, reason: 'missing-server-deps', detail: `missing ${parsed.missing.join(', ')}` };
  }
  return { ok: true, version: parsed.version ?? '?', executable: parsed.executable ?? '' };
}

/** Runs the import check in `python` (10 s at most). */
export function checkImportable(python: string, env: NodeJS.ProcessEnv, cwd?: string): Promise<ImportCheck> {
  return new Promise(resolve => {
    execFile(python, ['-c', IMPORT_CHECK_SCRIPT], { env, cwd, timeout: 10000, windowsHide: true }, (err, stdout, stderr) => {
      resolve(parseImportCheck(err, String(stdout), String(stderr)));
    });
  });
}

/** The notification shown when the check fails; the pip command is spelled out in full. */
export function importCheckMessage(python: string, check: Exclude<ImportCheck, { ok: true }>): string {
  const pip = pipInstallCommand(python);
  switch (check.reason) {
    case 'no-interpreter':
      return `tritonlens: the Python interpreter "${python}" was not found. Set "tritonlens.interpreter" or select an interpreter with the Python extension.`;
    case 'not-installed':
      return `tritonlens is not installed for ${python} (${check.detail}). Install it with: ${pip}`;
    case 'missing-server-deps':
      return `tritonlens is installed for ${python} but its language server dependencies are not (${check.detail}). Install them with: ${pip}`;
    default:
      return `tritonlens: could not run ${python} (${check.detail}). Install tritonlens with: ${pip}`;
  }
}
