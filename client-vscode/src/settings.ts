// Maps the extension's `tritonlens.*` settings to the server's configuration section, the one
// contract both sides share (initializationOptions, workspace/configuration, didChangeConfiguration).
// Pure: no `vscode` import, so the mapping is unit-tested under plain node.

/** Reads one setting by its key below `tritonlens.` (e.g. "llm.model"); undefined when unset. */
export type SettingReader = (key: string) => unknown;

export interface LlmConfig {
  baseUrl: string;
  model: string;
  apiKeyEnv: string;
}

/** The server's configuration section "tritonlens" (see the shared contract in the notes). */
export interface ServerConfig {
  select: string[];
  ignore: string[];
  targetGpu: string;
  debounceMs: number;
  profileOnSave: boolean;
  compileOnSave: boolean;
  compileTarget: string;
  backend: string;
  python: string;
  ncu: boolean;
  inlayHints: boolean;
  llm: LlmConfig;
  /** Seconds one profiling / verification job may run before the worker is killed. */
  timeoutS: number;
  /** False in an untrusted workspace: the server must not run the workspace's code. */
  trusted: boolean;
}

export const DEFAULTS: ServerConfig = {
  select: [],
  ignore: [],
  targetGpu: 'H100',
  debounceMs: 200,
  profileOnSave: false,
  compileOnSave: true,
  compileTarget: 'sm_90',
  backend: 'local',
  python: '',
  ncu: false,
  inlayHints: true,
  llm: { baseUrl: '', model: '', apiKeyEnv: 'OPENAI_API_KEY' },
  timeoutS: 120,
  trusted: true,
};

/** Settings whose change needs a new server process; every other one goes through didChangeConfiguration. */
export const RESTART_SETTINGS = ['tritonlens.interpreter', 'tritonlens.llm.apiKeyEnv'];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RULE_ID = /^TL\d{3}$/;

export interface MappingResult {
  config: ServerConfig;
  /** Human-readable notes about values that were replaced by their defaults. */
  problems: string[];
}

function str(v: unknown, fallback: string): string {
  return typeof v === 'string' ? v.trim() : fallback;
}

function bool(v: unknown, fallback: boolean): boolean {
  return typeof v === 'boolean' ? v : fallback;
}

function ruleList(v: unknown, key: string, problems: string[]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    problems.push(`tritonlens.${key} must be a list of rule ids; using []`);
    return [];
  }
  const out: string[] = [];
  for (const item of v) {
    const id = typeof item === 'string' ? item.trim().toUpperCase() : '';
    if (RULE_ID.test(id)) {
      if (!out.includes(id)) out.push(id);
    } else {
      problems.push(`tritonlens.${key}: ${JSON.stringify(item)} is not a rule id (TLnnn); ignored`);
    }
  }
  return out;
}

/**
 * Builds the server configuration from settings. Invalid values fall back to the defaults and are
 * reported in `problems` (the server also validates: this keeps the two from disagreeing silently).
 * In an untrusted workspace nothing that runs the workspace's code is switched on.
 */
