// Finds the Triton kernels of a Python file, so that "Profile kernel" and friends act on the kernel at
// the cursor (or offer a pick). A line scanner, not a parser: the server owns real analysis, this only
// has to name kernels. Pure: unit-tested under plain node.

export interface KernelLocation {
  name: string;
  /** First decorator line (0-based). */
  startLine: number;
  /** The `def` line (0-based). */
  defLine: number;
  /** Last line of the body (0-based, inclusive). */
  endLine: number;
}

const KERNEL_DECORATOR = /^@\s*(?:triton\s*\.\s*(?:jit|autotune|heuristics)|jit)\b/;
const DEF = /^(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(/;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function isBlankOrComment(line: string): boolean {
  const t = line.trim();
  return t === '' || t.startsWith('#');
}

/** Net change of bracket depth over a line, ignoring brackets inside strings and comments. */
function bracketDelta(line: string): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '#') break;
    else if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
  }
  return depth;
}

export function findKernels(text: string): KernelLocation[] {
  const lines = text.split(/\r?\n/);
  const kernels: KernelLocation[] = [];
  let i = 0;
  while (i < lines.length) {
    const trimmed = lines[i].trimStart();
    if (!trimmed.startsWith('@')) {
      i++;
      continue;
    }
    // A run of decorators (each may span lines while its brackets are open), then the def.
    const indent = indentOf(lines[i]);
    const startLine = i;
    let isKernel = false;
    let j = i;
    while (j < lines.length && lines[j].trimStart().startsWith('@') && indentOf(lines[j]) === indent) {
      if (KERNEL_DECORATOR.test(lines[j].trimStart())) isKernel = true;
      let depth = bracketDelta(lines[j]);
      j++;
      while (depth > 0 && j < lines.length) depth += bracketDelta(lines[j++]);
      while (j < lines.length && isBlankOrComment(lines[j])) j++;
    }
    const m = j < lines.length ? DEF.exec(lines[j].trimStart()) : null;
    if (!m || indentOf(lines[j]) !== indent) {
      i = Math.max(j, i + 1);
      continue;
    }
    const defLine = j;
    // The signature may span lines; the body starts after it.
    let depth = bracketDelta(lines[j]);
    j++;
    while (depth > 0 && j < lines.length) depth += bracketDelta(lines[j++]);
    let endLine = j - 1;
    for (; j < lines.length; j++) {
      if (isBlankOrComment(lines[j])) continue;
      if (indentOf(lines[j]) <= indent) break;
      endLine = j;
    }
    if (isKernel) kernels.push({ name: m[1], startLine, defLine, endLine });
    i = j;
  }
  return kernels;
}

/** The kernel whose decorators, signature or body contain `line`, if any. */
export function kernelAtLine(kernels: KernelLocation[], line: number): KernelLocation | undefined {
  return kernels.find(k => line >= k.startLine && line <= k.endLine);
}
