// Maps the extension's `tritonlens.*` settings to the server's configuration section, the one
// contract both sides share (initializationOptions, workspace/configuration, didChangeConfiguration).
// Pure: no `vscode` import, so the mapping is unit-tested under plain node.

import { DEFAULTS, ServerConfig, SETTINGS, SettingSpec } from './settingsSchema';

/** Reads one setting by its key below `tritonlens.` (e.g. "llm.model"); undefined when unset. */
export type SettingReader = (key: string) => unknown;

export { DEFAULTS, SETTINGS } from './settingsSchema';
export type { LlmConfig, ServerConfig, SettingSpec } from './settingsSchema';

/** Settings whose change needs a new server process; every other one goes through didChangeConfiguration. */
export const RESTART_SETTINGS = ['tritonlens.interpreter', 'tritonlens.llm.apiKeyEnv'];

export interface MappingResult {
  config: ServerConfig;
  /** Human-readable notes about values that were replaced by their defaults. */
  problems: string[];
}

type Checked = { value: unknown } | { problem: string };

/** A user's value as a message quotes it: whole when short, else its start. */
function brief(value: unknown, limit = 60): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

/** One setting against its spec: the value to send, or why it is replaced by the default. */
function check(raw: unknown, spec: SettingSpec, key: string): Checked {
  const bad = (what: unknown) => ({ problem: `tritonlens.${key} ${spec.hint}, got ${brief(what)}` });
  switch (spec.type) {
    case 'boolean':
      return typeof raw === 'boolean' ? { value: raw } : bad(raw);
    case 'integer': {
      if (typeof raw !== 'number' || !Number.isFinite(raw)) return bad(raw);
      const n = Math.round(raw);
      return n >= (spec.minimum ?? n) && n <= (spec.maximum ?? n) ? { value: n } : bad(raw);
    }
    case 'string': {
      if (typeof raw !== 'string') return bad(raw);
      let s = raw.trim();
      if (spec.enum) {
        const hit = spec.enum.find((e) => e.toUpperCase() === s.toUpperCase());
        if (hit === undefined) return bad(raw);
        s = hit;
      }
      return spec.pattern && !new RegExp(spec.pattern).test(s) ? bad(raw) : { value: s };
    }
    case 'array':
      return Array.isArray(raw) ? { value: raw } : bad(raw);
  }
}

/** Rule ids, upper-cased and de-duplicated; an invalid entry is dropped and reported on its own. */
function ruleList(items: unknown[], spec: SettingSpec, key: string, problems: string[]): string[] {
  const out: string[] = [];
  const pattern = new RegExp(spec.itemPattern ?? '');
  for (const item of items) {
    const id = typeof item === 'string' ? item.trim().toUpperCase() : '';
    if (pattern.test(id)) {
      if (!out.includes(id)) out.push(id);
    } else {
      problems.push(`tritonlens.${key}: ${JSON.stringify(item)} is not a rule id (TLnnn); ignored`);
    }
  }
  return out;
}

function defaultOf(key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], DEFAULTS);
}

function assign(config: ServerConfig, key: string, value: unknown): void {
  const parts = key.split('.');
  let node = config as unknown as Record<string, unknown>;
  for (const part of parts.slice(0, -1)) node = node[part] as Record<string, unknown>;
  node[parts[parts.length - 1]] = value;
}

/**
 * Builds the server configuration from settings, every key the server reads (SETTINGS, generated
 * from the server's schema). Invalid values fall back to the defaults and are reported in
 * `problems`; the server validates too, with the same schema. In an untrusted workspace nothing
 * that runs the workspace's code is switched on.
 */
export function toServerConfig(read: SettingReader, trusted: boolean): MappingResult {
  const problems: string[] = [];
  const config: ServerConfig = { ...(JSON.parse(JSON.stringify(DEFAULTS)) as ServerConfig), trusted };
  for (const [key, spec] of Object.entries(SETTINGS)) {
    const raw = read(key);
    if (raw === undefined || raw === null) continue;
    const checked = check(raw, spec, key);
    if ('problem' in checked) {
      problems.push(`${checked.problem}; using ${JSON.stringify(defaultOf(key))}`);
      continue;
    }
    assign(config, key, spec.type === 'array' ? ruleList(checked.value as unknown[], spec, key, problems) : checked.value);
  }
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