export function toServerConfig(read: SettingReader, trusted: boolean): MappingResult {
  const problems: string[] = [];
  let debounceMs = read('debounceMs');
  if (typeof debounceMs !== 'number' || !Number.isFinite(debounceMs) || debounceMs < 0) {
    if (debounceMs !== undefined) problems.push(`tritonlens.debounceMs must be a number ≥ 0; using ${DEFAULTS.debounceMs}`);
    debounceMs = DEFAULTS.debounceMs;
  }
  let timeoutS = read('timeoutS');
  if (typeof timeoutS !== 'number' || !Number.isInteger(timeoutS) || timeoutS < 1 || timeoutS > 3600) {
    if (timeoutS !== undefined) problems.push(`tritonlens.timeoutS must be an integer from 1 to 3600; using ${DEFAULTS.timeoutS}`);
    timeoutS = DEFAULTS.timeoutS;
  }
  let apiKeyEnv = str(read('llm.apiKeyEnv'), DEFAULTS.llm.apiKeyEnv);
  if (!ENV_NAME.test(apiKeyEnv)) {
    problems.push(`tritonlens.llm.apiKeyEnv ${JSON.stringify(apiKeyEnv)} is not an environment variable name; using ${DEFAULTS.llm.apiKeyEnv}`);
    apiKeyEnv = DEFAULTS.llm.apiKeyEnv;
  }
  const config: ServerConfig = {
    select: ruleList(read('select'), 'select', problems),
    ignore: ruleList(read('ignore'), 'ignore', problems),
    targetGpu: str(read('targetGpu'), DEFAULTS.targetGpu) || DEFAULTS.targetGpu,
    debounceMs: Math.round(debounceMs as number),
    profileOnSave: bool(read('profileOnSave'), DEFAULTS.profileOnSave),
    compileOnSave: bool(read('compileOnSave'), DEFAULTS.compileOnSave),
    compileTarget: str(read('compileTarget'), DEFAULTS.compileTarget) || DEFAULTS.compileTarget,
    backend: str(read('backend'), DEFAULTS.backend) || DEFAULTS.backend,
    python: str(read('python'), DEFAULTS.python),
    ncu: bool(read('ncu'), DEFAULTS.ncu),
    inlayHints: bool(read('inlayHints'), DEFAULTS.inlayHints),
    llm: {
      baseUrl: str(read('llm.baseUrl'), DEFAULTS.llm.baseUrl),
      model: str(read('llm.model'), DEFAULTS.llm.model),
      apiKeyEnv,
    },
    timeoutS: timeoutS as number,
    trusted,
  };
  if (!trusted) {
    // Profiling and compiling import the user's file in a worker: never in an untrusted folder.
    config.profileOnSave = false;
    config.compileOnSave = false;
  }
  return { config, problems };
}

/** The part of the configuration a `workspace/configuration` item asks for ("tritonlens" or "tritonlens.llm"). */
export function configSection(config: ServerConfig, section: string): unknown {
  if (section === 'tritonlens') return config;
  if (!section.startsWith('tritonlens.')) return undefined;
  let node: unknown = config;
  for (const part of section.slice('tritonlens.'.length).split('.')) {
    if (node === null || typeof node !== 'object') return null;
    node = (node as Record<string, unknown>)[part];
  }
  return node === undefined ? null : node;
}

/**
 * The server's environment: the editor's, plus the LLM key (from secret storage) under the name the
 * settings give. The key never goes through settings or the command line.
 */
export function serverEnvironment(
  base: NodeJS.ProcessEnv,
  apiKeyEnv: string,
  apiKey: string | undefined,
  trusted = true,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, PYTHONUNBUFFERED: '1' };
  if (apiKey) env[apiKeyEnv] = apiKey;
  // Untrusted folder: a `tritonlens/` or `pygls.py` in it must not shadow the real packages, so
  // Python is told not to put the working directory on sys.path (3.11+; the cwd moves out too).
  if (!trusted) env.PYTHONSAFEPATH = '1';
  return env;
}

/** Where the server runs: the workspace folder when trusted, else a neutral directory. */
export function serverCwd(workspaceFolder: string | undefined, trusted: boolean, neutral: string): string {
  return trusted && workspaceFolder ? workspaceFolder : neutral;
}

/** "local · H100", "ssh gpu-box · H100", "ray head:10001 · H100": what the status bar shows. */
export function backendLabel(backend: string): string {
  const b = backend.trim();
  if (b === '' || b === 'local') return 'local';
  if (b === 'ray') return 'ray';
  const m = /^(ssh|ray):\/\/(?:[^@/]*@)?([^/]+)/.exec(b);
  if (m) return `${m[1]} ${m[2]}`;
  return b;
}
