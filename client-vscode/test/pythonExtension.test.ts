import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { environmentChangeEvent, interpreterFromApi, PythonApi } from '../src/pythonExtension';

test('no Python extension: no interpreter', async () => {
  assert.equal(await interpreterFromApi(undefined), undefined);
  assert.equal(await interpreterFromApi({}), undefined);
});

test('the environments API: the resolved executable wins over the environment path', async () => {
  const asked: unknown[] = [];
  const api: PythonApi = {
    environments: {
      getActiveEnvironmentPath: r => (asked.push(r), { id: 'conda-x', path: '/opt/conda/envs/x' }),
      resolveEnvironment: async env => ((env as { path: string }).path === '/opt/conda/envs/x' ? { executable: { uri: { fsPath: '/opt/conda/envs/x/bin/python' } } } : undefined),
    },
  };
  assert.equal(await interpreterFromApi(api, 'file:///ws'), '/opt/conda/envs/x/bin/python');
  assert.deepEqual(asked, ['file:///ws'], 'the resource is passed on (multi-root workspaces)');
});

test('an environment that does not resolve: its path', async () => {
  const api: PythonApi = {
    environments: { getActiveEnvironmentPath: () => ({ path: '/ws/.venv/bin/python' }), resolveEnvironment: async () => undefined },
  };
  assert.equal(await interpreterFromApi(api), '/ws/.venv/bin/python');
});

test('the older settings API: a single-word execCommand only', async () => {
  assert.equal(await interpreterFromApi({ settings: { getExecutionDetails: () => ({ execCommand: ['/usr/bin/python3.12'] }) } }), '/usr/bin/python3.12');
  assert.equal(await interpreterFromApi({ settings: { getExecutionDetails: () => ({ execCommand: ['conda', 'run', '-n', 'x', 'python'] }) } }), undefined);
  assert.equal(await interpreterFromApi({ settings: { getExecutionDetails: () => undefined } }), undefined);
});

test('the change event of either API generation', () => {
  const a = () => ({ dispose() {} });
  const b = () => ({ dispose() {} });
  assert.equal(environmentChangeEvent({ environments: { onDidChangeActiveEnvironmentPath: a }, settings: { onDidChangeExecutionDetails: b } }), a);
  assert.equal(environmentChangeEvent({ settings: { onDidChangeExecutionDetails: b } }), b);
  assert.equal(environmentChangeEvent(undefined), undefined);
});
