import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  checkImportable,
  expandInterpreterSetting,
  importCheckMessage,
  parseImportCheck,
  pipInstallCommand,
  resolveInterpreter,
} from '../src/interpreter';

const base = { home: '/home/u', env: { VENV: '/opt/venv' } as NodeJS.ProcessEnv, workspaceFolder: '/ws' };

test('the setting wins over the Python extension and the default', async () => {
  let asked = false;
  const r = await resolveInterpreter({ ...base, setting: '/usr/bin/python3.12', pythonExtension: async () => { asked = true; return '/ext/python'; } });
  assert.deepEqual(r, { path: '/usr/bin/python3.12', source: 'setting' });
  assert.equal(asked, false, 'the Python extension is not consulted when the setting names an interpreter');
});

test('an empty or blank setting falls through to the Python extension', async () => {
  for (const setting of [undefined, '', '   ']) {
    const r = await resolveInterpreter({ ...base, setting, pythonExtension: async () => '/ws/.venv/bin/python' });
    assert.deepEqual(r, { path: '/ws/.venv/bin/python', source: 'python-extension' });
  }
});

test('no setting and no Python extension: python3', async () => {
  const r = await resolveInterpreter({ ...base, setting: '' });
  assert.deepEqual(r, { path: process.platform === 'win32' ? 'python' : 'python3', source: 'default' });
});

test('a Python extension that throws or has no environment does not block the server', async () => {
  const thrown = await resolveInterpreter({ ...base, setting: '', pythonExtension: async () => { throw new Error('not activated'); } });
  assert.equal(thrown.source, 'default');
  const none = await resolveInterpreter({ ...base, setting: '', pythonExtension: async () => undefined, fallback: 'py' });
  assert.deepEqual(none, { path: 'py', source: 'default' });
});

test('an untrusted workspace cannot supply the interpreter from inside itself', async () => {
  for (const setting of ['${workspaceFolder}/.venv/bin/python', '.venv/bin/python', '/ws/bin/python']) {
    const r = await resolveInterpreter({ ...base, setting, untrusted: true, fallback: 'python3' });
    assert.deepEqual(r, { path: 'python3', source: 'default' }, setting);
  }
  const outside = await resolveInterpreter({ ...base, setting: '/opt/venv/bin/python', untrusted: true });
  assert.deepEqual(outside, { path: '/opt/venv/bin/python', source: 'setting' });
  const trusted = await resolveInterpreter({ ...base, setting: '.venv/bin/python' });
  assert.deepEqual(trusted, { path: '/ws/.venv/bin/python', source: 'setting' });
});

test('variables, ~ and relative paths in the setting are expanded', () => {
  assert.equal(expandInterpreterSetting('${workspaceFolder}/.venv/bin/python', base), '/ws/.venv/bin/python');
  assert.equal(expandInterpreterSetting('${env:VENV}/bin/python', base), '/opt/venv/bin/python');
  assert.equal(expandInterpreterSetting('${userHome}/py/bin/python', base), '/home/u/py/bin/python');
  assert.equal(expandInterpreterSetting('~/miniconda/bin/python', base), '/home/u/miniconda/bin/python');
  assert.equal(expandInterpreterSetting('.venv/bin/python', base), '/ws/.venv/bin/python');
  assert.equal(expandInterpreterSetting('python3.11', base), 'python3.11', 'a bare name stays for PATH lookup');
  assert.equal(expandInterpreterSetting('  /abs/python  ', base), '/abs/python');
});

test('the pip command is exact and quoted for the shell', () => {
  assert.equal(pipInstallCommand('/opt/venv/bin/python', 'linux'), "/opt/venv/bin/python -m pip install 'tritonlens[all]'");
  assert.equal(pipInstallCommand('/My Envs/py thon', 'darwin'), "'/My Envs/py thon' -m pip install 'tritonlens[all]'");
  assert.equal(pipInstallCommand("/o'brien/python", 'linux'), `'/o'\\''brien/python' -m pip install 'tritonlens[all]'`);
  assert.equal(pipInstallCommand('C:\\Program Files\\Python\\python.exe', 'win32'), '& "C:\\Program Files\\Python\\python.exe" -m pip install "tritonlens[all]"');
});

test('import check results are classified', () => {
  const enoent = Object.assign(new Error('spawn nope ENOENT'), { code: 'ENOENT' });
  assert.equal((parseImportCheck(enoent, '', '') as { reason: string }).reason, 'no-interpreter');
  assert.deepEqual(parseImportCheck(null, '{"executable": "/p", "version": "0.1.0", "missing": []}\n', ''), { ok: true, version: '0.1.0', executable: '/p' });
  const missing = parseImportCheck(null, '{"executable": "/p", "error": "ModuleNotFoundError: No module named \'tritonlens\'", "missing": ["pygls"]}', '');
  assert.equal((missing as { reason: string }).reason, 'not-installed');
  const noServer = parseImportCheck(null, '{"executable": "/p", "version": "0.1.0", "missing": ["pygls", "lsprotocol"]}', '');
  assert.deepEqual(noServer, { ok: false, reason: 'missing-server-deps', detail: 'missing pygls, lsprotocol' });
  const crash = parseImportCheck(Object.assign(new Error('exit 1'), { code: 1 }), '', 'SyntaxError: bad\n');
  assert.deepEqual(crash, { ok: false, reason: 'error', detail: 'SyntaxError: bad' });
});

test('the notification names the interpreter and the exact pip command', () => {
  const msg = importCheckMessage('/opt/venv/bin/python', { ok: false, reason: 'not-installed', detail: "No module named 'tritonlens'" });
  assert.match(msg, /not installed for \/opt\/venv\/bin\/python/);
  assert.ok(msg.endsWith(pipInstallCommand('/opt/venv/bin/python')));
  assert.match(importCheckMessage('nope', { ok: false, reason: 'no-interpreter', detail: 'ENOENT' }), /"nope" was not found/);
});

test('checkImportable runs a real interpreter', async t => {
  const python = process.env.TRITONLENS_TEST_PYTHON;
  if (!python) return t.skip('TRITONLENS_TEST_PYTHON not set');
  const ok = await checkImportable(python, process.env);
  assert.equal(ok.ok, true, JSON.stringify(ok));
  // An interpreter whose path has no tritonlens: an empty PYTHONPATH and isolated mode (-I) cannot
  // be passed through, so use a fake "python" script that fails to import.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-'));
  const fake = path.join(dir, 'python');
  fs.writeFileSync(fake, '#!/bin/sh\necho \'{"executable": "fake", "error": "ModuleNotFoundError: No module named tritonlens", "missing": []}\'\n', { mode: 0o755 });
  const missing = await checkImportable(fake, process.env);
  assert.deepEqual(missing, { ok: false, reason: 'not-installed', detail: 'ModuleNotFoundError: No module named tritonlens' });
  const absent = await checkImportable(path.join(dir, 'no-such-python'), process.env);
  assert.equal((absent as { reason: string }).reason, 'no-interpreter');
});
