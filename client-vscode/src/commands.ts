// The extension's commands: profile / optimize / report / recorded profile / IR / rewrite preview / rule docs / API key.
import * as vscode from 'vscode';
import type * as lsp from 'vscode-languageclient/node';
import { findKernels, kernelAtLine } from './kernels';
import { deviceOf, failureOf, noticeOf, readIr } from './results';
import { applyTextEdits, readRewriteData, RewritePreview, TextEditLike } from './rewriteData';
import { API_KEY_SECRET, ServerController, SHOW_REPORT_COMMAND, UNTRUSTED_MESSAGE } from './server';
import { VirtualDocuments } from './virtualDocs';

export const IR_STAGES = ['ttir', 'ttgir', 'llir', 'ptx', 'sass'];

interface KernelTarget {
  uri: vscode.Uri;
  kernel: string;
}

/** The kernel named by the arguments, else the one at the cursor, else one the user picks. */
async function pickKernel(uriArg?: unknown, kernelArg?: unknown): Promise<KernelTarget | undefined> {
  const uri = typeof uriArg === 'string' ? vscode.Uri.parse(uriArg) : uriArg instanceof vscode.Uri ? uriArg : vscode.window.activeTextEditor?.document.uri;
  if (!uri) {
    void vscode.window.showWarningMessage('tritonlens: open a Python file with a Triton kernel first.');
    return undefined;
  }
  if (typeof kernelArg === 'string' && kernelArg) return { uri, kernel: kernelArg };
  const document = await vscode.workspace.openTextDocument(uri);
  const kernels = findKernels(document.getText());
  if (kernels.length === 0) {
    void vscode.window.showWarningMessage(`tritonlens: no @triton.jit kernel in ${vscode.workspace.asRelativePath(uri)}.`);
    return undefined;
  }
  const editor = vscode.window.activeTextEditor;
  if (editor && editor.document.uri.toString() === uri.toString()) {
    const here = kernelAtLine(kernels, editor.selection.active.line);
    if (here) return { uri, kernel: here.name };
  }
  if (kernels.length === 1) return { uri, kernel: kernels[0].name };
  const pick = await vscode.window.showQuickPick(
    kernels.map(k => ({ label: k.name, description: `line ${k.defLine + 1}` })),
    { placeHolder: 'Which kernel?' },
  );
  return pick ? { uri, kernel: pick.label } : undefined;
}




