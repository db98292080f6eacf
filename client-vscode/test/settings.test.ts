import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { backendLabel, configSection, DEFAULTS, RESTART_SETTINGS, serverCwd, serverEnvironment, SETTINGS, toServerConfig } from '../src/settings';

/** A reader over a flat map of keys below `tritonlens.`, the way WorkspaceConfiguration.get answers. */
const reader = (values: Record<string, unknown>) => (key: string) => values[key];

test('no settings: the contract defaults', () => {
  const { config, problems } = toServerConfig(reader({}), true);
  assert.deepEqual(config, DEFAULTS);
  assert.deepEqual(config, {
    select: [], ignore: [], targetGpu: 'H100', debounceMs: 200, profileOnSave: false, compileOnSave: true,
    captureTests: true, compileTarget: 'sm_90', backend: 'local', python: '', ncu: false, lineSamples: false, inlayHints: true,
    llm: {
      baseUrl: '', model: '', apiKeyEnv: 'OPENAI_API_KEY', candidates: 4, rounds: 3, maxTokens: 0, tokenBudget: 1000000, timeBudgetS: 1800, timeoutS: 300, systemRole: 'auto',
    },
    timeoutS: 120, optimizeBudgetS: 120, trusted: true,
  });
  assert.deepEqual(problems, []);
});

test('every setting maps to its server key', () => {
  const { config, problems } = toServerConfig(reader({
    select: ['TL001', 'tl005'], ignore: ['TL003'], targetGpu: 'H100', debounceMs: 350.4, profileOnSave: true,
    compileOnSave: false, captureTests: false, compileTarget: 'sm_80', backend: 'ssh://me@gpu-box:2222',
    python: '/opt/proj/bin/python', ncu: true, lineSamples: true, inlayHints: false, 'llm.baseUrl': 'http://127.0.0.1:8000/v1', 'llm.model': 'm', 'llm.apiKeyEnv': 'MY_KEY',
    'llm.candidates': 2, 'llm.rounds': 5, 'llm.maxTokens': 8192, 'llm.tokenBudget': 0, 'llm.timeBudgetS': 600,
    'llm.timeoutS': 90, 'llm.systemRole': 'user', timeoutS: 600, optimizeBudgetS: 300,
  }), true);
  assert.deepEqual(problems, []);
  assert.deepEqual(config, {
    select: ['TL001', 'TL005'], ignore: ['TL003'], targetGpu: 'H100', debounceMs: 350, profileOnSave: true,
    compileOnSave: false, captureTests: false, compileTarget: 'sm_80', backend: 'ssh://me@gpu-box:2222',
    python: '/opt/proj/bin/python', ncu: true, lineSamples: true, inlayHints: false, llm: {
      baseUrl: 'http://127.0.0.1:8000/v1', model: 'm', apiKeyEnv: 'MY_KEY', candidates: 2, rounds: 5, maxTokens: 8192,
      tokenBudget: 0, timeBudgetS: 600, timeoutS: 90, systemRole: 'user',
    },
    timeoutS: 600, optimizeBudgetS: 300, trusted: true,
  });
});

test('invalid values fall back to defaults and are reported', () => {
  const { config, problems } = toServerConfig(reader({
    select: 'TL001', ignore: ['TL1', 7, 'TL002'], debounceMs: -5, 'llm.apiKeyEnv': 'not a name', profileOnSave: 'yes',
    timeoutS: 0,
  }), true);
  assert.equal(config.timeoutS, 120);
  assert.deepEqual(config.select, []);
  assert.deepEqual(config.ignore, ['TL002']);
  assert.equal(config.debounceMs, 200);
  assert.equal(config.llm.apiKeyEnv, 'OPENAI_API_KEY');
  assert.equal(config.profileOnSave, false);
  // Every replaced value is reported, a wrongly typed boolean too.
  assert.equal(problems.length, 7, problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('tritonlens.profileOnSave must be true or false')), problems.join('\n'));
});

