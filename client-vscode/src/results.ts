// Reading the server's command results (profile, optimize, showIr). Pure: unit-tested under plain node.

/** A one-line summary of a profile/optimize result ({ok, report} or {ok: false, error}). */
export function summarize(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result && typeof result === 'object') {
    const r = result as Record<string, unknown>;
    for (const key of ['summary', 'message', 'title']) if (typeof r[key] === 'string') return r[key] as string;
    if (typeof r.markdown === 'string') return (r.markdown as string).split('\n').find(l => l.trim()) ?? 'done';
    const report = r.report as Record<string, unknown> | undefined;
    if (report && typeof report === 'object') {
      if (typeof report.summary === 'string') return report.summary;
      if (Array.isArray(report.candidates)) {
        const cands = report.candidates as { accepted?: boolean }[];
        const accepted = cands.filter(c => c.accepted).length;
        const best = report.best as { title?: string; speedup?: number | null } | null | undefined;
        const bestText = best?.title ? `; best: ${best.title}${typeof best.speedup === 'number' ? ` (×${best.speedup.toFixed(2)})` : ''}` : '';
        return `${cands.length} candidate${cands.length === 1 ? '' : 's'}, ${accepted} verified${bestText}`;
      }
      if (Array.isArray(report.kernels)) {
        const parts = (report.kernels as Record<string, unknown>[]).map(k => kernelLine(k, report.mode));
        if (typeof report.error === 'string' && report.error) parts.push(`error: ${report.error.split('\n')[0]}`);
        return parts.join('; ') || 'no kernel launched';
      }
    }
  }
  return 'done';
}

/**
 * What the editor says when profile or optimize ends: the server's own words (`message`, the same
 * text it sends other clients in window/showMessage), else built alike from the summary.
 */
export function noticeOf(verb: string, kernel: string, result: unknown): string {
  const message = (result as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message ? message : `tritonlens ${verb} ${kernel}: ${summarize(result)}`;
}

/** The device a profile/optimize report says it ran on. */
export function deviceOf(result: unknown): string | undefined {
  const device = ((result as { report?: { device?: unknown } } | null)?.report?.device ?? undefined) as { name?: unknown } | string | undefined;
  if (typeof device === 'string') return device || undefined;
  return typeof device?.name === 'string' && device.name ? device.name : undefined;
}

/** The server's refusal in a result (`{ok: false, error}`), if any. */
export function failureOf(result: unknown): string | undefined {
  if (result && typeof result === 'object') {
    const r = result as Record<string, unknown>;
    if (r.ok === false) return typeof r.error === 'string' ? r.error : 'failed';
  }
  return undefined;
}

/** Reads the server's showIr answer: a string, or {text|ir|content, marked_lines|lines|highlight|marked} (0-based IR lines). */
export function readIr(result: unknown): { text: string; lines: number[] } | undefined {
  if (typeof result === 'string') return { text: result, lines: [] };
  if (!result || typeof result !== 'object') return undefined;
  const r = result as Record<string, unknown>;
  const text = [r.text, r.ir, r.content].find(v => typeof v === 'string') as string | undefined;
  if (text === undefined) return undefined;
  const raw = [r.marked_lines, r.lines, r.highlight, r.marked, r.highlights].find(Array.isArray) as unknown[] | undefined;
  const lines = (raw ?? []).flatMap(v => {
    if (typeof v === 'number') return [v];
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.line === 'number') return [o.line];
      const start = (o.start as { line?: unknown } | undefined)?.line;
      const end = (o.end as { line?: unknown } | undefined)?.line;
      if (typeof start === 'number') {
        const out: number[] = [];
        for (let l = start; l <= (typeof end === 'number' ? end : start); l++) out.push(l);
        return out;
      }
    }
    return [];
  });
  return { text, lines };
}

function fixed(v: unknown, digits: number): string | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : undefined;
}

/** "add_kernel: 0.041 ms · 1234 GB/s · 86% of peak · memory-bound" for a profile report's kernel entry. */
export function kernelLine(k: Record<string, unknown>, mode: unknown): string {
  const name = typeof k.name === 'string' ? k.name : 'kernel';
  if (typeof k.error === 'string' && k.error) return `${name}: error: ${k.error.split('\n')[0]}`;
  const launch = (Array.isArray(k.launches) ? k.launches[0] : undefined) as Record<string, unknown> | undefined;
  if (!launch) return `${name}: not launched by the harness`;
  const time = fixed(launch.time_ms, 3);
  if (time === undefined) {
    return mode === 'interpreter' ? `${name}: ran in Triton's interpreter (no GPU: correctness only, no timing)` : `${name}: no timing`;
  }
  const cells = [`${time} ms`];
  const gbps = fixed(launch.gbps, 0);
  const tflops = fixed(launch.tflops, 1);
  const pct = fixed(launch.pct_of_peak, 0);
  if (gbps !== undefined) cells.push(`${gbps} GB/s`);
  if (tflops !== undefined && Number(tflops) > 0) cells.push(`${tflops} TFLOP/s`);
  if (pct !== undefined) cells.push(`${pct}% of peak`);
  if (typeof launch.bound === 'string' && launch.bound) cells.push(`${launch.bound}-bound`);
  return `${name}: ${cells.join(' · ')}`;
}
