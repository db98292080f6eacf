// End-to-end self test, run only when TRITONLENS_SELFTEST_OUT is set (tests/vscode/test_e2e.py sets
// it). Everything goes through the real editor: the language client's providers via the editor's
// own API commands, the extension's commands by id, edits through the workspace and saves to disk.
// What it saw is written as JSON for the test to assert on.
import * as fs from 'fs';
import * as vscode from 'vscode';
import { findKernels } from './kernels';
import { ServerController } from './server';
import { StatusBar } from './status';

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

function codeOf(d: vscode.Diagnostic): { value: string; href: string | null } {
  if (typeof d.code === 'object' && d.code !== null) return { value: String(d.code.value), href: d.code.target.toString() };
  return { value: d.code === undefined ? '' : String(d.code), href: null };
}

function describe(d: vscode.Diagnostic) {
  return {
    code: codeOf(d).value,
    href: codeOf(d).href,
    source: d.source ?? null,
    message: d.message,
    severity: d.severity,
    line: d.range.start.line,
    character: d.range.start.character,
    related: (d.relatedInformation ?? []).map(r => ({ message: r.message, line: r.location.range.start.line })),
  };
}

function hoverText(hovers: vscode.Hover[] | undefined): string[] {
  return (hovers ?? []).flatMap(h => h.contents.map(c => (typeof c === 'string' ? c : (c as vscode.MarkdownString).value ?? '')));
}

async function waitFor<T>(fn: () => T | undefined, ms: number): Promise<T | undefined> {
  const t0 = Date.now();
  for (;;) {
    const v = fn();
    if (v !== undefined || Date.now() - t0 > ms) return v;
    await sleep(100);
  }
}

