// The status bar item: where kernels would run (backend · GPU), the server's state, and running work.
import * as vscode from 'vscode';

export type ServerState = 'starting' | 'running' | 'stopped' | 'not-installed' | 'error';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('tritonlens.status', vscode.StatusBarAlignment.Right, 100);
  private state: ServerState = 'stopped';
  private detail = '';
  private backend = 'local';
  private targetGpu = 'H100';
  /**
   * The device each backend runs kernels on ("NVIDIA H100 80GB HBM3", "cpu (triton interpreter)"), as
   * its runs report it: a property of the backend, so it stays when runs start differently or the
   * backend setting goes and comes back. Until one is known no device is shown: the estimates'
   * target GPU is not a device.
   */
  private readonly devices = new Map<string, string>();
  private trusted = true;
  private readonly work = new Map<number, string>();
  private nextWork = 1;

  constructor() {
    this.item.name = 'tritonlens';
    this.item.command = 'tritonlens.showOutput';
    this.render();
    this.item.show();
  }

  setTarget(backend: string, targetGpu: string, trusted: boolean): void {
    this.backend = backend;
    this.targetGpu = targetGpu;
    this.trusted = trusted;
    this.render();
  }

  /** The device of `backend` (default: the current one). */
  setDevice(device: string | undefined, backend = this.backend): void {
    if (!device || this.devices.get(backend) === device) return;
    this.devices.set(backend, device);
    this.render();
  }

  get device(): string | undefined {
    return this.devices.get(this.backend);
  }

  setState(state: ServerState, detail = ''): void {
    this.state = state;
    this.detail = detail;
    this.render();
  }

  /** Marks work as running until the returned function is called. */
  beginWork(label: string): () => void {
    const id = this.nextWork++;
    this.work.set(id, label);
    this.render();
    return () => {
      this.work.delete(id);
      this.render();
    };
  }

  get text(): string {
    return this.item.text;
  }

  get tooltip(): string {
    return typeof this.item.tooltip === 'string' ? this.item.tooltip : '';
  }

  private render(): void {
    const running = [...this.work.values()];
    let icon = '$(pulse)';
    if (running.length) icon = '$(sync~spin)';
    else if (this.state === 'starting') icon = '$(loading~spin)';
    else if (this.state === 'not-installed' || this.state === 'error') icon = '$(warning)';
    else if (this.state === 'stopped') icon = '$(circle-slash)';
    let text = `${icon} tritonlens: ${this.backend}` + (this.device ? ` · ${this.device}` : '');
    if (!this.trusted) text += ' (restricted)';
    if (running.length === 1) text += ` · ${running[0]}`;
    else if (running.length > 1) text += ` · ${running.length} jobs`;
    if (this.state === 'not-installed') text = `$(warning) tritonlens: not installed`;
    this.item.text = text;
    const lines = [`tritonlens language server: ${this.state}`, `backend: ${this.backend}; estimates for ${this.targetGpu}`];
    lines.push(this.device ? `device: ${this.device}` : 'device: known after the first profile');
    if (this.detail) lines.push(this.detail);
    if (!this.trusted) lines.push('Untrusted workspace: profiling and optimizing are off.');
    for (const w of running) lines.push(`running: ${w}`);
    lines.push('Click to show the server log.');
    this.item.tooltip = lines.join('\n');
    this.item.backgroundColor =
      this.state === 'not-installed' || this.state === 'error' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
