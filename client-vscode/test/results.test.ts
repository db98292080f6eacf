import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { deviceOf, failureOf, noticeOf, readIr, summarize } from '../src/results';

// The shapes tritonlens.server.profile / optimize / showIr answer with (server/worker_jobs.py).
const launch = { kernel: 'add_kernel', grid: [4, 1, 1], time_ms: null, gbps: null, tflops: null, pct_of_peak: null, bound: null };
const interpreterProfile = {
  ok: true,
  report: { mode: 'interpreter', backend: 'local', device: { name: 'cpu (triton interpreter)', cuda: false }, kernels: [{ name: 'add_kernel', launches: [launch], error: null }], error: null },
};

test('profile summaries: interpreter, GPU, kernel error', () => {
  assert.equal(summarize(interpreterProfile), "add_kernel: ran in Triton's interpreter (no GPU: correctness only, no timing)");
  const gpu = { ok: true, report: { mode: 'gpu', kernels: [{ name: 'add_kernel', launches: [{ ...launch, time_ms: 0.04132, gbps: 2541.7, tflops: 0, pct_of_peak: 85.6, bound: 'memory' }] }] } };
  assert.equal(summarize(gpu), 'add_kernel: 0.041 ms · 2542 GB/s · 86% of peak · memory-bound');
  const broken = { ok: true, report: { mode: 'gpu', kernels: [{ name: 'k', error: 'CompilationError: at 3:4\nmore' }], error: null } };
  assert.equal(summarize(broken), 'k: error: CompilationError: at 3:4');
  assert.equal(summarize({ ok: true, report: { mode: 'gpu', kernels: [], error: 'harness failed' } }), 'error: harness failed');
});

test('optimize summary: candidates, verified, best', () => {
  const opt = { ok: true, report: { candidates: [{ accepted: true }, { accepted: false }, { accepted: true }], best: { title: 'autotune 4 configs', speedup: 1.376 } } };
  assert.equal(summarize(opt), '3 candidates, 2 verified; best: autotune 4 configs (×1.38)');
  assert.equal(summarize({ ok: true, report: { candidates: [{ accepted: false }], best: null } }), '1 candidate, 0 verified');
});

test('notices: the server\'s words when it sends them, else built alike', () => {
  const message = 'tritonlens optimize add_kernel: correct, not timed: run on a GPU to prove it faster (2 of 9 rewrites correct)';
  assert.equal(noticeOf('optimize', 'add_kernel', { ok: true, summary: 'ignored here', message, report: {} }), message);
  assert.equal(noticeOf('profile', 'add_kernel', { ok: true, summary: '0.41 ms · 86% of peak' }), 'tritonlens profile add_kernel: 0.41 ms · 86% of peak');
});

test('failures and devices', () => {
  assert.equal(failureOf({ ok: false, error: 'Profiling is off in an untrusted workspace' }), 'Profiling is off in an untrusted workspace');
  assert.equal(failureOf({ ok: false }), 'failed');
  assert.equal(failureOf(interpreterProfile), undefined);
  assert.equal(deviceOf(interpreterProfile), 'cpu (triton interpreter)');
  assert.equal(deviceOf({ ok: true, report: { device: 'NVIDIA H100 80GB HBM3' } }), 'NVIDIA H100 80GB HBM3');
  assert.equal(deviceOf({ ok: false, error: 'x' }), undefined);
  assert.equal(deviceOf(null), undefined);
});

test('showIr answers: marked_lines are 0-based IR lines', () => {
  assert.deepEqual(readIr({ ok: true, text: 'a\nb\nc', marked_lines: [1, 2], language: 'mlir', line_map: [null, 25, 25] }), { text: 'a\nb\nc', lines: [1, 2] });
  assert.deepEqual(readIr('plain'), { text: 'plain', lines: [] });
  assert.deepEqual(readIr({ text: 'x', highlights: [{ start: { line: 2 }, end: { line: 4 } }] }), { text: 'x', lines: [2, 3, 4] });
  assert.equal(readIr({ ok: false, error: 'no IR' }), undefined);
});
