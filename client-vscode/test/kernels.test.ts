import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { findKernels, kernelAtLine } from '../src/kernels';

const SRC = `import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # a comment at column 0 below does not end the body
# stray
    tl.store(out_ptr, pid)


def add(x, y):
    add_kernel[(1,)](x, y, x, 1, BLOCK=64)


@triton.autotune(
    configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})],
    key=["n"],
)
@triton.jit
def softmax_kernel(
    x_ptr,
    n,
    BLOCK: tl.constexpr,
):
    x = tl.load(x_ptr)

    return


class C:
    @staticmethod
    def helper():
        pass


@functools.cache
def not_a_kernel():
    pass
`;

test('finds jit and autotuned kernels with their extents', () => {
  const ks = findKernels(SRC);
  assert.deepEqual(ks.map(k => k.name), ['add_kernel', 'softmax_kernel']);
  const [add, softmax] = ks;
  assert.deepEqual([add.startLine, add.defLine, add.endLine], [4, 5, 9]);
  assert.deepEqual([softmax.startLine, softmax.defLine, softmax.endLine], [16, 21, 28]);
});

test('the kernel at the cursor, or none', () => {
  const ks = findKernels(SRC);
  assert.equal(kernelAtLine(ks, 4)?.name, 'add_kernel');   // on the decorator
  assert.equal(kernelAtLine(ks, 8)?.name, 'add_kernel');   // the stray comment line inside
  assert.equal(kernelAtLine(ks, 13), undefined);           // in the wrapper
  assert.equal(kernelAtLine(ks, 18)?.name, 'softmax_kernel');
  assert.equal(kernelAtLine(ks, 24)?.name, 'softmax_kernel'); // multi-line signature
  assert.equal(kernelAtLine(ks, 28)?.name, 'softmax_kernel');
  assert.equal(kernelAtLine(ks, 29), undefined);            // blank line after the body
});

test('brackets inside strings do not confuse the scanner', () => {
  const ks = findKernels('@triton.jit(debug=")(")\ndef k(a):\n    s = "(("\n    return a\n\n@triton.jit\ndef k2():\n    pass\n');
  assert.deepEqual(ks.map(k => [k.name, k.defLine, k.endLine]), [['k', 1, 3], ['k2', 6, 7]]);
});

test('no kernels in plain Python; CRLF files work', () => {
  assert.deepEqual(findKernels('def f():\n    pass\n'), []);
  assert.deepEqual(findKernels('@triton.jit\r\ndef k():\r\n    pass\r\n').map(k => k.name), ['k']);
});