function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class Commands {
  private readonly irHighlight = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.findMatchForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Center,
  });
  private reportPanel: vscode.WebviewPanel | undefined;
  /** The last kernel profiled or optimized: "Show last report" falls back to its file. */
  private lastTarget: KernelTarget | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: ServerController,
    private readonly docs: VirtualDocuments,
  ) {}

  register(): vscode.Disposable[] {
    const reg = (id: string, fn: (...args: any[]) => unknown) => vscode.commands.registerCommand(id, fn);
    return [
      reg('tritonlens.profileKernel', (uri?: unknown, kernel?: unknown) => this.runKernelCommand('profile', uri, kernel)),
      reg('tritonlens.optimizeKernel', (uri?: unknown, kernel?: unknown) => this.runKernelCommand('optimize', uri, kernel)),
      reg(SHOW_REPORT_COMMAND, (uri?: unknown, kernel?: unknown) => this.showReport(uri, kernel)),
      reg('tritonlens.showIr', (uri?: unknown, kernel?: unknown, stage?: unknown, line?: unknown) => this.showIr(uri, kernel, stage, line)),
      reg('tritonlens.previewRewrite', (arg?: unknown) => this.previewRewrite(arg)),
      reg('tritonlens.openRuleDoc', (arg?: unknown) => this.openRuleDoc(arg)),
      reg('tritonlens.openRecordedProfile', (path?: unknown, uri?: unknown) => this.openRecordedProfile(path, uri)),
      reg('tritonlens.setApiKey', () => this.setApiKey()),
      reg('tritonlens.restart', () => this.server.restart('restart command')),
      reg('tritonlens.showOutput', () => this.server.output.show(true)),
      this.irHighlight,
    ];
  }

  /**
   * Profile or optimize, from the palette, the context menu or a lens alike: returns the server's
   * result (also for tests) and shows its notice. After optimize, the proven rewrite the server
   * offers (one at most) gets 'Preview best' and 'Apply'; otherwise 'Show report'.
   */
  async runKernelCommand(verb: 'profile' | 'optimize', uriArg?: unknown, kernelArg?: unknown): Promise<unknown> {
    if (!this.server.trusted) {
      void vscode.window.showWarningMessage(UNTRUSTED_MESSAGE, 'Manage Workspace Trust').then(pick => {
        if (pick) void vscode.commands.executeCommand('workbench.trust.manage');
      });
      return { error: UNTRUSTED_MESSAGE };
    }
    const target = await pickKernel(uriArg, kernelArg);
    if (!target) return undefined;
    const document = vscode.workspace.textDocuments.find(d => d.uri.toString() === target.uri.toString());
    if (document?.isDirty) await document.save(); // the worker reads the file from disk
    const label = `${verb === 'profile' ? 'profiling' : 'optimizing'} ${target.kernel}`;
    try {
      const result = await this.server.executeServerCommand(`tritonlens.server.${verb}`, [target.uri.toString(), target.kernel], label);
      this.lastTarget = target;
      const device = deviceOf(result);
      if (device) this.server.status.setDevice(device);
      const failure = failureOf(result);
      if (failure) {
        // The server already said why in a window/showMessage; keep the log pointer only.
        this.server.output.appendLine(`[client] ${verb} ${target.kernel}: ${failure}`);
        return result;
      }
      const best = verb === 'optimize' ? await this.bestRewrite(target) : undefined;
      const notice = noticeOf(verb, target.kernel, result);
      const buttons = best ? ['Preview best', 'Apply'] : ['Show report'];
      void vscode.window.showInformationMessage(notice, ...buttons).then(pick => {
        if (pick === 'Show report') void this.showReport(target.uri.toString(), target.kernel);
        else if (pick === 'Preview best' && best) void this.previewRewrite(this.server.rememberRewrite({ uri: target.uri.toString(), action: best }));
        else if (pick === 'Apply' && best) void this.applyRewrite(best);
      });
      if (!result || typeof result !== 'object') return result;
      return verb === 'optimize' ? { ...result, notice, bestRewrite: best?.title ?? null } : { ...result, notice };
    } catch (e) {
      const message = errorText(e);
      void vscode.window.showErrorMessage(`tritonlens ${verb} ${target.kernel}: ${message}`, 'Show log').then(pick => {
        if (pick) this.server.output.show(true);
      });
      return { error: message };
    }
  }

  /**
   * A profile recorded elsewhere (`tritonlens profile FILE --lines --format json > prof.json` on a GPU
   * host) shown on the active editor's kernels: picked in a file dialog unless a path is given. The
   * server says what it showed, what was stale and why a file was refused.
   */
  async openRecordedProfile(pathArg?: unknown, uriArg?: unknown): Promise<unknown> {
    const uri = typeof uriArg === 'string' ? uriArg : vscode.window.activeTextEditor?.document.uri.toString();
    if (!uri) {
      void vscode.window.showWarningMessage('tritonlens: open the kernel file the profile was recorded from first.');
      return { error: 'no file' };
    }
    let path = typeof pathArg === 'string' && pathArg ? pathArg : undefined;
    if (!path) {
      const picked = await vscode.window.showOpenDialog({
        canSelectMany: false,
        filters: { 'tritonlens profile (JSON)': ['json'] },
        openLabel: 'Open profile',
        title: 'tritonlens: Open recorded profile',
      });
      if (!picked || picked.length === 0) return undefined;
      path = picked[0].fsPath;
    }
    try {
      const result = await this.server.executeServerCommand('tritonlens.server.openProfile', [uri, path], 'opening a profile');
      const shown = (result as { shown?: unknown } | undefined)?.shown;
      if (Array.isArray(shown) && typeof shown[0] === 'string') this.lastTarget = { uri: vscode.Uri.parse(uri), kernel: shown[0] };
      return result;
    } catch (e) {
      void vscode.window.showErrorMessage(`tritonlens: the profile was not opened (${errorText(e)})`);
      return { error: errorText(e) };
    }
  }

  /** The rewrite quick fix the server offers for the kernel after Optimize: its proven best, if any. */
  private async bestRewrite(target: KernelTarget): Promise<lsp.CodeAction | undefined> {
    try {
      const document = await vscode.workspace.openTextDocument(target.uri);
      const all = await this.server.codeActionsAt(document, new vscode.Range(0, 0, document.lineCount, 0));
      return all.find(a => readRewriteData(a.data)?.kernel === target.kernel);
    } catch (e) {
      this.server.output.appendLine(`[client] the rewrite of ${target.kernel}: ${errorText(e)}`);
      return undefined;
    }
  }

  /** Applies a rewrite quick fix as the server resolves it (refused once the file has changed). */
  async applyRewrite(action: lsp.CodeAction): Promise<boolean> {
    try {
      const resolved = await this.server.resolveAction(action);
      if (!resolved.edit) throw new Error(`"${resolved.title}" carries no edit`);
      const edit = await this.server.client!.protocol2CodeConverter.asWorkspaceEdit(resolved.edit);
      if (await vscode.workspace.applyEdit(edit)) return true;
      throw new Error('the editor refused the edit');
    } catch (e) {
      void vscode.window.showErrorMessage(`tritonlens: the rewrite was not applied (${errorText(e)}); optimize again.`);
      return false;
    }
  }

  /**
   * A report in a webview (markdown rendered by VS Code's own renderer): with a kernel (the hover's
   * "Full report" link, the notice's 'Show report'), that kernel's full report, then the last run's.
   */
  async showReport(uriArg?: unknown, kernelArg?: unknown): Promise<{ markdown: string } | { error: string }> {
    const active = vscode.window.activeTextEditor?.document;
    const uri =
      typeof uriArg === 'string'
        ? uriArg
        : this.lastTarget && (!active || active.languageId !== 'python' || active.uri.toString() === this.lastTarget.uri.toString())
          ? this.lastTarget.uri.toString()
          : active?.languageId === 'python'
            ? active.uri.toString()
            : undefined;
    if (!uri) {
      void vscode.window.showInformationMessage('tritonlens: no report yet — profile or optimize a kernel first.');
      return { error: 'no file' };
    }
    let report: unknown;
    try {
      const args = typeof kernelArg === 'string' && kernelArg ? [uri, kernelArg] : [uri];
      report = await this.server.executeServerCommand('tritonlens.server.report', args, 'report');
    } catch (e) {
      void vscode.window.showErrorMessage(`tritonlens: no report (${errorText(e)})`);
      return { error: errorText(e) };
    }
    const r = (report ?? {}) as { markdown?: unknown; json?: unknown };
    const markdown = typeof r.markdown === 'string' && r.markdown.trim() ? r.markdown : typeof report === 'string' ? report : '';
    if (!markdown) {
      void vscode.window.showInformationMessage('tritonlens: no report yet — profile or optimize a kernel first.');
      return { markdown: '' };
    }
    let html: string;
    try {
      html = await vscode.commands.executeCommand<string>('markdown.api.render', markdown);
    } catch {
      html = `<pre>${escapeHtml(markdown)}</pre>`; // the built-in markdown extension is disabled
    }
    const json = r.json !== undefined ? `<details><summary>JSON</summary><pre>${escapeHtml(JSON.stringify(r.json, null, 2))}</pre></details>` : '';
    if (!this.reportPanel) {
      this.reportPanel = vscode.window.createWebviewPanel('tritonlens.report', 'tritonlens report', vscode.ViewColumn.Beside, {
        enableScripts: false,
        enableFindWidget: true,
      });
      this.reportPanel.onDidDispose(() => (this.reportPanel = undefined));
    }
    this.reportPanel.webview.html = webviewPage('tritonlens report', html + json);
    this.reportPanel.reveal(vscode.ViewColumn.Beside, true);
    return { markdown };
  }

  /** The compiler's IR for a kernel in a virtual document, the lines the server marks highlighted. */
  async showIr(uriArg?: unknown, kernelArg?: unknown, stageArg?: unknown, lineArg?: unknown): Promise<unknown> {
    const target = await pickKernel(uriArg, kernelArg);
    if (!target) return undefined;
    let stage = typeof stageArg === 'string' ? stageArg : undefined;
    if (!stage) {
      stage = await vscode.window.showQuickPick(IR_STAGES, { placeHolder: `IR stage for ${target.kernel}` });
      if (!stage) return undefined;
    }
    const editor = vscode.window.activeTextEditor;
    // 1-based, as the server's showIr takes it (the IR's line map speaks source lines).
    const line = typeof lineArg === 'number' ? lineArg : editor?.document.uri.toString() === target.uri.toString() ? editor.selection.active.line + 1 : null;
    let result: unknown;
    try {
      result = await this.server.executeServerCommand('tritonlens.server.showIr', [target.uri.toString(), target.kernel, stage, line], `IR ${target.kernel}`);
    } catch (e) {
      void vscode.window.showErrorMessage(`tritonlens: IR of ${target.kernel}: ${errorText(e)}`);
      return { error: errorText(e) };
    }
    const failure = failureOf(result);
    if (failure) return { error: failure }; // the server has shown its message already
    const ir = readIr(result);
    if (!ir) {
      void vscode.window.showErrorMessage(`tritonlens: the server returned no IR for ${target.kernel} (${stage}).`);
      return { error: 'no IR' };
    }
    const uri = this.docs.put(`${target.kernel}.${stage}`, ir.text);
    const doc = await vscode.workspace.openTextDocument(uri);
    const shown = await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    const ranges = ir.lines.filter(l => l >= 0 && l < doc.lineCount).map(l => doc.lineAt(l).range);
    shown.setDecorations(this.irHighlight, ranges);
    if (ranges.length) shown.revealRange(ranges[0], vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    return { uri: uri.toString(), stage, line, marked: ir.lines, lineCount: doc.lineCount, markedText: ranges.map(r => doc.getText(r)) };
  }

  /**
   * Shows what a rewrite quick fix would do: a diff editor (file ↔ file after the fix) and its
   * evidence, then asks whether to apply it. Argument: the id the Preview code action carries, or
   * nothing (the rewrites at the cursor are offered).
   */
  async previewRewrite(arg?: unknown): Promise<unknown> {
    let uri: vscode.Uri;
    let action: lsp.CodeAction | undefined;
    const stored = typeof arg === 'string' ? this.server.storedRewrite(arg) : undefined;
    if (stored) {
      uri = vscode.Uri.parse(stored.uri);
      action = stored.action;
    } else {
      const editor = vscode.window.activeTextEditor;
      if (!editor) {
        void vscode.window.showWarningMessage('tritonlens: open a kernel file to preview its rewrites.');
        return undefined;
      }
      uri = editor.document.uri;
      const line = editor.document.lineAt(editor.selection.active.line).range;
      let candidates: lsp.CodeAction[];
      try {
        // Rewrites first; the rules' own quick fixes can be previewed the same way.
        const all = await this.server.codeActionsAt(editor.document, line);
        candidates = [...all.filter(a => readRewriteData(a.data)), ...all.filter(a => !readRewriteData(a.data) && a.data && (a.data as { action?: unknown }).action !== 'ignore')];
      } catch (e) {
        void vscode.window.showErrorMessage(`tritonlens: ${errorText(e)}`);
        return { error: errorText(e) };
      }
      if (candidates.length === 0) {
        void vscode.window.showInformationMessage('tritonlens: no rewrite or fix is offered on this line (rewrites appear after Optimize kernel).');
        return { error: 'no rewrite here' };
      }
      candidates = candidates.filter((a, i) => candidates.findIndex(b => b.title === a.title) === i);
      action =
        candidates.length === 1
          ? candidates[0]
          : (await vscode.window.showQuickPick(candidates.map(a => ({ label: a.title, action: a })), { placeHolder: 'Preview which rewrite?' }))?.action;
      if (!action) return undefined;
    }
    const document = await vscode.workspace.openTextDocument(uri);
    const resolved = await this.server.resolveAction(action);
    const data: RewritePreview = readRewriteData(resolved.data) ?? readRewriteData(action.data) ?? {};
    const before = document.getText();
    const version = document.version;
    const edits = resolved.edit ? editsFor(resolved.edit, uri.toString()) : undefined;
    const after = edits ? applyTextEdits(before, edits) : data.candidateText;
    if (after === undefined) {
      void vscode.window.showErrorMessage(`tritonlens: "${resolved.title}" carries no edit to preview.`);
      return { error: 'no edit' };
    }
    const name = uri.path.split('/').pop() ?? 'kernel.py';
    const right = this.docs.put(`rewrite/${name}`, after);
    await vscode.commands.executeCommand('vscode.diff', uri, right, `${name} ↔ ${resolved.title}`, { preview: true });
    if (data.evidenceMarkdown) await this.showEvidence(resolved.title, data.evidenceMarkdown);
    void vscode.window.showInformationMessage(`Apply "${resolved.title}"?`, 'Apply', 'Discard').then(async pick => {
      if (pick !== 'Apply') return;
      const edit = resolved.edit
        ? await this.server.client!.protocol2CodeConverter.asWorkspaceEdit(resolved.edit)
        : wholeFileEdit(document, after);
      if (document.version !== version || !(await vscode.workspace.applyEdit(edit))) {
        void vscode.window.showErrorMessage('tritonlens: the file changed since the preview; preview the rewrite again.');
      }
    });
    return { title: resolved.title, before, after, evidence: data.evidenceMarkdown ?? null, diff: right.toString() };
  }

  private async showEvidence(title: string, markdown: string): Promise<void> {
    let html: string;
    try {
      html = await vscode.commands.executeCommand<string>('markdown.api.render', markdown);
    } catch {
      html = `<pre>${escapeHtml(markdown)}</pre>`;
    }
    const panel = vscode.window.createWebviewPanel('tritonlens.evidence', `Evidence: ${title}`, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, { enableScripts: false });
    panel.webview.html = webviewPage(`Evidence: ${title}`, html);
  }

  /** Opens the documentation page of a rule: from an argument (TLnnn, a URL) or the diagnostics at the cursor. */
  async openRuleDoc(arg?: unknown): Promise<unknown> {
    const editor = vscode.window.activeTextEditor;
    const all = editor
      ? vscode.languages.getDiagnostics(editor.document.uri).filter(d => d.source === 'tritonlens')
      : vscode.languages.getDiagnostics().flatMap(([, ds]) => ds.filter(d => d.source === 'tritonlens'));
    const withDoc = all.filter(d => typeof d.code === 'object' && d.code !== null && d.code.target);
    let target: vscode.Uri | undefined;
    if (typeof arg === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(arg)) target = vscode.Uri.parse(arg);
    else if (typeof arg === 'string') target = withDoc.map(d => d.code as { value: string | number; target: vscode.Uri }).find(c => String(c.value) === arg)?.target;
    else {
      const line = editor?.selection.active.line;
      const here = withDoc.filter(d => line !== undefined && d.range.start.line <= line && line <= d.range.end.line);
      const choices = here.length ? here : withDoc;
      const seen = new Map<string, vscode.Uri>();
      for (const d of choices) {
        const c = d.code as { value: string | number; target: vscode.Uri };
        seen.set(String(c.value), c.target);
      }
      if (seen.size === 1) target = [...seen.values()][0];
      else if (seen.size > 1) {
        const pick = await vscode.window.showQuickPick([...seen.keys()].sort(), { placeHolder: 'Documentation of which rule?' });
        target = pick ? seen.get(pick) : undefined;
        if (!pick) return undefined;
      }
    }
    if (!target && typeof arg === 'string' && /^TL\d{3}$/.test(arg)) {
      // No diagnostic of that rule at hand: its page sits beside any other rule's page.
      const sibling = all.map(d => d.code).find((c): c is { value: string | number; target: vscode.Uri } => typeof c === 'object' && c !== null && /\/TL\d{3}\.md$/.test(c.target.path));
      if (sibling) target = sibling.target.with({ path: sibling.target.path.replace(/TL\d{3}\.md$/, `${arg}.md`) });
    }
    if (!target) {
      void vscode.window.showInformationMessage(`tritonlens: no rule documentation found${typeof arg === 'string' ? ` for ${arg}` : ' here'}.`);
      return undefined;
    }
    if (target.scheme !== 'file') {
      await vscode.env.openExternal(target);
      return target.toString();
    }
    // The page is the installed package's own file: opening it would offer to edit (and commit) it,
    // so a read-only copy is shown instead.
    let text: string;
    try {
      text = Buffer.from(await vscode.workspace.fs.readFile(target)).toString('utf8');
    } catch {
      void vscode.window.showInformationMessage(`tritonlens: the rule documentation ${target.fsPath} cannot be read.`);
      return undefined;
    }
    const copy = this.docs.put(target.path.split('/').pop() || 'rule.md', text);
    let previewed = false;
    if (copy.path.endsWith('.md')) {
      try {
        await vscode.commands.executeCommand('markdown.showPreview', copy);
        previewed = true;
      } catch {
        // no markdown preview in this editor: the read-only text instead
      }
    }
    if (!previewed) await vscode.window.showTextDocument(copy, { preview: true });
    return target.toString();
  }

  /** Stores the LLM API key in secret storage (empty input removes it) and restarts the server with it. */
  async setApiKey(): Promise<void> {
    const envName = this.server.serverConfig().llm.apiKeyEnv;
    const value = await vscode.window.showInputBox({
      title: 'tritonlens: LLM API key',
      prompt: `Stored in VS Code's secret storage and given to the server as ${envName}. Leave empty to remove the stored key.`,
      password: true,
      ignoreFocusOut: true,
    });
    if (value === undefined) return;
    if (value.trim()) await this.context.secrets.store(API_KEY_SECRET, value.trim());
    else await this.context.secrets.delete(API_KEY_SECRET);
    void vscode.window.showInformationMessage(value.trim() ? 'tritonlens: API key stored.' : 'tritonlens: API key removed.');
    await this.server.restart('API key changed');
  }
}


