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

/**
 * Reads a rewrite action's `data`. Accepted shapes: `{candidate: "text"}`,
 * `{candidate: {text|source, evidence}}`, `{candidateText}`, `{newText}`, and `evidence` beside them.
 * Nothing found: undefined (the action is then not a previewable rewrite).
 */
export function readRewriteData(data: unknown): RewritePreview | undefined {
  const rec = asRecord(data);
  if (!rec) return undefined;
  const candidate = rec.candidate;
  const cand = asRecord(candidate);
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
  const evidenceMarkdown = evidenceToMarkdown(rec.evidence ?? cand?.evidence);
  if (candidateText === undefined && evidenceMarkdown === undefined) return undefined;
  const kernel = typeof rec.kernel === 'string' ? rec.kernel : undefined;
  return { candidateText, evidenceMarkdown, kernel };
}
