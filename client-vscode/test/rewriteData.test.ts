import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { applyTextEdits, evidenceToMarkdown, readRewriteData } from '../src/rewriteData';

// The optimizer's candidate JSON (rewrite/api.py), as a rewrite quick fix's data carries it.
const CANDIDATE = {
  proposer: 'rules', title: 'raise the block to 1024 elements (TL015)', kernel: 'add_kernel',
  description: 'the deterministic fix of TL015', accepted: true, reason: 'correct on 3 seeds × 4 shapes; speed not measured',
  mode: 'interpreter', speedup: null, max_rel_error: 0.0, checks: 12, seeds: 3, shapes: 4, orig_ms: null, cand_ms: null,
  quick_fix_title: 'tritonlens: raise the block to 1024 elements (TL015)', diff: '--- a\n+++ b\n',
  evidence: {
    checks: [{ seed: 0, case: 0, label: 'case 0', shapes: '4096, 4096', ok: true, reason: null, rel_err: 0.0, max_err: 0.0, tol: 1e-05 },
             { seed: 0, case: 'ragged', label: 'ragged', shapes: '2497, 2497', ok: false, reason: 'mismatch', rel_err: 0.5, max_err: 1, tol: 1e-05 }],
    ragged_sizes: [2497],
  },
  source: 'NEW FILE TEXT',
};

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

test('the optimizer candidate JSON: its source is the preview, its verdict and checks the evidence', () => {
  for (const data of [{ action: 'rewrite', candidate: CANDIDATE }, CANDIDATE]) {
    const p = readRewriteData(data)!;
    assert.equal(p.candidateText, 'NEW FILE TEXT');
    assert.equal(p.kernel, 'add_kernel');
    const md = p.evidenceMarkdown!;
    assert.match(md, /^### raise the block to 1024 elements \(TL015\)/);
    assert.match(md, /\*\*Verdict:\*\* accepted — correct on 3 seeds × 4 shapes; speed not measured \(interpreter mode\)/);
    assert.match(md, /\| speedup \| not measured \|/);
    assert.match(md, /\| checks \| 12 \(3 seeds × 4 shapes\) \|/);
    assert.match(md, /\| 0 \| case 0 \| 4096, 4096 \| ✓ \| 0 \| 0.0000100 \|/);
    assert.match(md, /\| ✗ mismatch \| 0.500 \|/);
    assert.match(md, /- \*\*ragged_sizes\*\*: `\[2497\]`/);
  }
  const timed = readRewriteData({ ...CANDIDATE, speedup: 1.4234, orig_ms: 0.41, cand_ms: 0.288 })!;
  assert.match(timed.evidenceMarkdown!, /\| speedup \| ×1.42 \|/);
  assert.match(timed.evidenceMarkdown!, /\| time, original → candidate \| 0.410 ms → 0.288 ms \|/);
});

test("a plain quick fix's data is not a rewrite", () => {
  assert.equal(readRewriteData({ uri: 'file:///k.py', version: 3, action: 'fix', code: 'TL015', range: {}, message: 'm' }), undefined);
});

test('an action marked as a rewrite is previewable even before its edit is resolved', () => {
  assert.deepEqual(readRewriteData({ action: 'rewrite', uri: 'file:///k.py', version: 2, kernel: 'k' }), { candidateText: undefined, evidenceMarkdown: undefined, kernel: 'k' });
});
