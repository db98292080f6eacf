// Read-only virtual documents (IR listings, rewrite candidates, reports) under the `tritonlens` scheme.
import * as vscode from 'vscode';

export const SCHEME = 'tritonlens';

export class VirtualDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private counter = 0;

  /** Stores `content` under a fresh uri whose path ends in `name` (the extension picks the language). */
  put(name: string, content: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${name}`, query: String(++this.counter) });
    this.contents.set(uri.toString(), content);
    // Keep memory bounded: older listings are dropped once 50 newer ones exist.
    if (this.contents.size > 50) this.contents.delete(this.contents.keys().next().value as string);
    this.changed.fire(uri);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '(this tritonlens document is no longer available)';
  }

  dispose(): void {
    this.changed.dispose();
    this.contents.clear();
  }
}
