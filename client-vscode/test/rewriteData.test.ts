import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { applyTextEdits, evidenceToMarkdown, readRewriteData } from '../src/rewriteData';

const r = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

test('edits apply in any order, as the editor would', () => {
  const text = 'a = 1\nb = 2\nc = 3\n';
  assert.equal(
    applyTextEdits(text, [{ range: r(0, 4, 0, 5), newText: '10' }, { range: r(2, 0, 2, 1), newText: 'cc' }, { range: r(1, 0, 2, 0), newText: '' }]),
    'a = 10\ncc = 3\n',
  );
  assert.equal(applyTextEdits(text, [{ range: r(3, 0, 3, 0), newText: 'd = 4\n' }]), text + 'd = 4\n');
  assert.equal(applyTextEdits(text, [{ range: r(0, 0, 0, 99), newText: 'x' }]), 'x\nb = 2\nc = 3\n', 'a character past the end clamps');
  assert.throws(() => applyTextEdits(text, [{ range: r(0, 0, 1, 2), newText: '' }, { range: r(1, 0, 1, 1), newText: '' }]), /overlapping/);
});

test('rewrite data shapes', () => {
  assert.equal(readRewriteData({ rule: 'TL005' }), undefined, 'a plain quick fix is not a rewrite');
  assert.equal(readRewriteData(null), undefined);
  assert.deepEqual(readRewriteData({ candidate: 'new text', evidence: 'proved' }), { candidateText: 'new text', evidenceMarkdown: 'proved', kernel: undefined });
  const nested = readRewriteData({ kernel: 'k', candidate: { source: 'src', evidence: { speedup: 1.5, max_abs_err: 0 } } });
  assert.equal(nested?.candidateText, 'src');
  assert.equal(nested?.kernel, 'k');
  assert.match(nested?.evidenceMarkdown ?? '', /\| speedup \| 1\.500 \|/);
  assert.match(nested?.evidenceMarkdown ?? '', /\| max_abs_err \| 0 \|/);
  assert.deepEqual(readRewriteData({ evidence: { markdown: '**x**' } }), { candidateText: undefined, evidenceMarkdown: '**x**', kernel: undefined });
});

test('evidence rendering', () => {
  assert.equal(evidenceToMarkdown(undefined), undefined);
  assert.match(evidenceToMarkdown([1, 2]) ?? '', /```json/);
});
