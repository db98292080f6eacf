// What a rewrite quick fix carries for its preview: the edited text and the evidence that it was run,
// proven equal and measured faster. Pure: unit-tested under plain node.

export interface Position { line: number; character: number }
export interface TextEditLike { range: { start: Position; end: Position }; newText: string }

/** Applies LSP-style edits (non-overlapping, any order) to a text. */
export function applyTextEdits(text: string, edits: TextEditLike[]): string {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const offset = (p: Position): number => {
    if (p.line >= lineStarts.length) return text.length;
    const start = lineStarts[p.line];
    const end = p.line + 1 < lineStarts.length ? lineStarts[p.line + 1] - 1 : text.length;
    return Math.min(start + p.character, end);
  };
  const spans = edits
    .map(e => ({ from: offset(e.range.start), to: offset(e.range.end), text: e.newText }))
    .sort((a, b) => b.from - a.from || b.to - a.to);
  let out = text;
  let limit = Infinity;
  for (const s of spans) {
    if (s.to > limit) throw new Error('overlapping edits');
    out = out.slice(0, s.from) + s.text + out.slice(s.to);
    limit = s.from;
  }
  return out;
}

export interface RewritePreview {
  /** Full text of the file after the rewrite, when the action says it directly. */
  candidateText?: string;
  /** Markdown describing why the rewrite is offered (verification, timings). */
  evidenceMarkdown?: string;
  kernel?: string;
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function fmt(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toPrecision(4);
  if (typeof v === 'string') return v;
  return '`' + JSON.stringify(v) + '`';
}

/** Renders an evidence object (or passes markdown through). */
export function evidenceToMarkdown(evidence: unknown): string | undefined {
  if (evidence === undefined || evidence === null) return undefined;
  if (typeof evidence === 'string') return evidence;
  const rec = asRecord(evidence);
  if (!rec) return '```json\n' + JSON.stringify(evidence, null, 2) + '\n```';
  if (typeof rec.markdown === 'string') return rec.markdown;
  const rows = Object.entries(rec).map(([k, v]) => `| ${k} | ${fmt(v)} |`);
  return ['| evidence | value |', '|---|---|', ...rows].join('\n');
}

function num(v: unknown, digits = 3): string {
  return typeof v === 'number' && Number.isFinite(v) ? (Number.isInteger(v) ? String(v) : v.toPrecision(digits)) : '—';
}

/** The evidence of an optimizer candidate (rewrite/api.py's candidate JSON) as markdown. */
export function candidateEvidenceMarkdown(c: Record<string, unknown>): string {
  const out: string[] = [];
  if (typeof c.title === 'string') out.push(`### ${c.title}`);
  if (typeof c.description === 'string') out.push(c.description);
  const verdict = c.accepted === true ? 'accepted' : c.accepted === false ? 'refused' : 'unverified';
  const mode = typeof c.mode === 'string' ? ` (${c.mode} mode)` : '';
  out.push(`**Verdict:** ${verdict}${typeof c.reason === 'string' ? ` — ${c.reason}` : ''}${mode}`);
  const rows: [string, string][] = [];
  if (typeof c.proposer === 'string') rows.push(['proposer', c.proposer]);
  rows.push(['speedup', typeof c.speedup === 'number' ? `×${num(c.speedup)}` : 'not measured']);
  if (c.orig_ms !== undefined || c.cand_ms !== undefined) rows.push(['time, original → candidate', `${num(c.orig_ms)} ms → ${num(c.cand_ms)} ms`]);
  if (c.max_rel_error !== undefined) rows.push(['max relative error', num(c.max_rel_error)]);
  if (c.checks !== undefined) {
    const detail = c.seeds !== undefined && c.shapes !== undefined ? ` (${num(c.seeds)} seeds × ${num(c.shapes)} shapes)` : '';
    rows.push(['checks', `${num(c.checks)}${detail}`]);
  }
  out.push(['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n'));
  const ev = asRecord(c.evidence);
  if (ev) {
    const checks = Array.isArray(ev.checks) ? (ev.checks as Record<string, unknown>[]) : [];
    if (checks.length) {
      const lines = checks.slice(0, 24).map(k => `| ${k.seed ?? ''} | ${k.label ?? k.case ?? ''} | ${k.shapes ?? ''} | ${k.ok ? '✓' : '✗ ' + (k.reason ?? '')} | ${num(k.rel_err)} | ${num(k.tol)} |`);
      const more = checks.length > 24 ? `\n\n… and ${checks.length - 24} more checks` : '';
      out.push(['**Correctness checks**', '', '| seed | case | shapes | ok | rel. error | tolerance |', '|---|---|---|---|---|---|', ...lines].join('\n') + more);
    }
    const rest = Object.entries(ev).filter(([k]) => k !== 'checks');
    if (rest.length) out.push(rest.map(([k, v]) => `- **${k}**: ${typeof v === 'string' ? v : '`' + JSON.stringify(v) + '`'}`).join('\n'));
  }
  return out.join('\n\n');
}

function looksLikeCandidate(r: Record<string, unknown> | undefined): r is Record<string, unknown> {
  return !!r && ('accepted' in r || 'speedup' in r || 'quick_fix_title' in r);
}

/**
 * Reads a rewrite action's `data`. Accepted shapes: `{candidate: "text"}`,
 * `{candidate: {text|source, evidence, ...}}` (the optimizer's candidate JSON), the candidate JSON
 * itself, `{candidateText}`, and `evidence` beside them. A plain quick fix's data (uri, version,
 * code, range): undefined — it is not a rewrite.
 */
export function readRewriteData(data: unknown): RewritePreview | undefined {
  const rec = asRecord(data);
  if (!rec) return undefined;
  const candidate = rec.candidate;
  const cand = asRecord(candidate) ?? (looksLikeCandidate(rec) ? rec : undefined);
  const candidateText =
    typeof candidate === 'string'
      ? candidate
      : typeof cand?.text === 'string'
        ? (cand.text as string)
        : typeof cand?.source === 'string'
          ? (cand.source as string)
          : typeof rec.candidateText === 'string'
            ? (rec.candidateText as string)
            : undefined;
  const evidenceMarkdown = looksLikeCandidate(cand) ? candidateEvidenceMarkdown(cand) : evidenceToMarkdown(rec.evidence ?? (cand as Record<string, unknown> | undefined)?.evidence);
  // A server may mark a rewrite and send its edit only on codeAction/resolve.
  if (candidateText === undefined && evidenceMarkdown === undefined && rec.action !== 'rewrite') return undefined;
  const kernel = typeof rec.kernel === 'string' ? rec.kernel : typeof cand?.kernel === 'string' ? (cand.kernel as string) : undefined;
  return { candidateText, evidenceMarkdown, kernel };
}