function editsFor(edit: lsp.WorkspaceEdit, uri: string): TextEditLike[] | undefined {
  const same = (u: string) => vscode.Uri.parse(u).toString() === uri;
  if (edit.documentChanges) {
    const out: TextEditLike[] = [];
    for (const change of edit.documentChanges) {
      if ('textDocument' in change && same(change.textDocument.uri)) out.push(...change.edits.map(e => e as TextEditLike));
    }
    return out.length ? out : undefined;
  }
  for (const [u, edits] of Object.entries(edit.changes ?? {})) if (same(u)) return edits;
  return undefined;
}

function wholeFileEdit(document: vscode.TextDocument, text: string): vscode.WorkspaceEdit {
  const edit = new vscode.WorkspaceEdit();
  edit.replace(document.uri, new vscode.Range(0, 0, document.lineCount, 0), text);
  return edit;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
}

function webviewPage(title: string, body: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:;">
<title>${escapeHtml(title)}</title>
<style>body{font-family:var(--vscode-font-family);color:var(--vscode-foreground);padding:0 1em}
table{border-collapse:collapse}td,th{border:1px solid var(--vscode-panel-border);padding:2px 8px}
pre,code{font-family:var(--vscode-editor-font-family)}</style></head><body>${body}</body></html>`;
}