export async function runSelfTest(server: ServerController, status: StatusBar): Promise<void> {
  if (!vscode.workspace.isTrusted) return runUntrustedSelfTest(server, status);
  const out = process.env.TRITONLENS_SELFTEST_OUT as string;
  const file = process.env.TRITONLENS_SELFTEST_FILE as string;
  const res: Record<string, unknown> = { vscode: vscode.version, steps: {} as Record<string, number> };
  const steps = res.steps as Record<string, number>;
  const errors: string[] = [];
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T | undefined> => {
    const t0 = Date.now();
    try {
      return await fn();
    } catch (e) {
      errors.push(`${name}: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
      return undefined;
    } finally {
      steps[name] = Date.now() - t0;
    }
  };
  try {
    res.interpreter = server.interpreter;
    res.importCheck = server.lastCheck;
    res.serverRunning = server.client?.isRunning() ?? false;
    const uri = vscode.Uri.file(file);
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc);
    const kernels = findKernels(doc.getText());
    res.kernels = kernels.map(k => k.name);
    const kernel = process.env.TRITONLENS_SELFTEST_KERNEL || kernels[0]?.name;

    const ours = () => vscode.languages.getDiagnostics(uri).filter(d => d.source === 'tritonlens');
    const diags = (await step('diagnostics', () => waitFor(() => (ours().length ? ours() : undefined), 60000))) ?? [];
    res.diagnostics = diags.map(describe);

    await step('hover', async () => {
      const k = kernels.find(x => x.name === kernel);
      if (!k) throw new Error(`kernel ${kernel} not found`);
      const col = doc.lineAt(k.defLine).text.indexOf(k.name);
      const pos = new vscode.Position(k.defLine, col + 1);
      editor.selection = new vscode.Selection(pos, pos);
      res.hoverKernel = hoverText(await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, pos));
      const access = doc.getText().split('\n').findIndex(l => l.includes('tl.load('));
      if (access >= 0) {
        const p = new vscode.Position(access, doc.lineAt(access).text.indexOf('tl.load') + 4);
        res.hoverLoad = hoverText(await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, p));
      }
    });

    await step('codeActions', async () => {
      const all: { title: string; kind: string; hasEdit: boolean; diagnostic: string }[] = [];
      let chosen: vscode.CodeAction | undefined;
      for (const d of diags) {
        const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, d.range, undefined, 50)) ?? [];
        for (const a of actions) {
          all.push({ title: a.title, kind: a.kind?.value ?? '', hasEdit: !!a.edit, diagnostic: codeOf(d).value });
          // A rule's own fix, not "Ignore TLxxx on this line" nor a preview; the rule named by
          // TRITONLENS_SELFTEST_FIX_RULE when set, so that a finding is left for the settings step.
          const wanted = process.env.TRITONLENS_SELFTEST_FIX_RULE;
          const isFix = a.edit && /^tritonlens \(TL\d{3}\)/.test(a.title);
          if (isFix && (!chosen || (wanted && codeOf(d).value === wanted && !chosen.title.includes(`(${wanted})`)))) chosen = a;
        }
      }
      res.codeActions = all;
      if (!chosen) throw new Error('no quick fix with an edit');
      res.appliedTitle = chosen.title;
      // Preview it first (the palette path of tritonlens.previewRewrite: cursor on the diagnostic).
      const target = diags.find(d => all.some(a => a.title === chosen!.title && a.diagnostic === codeOf(d).value))!;
      editor.selection = new vscode.Selection(target.range.start, target.range.start);
      const preview = (await vscode.commands.executeCommand('tritonlens.previewRewrite')) as Record<string, unknown> | undefined;
      const diffTabs = vscode.window.tabGroups.all.flatMap(g => g.tabs).filter(t => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'tritonlens');
      res.preview = { title: preview?.title ?? null, after: preview?.after ?? null, diffTabOpen: diffTabs.length > 0, error: preview?.error ?? null };
      await vscode.window.tabGroups.close(diffTabs);
      await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
      const before = fs.readFileSync(file, 'utf8');
      res.applied = await vscode.workspace.applyEdit(chosen.edit!);
      res.saved = await doc.save();
      res.fileChanged = fs.readFileSync(file, 'utf8') !== before;
      res.fileAfter = fs.readFileSync(file, 'utf8');
    });

    res.profile = await step('profile', async () => {
      const running = Promise.resolve(vscode.commands.executeCommand('tritonlens.profileKernel', uri.toString(), kernel));
      // While it runs, the status bar names the work.
      res.statusDuringProfile = await waitFor(() => (status.text.includes('profiling') ? status.text : undefined), 5000);
      return running;
    });
    res.report = await step('report', () => Promise.resolve(vscode.commands.executeCommand('tritonlens.showReport')));
    res.optimize = await step('optimize', async () => {
      const r = (await vscode.commands.executeCommand('tritonlens.optimizeKernel', uri.toString(), kernel)) as Record<string, unknown> | undefined;
      const report = (r?.report ?? {}) as { mode?: string; candidates?: { title: string; accepted: boolean }[] };
      return { ok: r?.ok ?? null, error: r?.error ?? null, mode: report.mode ?? null, candidates: report.candidates?.map(c => ({ title: c.title, accepted: c.accepted })) ?? [] };
    });
    // Rewrite quick fixes the server offers after Optimize: each has a "Preview: …" sibling.
    await step('rewritePreview', async () => {
      const k = kernels.find(x => x.name === kernel)!;
      const range = new vscode.Range(k.startLine, 0, k.endLine, 0);
      const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, range)) ?? [];
      const previews = actions.filter(a => a.title.startsWith('Preview: ') && a.command);
      res.rewriteActions = actions.map(a => a.title);
      if (previews.length) {
        const cmd = previews[0].command!;
        const p = (await vscode.commands.executeCommand(cmd.command, ...(cmd.arguments ?? []))) as Record<string, unknown> | undefined;
        res.rewritePreview = { title: p?.title ?? null, changed: p?.after !== p?.before, evidence: p?.evidence ?? null, error: p?.error ?? null };
        const diffTabs = vscode.window.tabGroups.all.flatMap(g => g.tabs).filter(t => t.input instanceof vscode.TabInputTextDiff);
        await vscode.window.tabGroups.close(diffTabs);
      }
    });
    res.statusText = status.text;
    res.diagnosticsAfter = ours().map(describe);

    res.ruleDoc = await step('ruleDoc', () => Promise.resolve(vscode.commands.executeCommand('tritonlens.openRuleDoc', diags[0] ? codeOf(diags[0]).value : 'TL001')));
    res.showIr = await step('showIr', async () => {
      // The IR for the first tl.load line of the kernel (1-based, as the command takes it).
      const load = doc.getText().split('\n').findIndex(l => l.includes('tl.load('));
      const result = (await vscode.commands.executeCommand('tritonlens.showIr', uri.toString(), kernel, 'ttir', load + 1)) as Record<string, unknown> | undefined;
      const shown = vscode.window.visibleTextEditors.find(e => e.document.uri.toString() === result?.uri);
      return { ...result, visible: !!shown, loadLine: load + 1 };
    });

    // A setting that needs no restart reaches the running server: ignoring a reported rule hides it.
    await step('configChange', async () => {
      const ignored = (res.diagnosticsAfter as { code: string }[])[0]?.code;
      if (!ignored) throw new Error('no diagnostic left to ignore');
      const clientBefore = server.client;
      const cfg = vscode.workspace.getConfiguration('tritonlens');
      await cfg.update('ignore', [ignored], vscode.ConfigurationTarget.Global);
      const gone = await waitFor(() => (ours().some(d => codeOf(d).value === ignored) ? undefined : true), 15000);
      res.configChange = { ignored, hidden: gone === true, sameServer: server.client === clientBefore };
      await cfg.update('ignore', undefined, vscode.ConfigurationTarget.Global);
      const back = await waitFor(() => (ours().some(d => codeOf(d).value === ignored) ? true : undefined), 15000);
      (res.configChange as Record<string, unknown>).shownAgain = back === true;
    });

    await step('restart', async () => {
      const clientBefore = server.client;
      await vscode.commands.executeCommand('tritonlens.restart');
      const back = await waitFor(() => (ours().length ? true : undefined), 30000);
      res.restart = { newServer: server.client !== clientBefore && !!server.client?.isRunning(), diagnosticsBack: back === true };
    });
    // Leave the kernel file in front for the screenshot.
    await vscode.window.showTextDocument(doc, vscode.ViewColumn.One);
  } catch (e) {
    errors.push(e instanceof Error ? e.stack ?? e.message : String(e));
  }
  res.errors = errors;
  writeJson(out, res);
  if (process.env.TRITONLENS_SELFTEST_BARE_PYTHON) await missingTritonlens(server, status, out);
}

function writeJson(file: string, value: unknown): void {
  fs.writeFileSync(file + '.tmp', JSON.stringify(value, null, 2));
  fs.renameSync(file + '.tmp', file);
}

/**
 * Phase two, after the page has checked the hover: point `tritonlens.interpreter` at a Python
 * without tritonlens. The server must not start and the user must get the exact pip command.
 */
async function missingTritonlens(server: ServerController, status: StatusBar, out: string): Promise<void> {
  const go = out + '.continue';
  const res: Record<string, unknown> = {};
  await waitFor(() => (fs.existsSync(go) ? true : undefined), 120000);
  try {
    // The page typed an API key into "Set LLM API key": the restarted server must have it in its
    // environment under the configured name, and nowhere on its command line.
    const envName = server.serverConfig().llm.apiKeyEnv;
    const seen = await waitFor(() => {
      const env = serverProcesses().map(p => ({ ...p, value: p.environ[envName] }));
      return env.length === 1 && env[0].value && server.client?.isRunning() ? env[0] : undefined;
    }, 30000);
    res.apiKey = { envName, value: seen?.value ?? null, inCommandLine: seen ? seen.cmdline.some(a => a.includes(seen.value!)) : null };
  } catch (e) {
    res.apiKeyError = String(e);
  }
  try {
    await vscode.workspace.getConfiguration('tritonlens').update('interpreter', process.env.TRITONLENS_SELFTEST_BARE_PYTHON, vscode.ConfigurationTarget.Global);
    await waitFor(() => (server.lastCheck && !server.lastCheck.ok && !server.client ? true : undefined), 30000);
    res.interpreter = server.interpreter;
    res.check = server.lastCheck;
    res.serverRunning = server.client?.isRunning() ?? false;
    res.statusText = status.text;
    res.statusTooltip = status.tooltip;
  } catch (e) {
    res.error = String(e);
  }
  writeJson(out + '.phase2.json', res);
  // The page then presses Install: the pip command runs as a task in a terminal, and when it
  // succeeds the server starts without a reload.
  const started = await waitFor(() => (server.client?.isRunning() ? true : undefined), 90000);
  writeJson(out + '.phase3.json', { serverRunning: started === true, check: server.lastCheck, statusText: status.text });
}

/**
 * In a workspace the user did not trust: static analysis works, the server is told `trusted: false`,
 * and Profile / Optimize are refused by the extension without reaching the server.
 */
async function runUntrustedSelfTest(server: ServerController, status: StatusBar): Promise<void> {
  const out = process.env.TRITONLENS_SELFTEST_OUT as string;
  const file = process.env.TRITONLENS_SELFTEST_FILE as string;
  const res: Record<string, unknown> = { trusted: vscode.workspace.isTrusted };
  try {
    const uri = vscode.Uri.file(file);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    res.interpreter = server.interpreter;
    res.serverRunning = server.client?.isRunning() ?? false;
    res.serverConfig = server.serverConfig();
    const ours = () => vscode.languages.getDiagnostics(uri).filter(d => d.source === 'tritonlens');
    res.diagnostics = ((await waitFor(() => (ours().length ? ours() : undefined), 60000)) ?? []).map(describe);
    const before = fs.readFileSync(file, 'utf8');
    res.profile = await vscode.commands.executeCommand('tritonlens.profileKernel', uri.toString(), 'add_kernel');
    res.optimize = await vscode.commands.executeCommand('tritonlens.optimizeKernel', uri.toString(), 'add_kernel');
    // A lens or another caller going straight to the server command is refused by the middleware.
    res.serverProfile = (await vscode.commands.executeCommand('tritonlens.server.profile', uri.toString(), 'add_kernel')) ?? null;
    res.fileUnchanged = fs.readFileSync(file, 'utf8') === before;
    const procs = serverProcesses();
    res.serverProcesses = procs.map(p => ({ cwd: fs.readlinkSync(`/proc/${p.pid}/cwd`), safePath: p.environ.PYTHONSAFEPATH ?? null }));
    res.statusText = status.text;
  } catch (e) {
    res.error = e instanceof Error ? e.stack ?? e.message : String(e);
  }
  writeJson(out, res);
}

/** The language servers this extension host started (Linux /proc): pid, command line, environment. */
function serverProcesses(): { pid: number; cmdline: string[]; environ: Record<string, string> }[] {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (!(cmdline.includes('tritonlens') && cmdline.includes('serve'))) continue;
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const environ: Record<string, string> = {};
      for (const kv of fs.readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0')) {
        const i = kv.indexOf('=');
        if (i > 0) environ[kv.slice(0, i)] = kv.slice(i + 1);
      }
      found.push({ pid: Number(entry), cmdline, environ });
    } catch {
      /* the process ended while we looked */
    }
  }
  return found;
}