test('GPU and architecture names come from the server\'s table; unknown ones fall back', () => {
  const ok = toServerConfig(reader({ targetGpu: 'l40s', compileTarget: 'sm_100' }), true);
  assert.deepEqual(ok.problems, []);
  assert.equal(ok.config.targetGpu, 'L40S');
  assert.equal(ok.config.compileTarget, 'sm_100');
  assert.deepEqual(SETTINGS.targetGpu.enum, ['H100', 'H200', 'A100', 'L40S', 'B200']);
  const bad = toServerConfig(reader({ targetGpu: 'V100', compileTarget: 'sm_75', backend: 'ftp://x' }), true);
  assert.equal(bad.config.targetGpu, 'H100');
  assert.equal(bad.config.compileTarget, 'sm_90');
  assert.equal(bad.config.backend, 'local');
  assert.equal(bad.problems.length, 3, bad.problems.join('\n'));
  assert.match(bad.problems[0], /targetGpu must be one of H100, H200, A100, L40S, B200, got "V100"; using "H100"/);
});

test('package.json declares exactly the settings the client maps, with their defaults and enums', () => {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const props: Record<string, { default: unknown; enum?: string[] }> = pkg.contributes.configuration.properties;
  const server = Object.keys(props).filter((k) => k !== 'tritonlens.interpreter' && k !== 'tritonlens.trace.server');
  assert.deepEqual(server.sort(), Object.keys(SETTINGS).map((k) => `tritonlens.${k}`).sort());
  for (const [key, spec] of Object.entries(SETTINGS)) {
    const prop = props[`tritonlens.${key}`];
    const fallback = key.split('.').reduce<unknown>((n, p) => (n as Record<string, unknown>)[p], DEFAULTS);
    assert.deepEqual(prop.default, fallback, key);
    assert.deepEqual(prop.enum, spec.enum, key);
  }
});

test('an untrusted workspace runs none of its code', () => {
  const { config } = toServerConfig(reader({ profileOnSave: true, compileOnSave: true }), false);
  assert.equal(config.trusted, false);
  assert.equal(config.profileOnSave, false);
  assert.equal(config.compileOnSave, false);
});

test('workspace/configuration sections resolve into the mapped config', () => {
  const { config } = toServerConfig(reader({ 'llm.model': 'x' }), true);
  assert.equal(configSection(config, 'tritonlens'), config);
  assert.deepEqual(configSection(config, 'tritonlens.llm'), {
    baseUrl: '', model: 'x', apiKeyEnv: 'OPENAI_API_KEY', candidates: 4, rounds: 3, maxTokens: 0, tokenBudget: 1000000, timeBudgetS: 1800, timeoutS: 300, systemRole: 'auto',
  });
  assert.equal(configSection(config, 'tritonlens.llm.model'), 'x');
  assert.equal(configSection(config, 'tritonlens.nope'), null);
  assert.equal(configSection(config, 'python'), undefined);
});

test('the API key reaches the server only through its environment, under the configured name', () => {
  const env = serverEnvironment({ PATH: '/bin' }, 'MY_KEY', 'sk-123');
  assert.equal(env.MY_KEY, 'sk-123');
  assert.equal(env.PATH, '/bin');
  assert.equal(env.OPENAI_API_KEY, undefined);
  assert.equal(serverEnvironment({ PATH: '/bin' }, 'MY_KEY', undefined).MY_KEY, undefined);
  const { config } = toServerConfig(reader({ 'llm.apiKeyEnv': 'MY_KEY' }), true);
  assert.ok(!JSON.stringify(config).includes('sk-123'));
});

test('restart-only settings are the interpreter and the key variable name', () => {
  assert.deepEqual(RESTART_SETTINGS.sort(), ['tritonlens.interpreter', 'tritonlens.llm.apiKeyEnv']);
});

test('backend labels for the status bar', () => {
  assert.equal(backendLabel('local'), 'local');
  assert.equal(backendLabel(''), 'local');
  assert.equal(backendLabel('ssh://me@gpu-box:2222'), 'ssh gpu-box:2222');
  assert.equal(backendLabel('ssh://gpu-box'), 'ssh gpu-box');
  assert.equal(backendLabel('ray'), 'ray');
  assert.equal(backendLabel('ray://head:10001'), 'ray head:10001');
});

test('an untrusted folder cannot shadow the server packages: neutral cwd, PYTHONSAFEPATH', () => {
  assert.equal(serverEnvironment({}, 'K', undefined, false).PYTHONSAFEPATH, '1');
  assert.equal(serverEnvironment({}, 'K', undefined, true).PYTHONSAFEPATH, undefined);
  assert.equal(serverCwd('/ws', true, '/tmp'), '/ws');
  assert.equal(serverCwd('/ws', false, '/tmp'), '/tmp');
  assert.equal(serverCwd(undefined, true, '/tmp'), '/tmp');
});
