"""The worker's comparison, sliced: on many random tensors (NaN and infinities placed at random,
masks, integer, bool and half dtypes, strided views) it gives what one whole-tensor pass gives,
with the slice forced down to a few elements so every tensor spans many slices. The worker's
modules run in a child Python, as in the worker."""

from __future__ import annotations

import json
import subprocess
import sys

from tritonlens.profiling.client import WORKER_DIR

PROBE = r"""
import json, math
import torch
from verify_inputs import agreeing, compare, tolerance


def whole(ref, out, uses_dot, mask=None):
    # the comparison as one pass over the whole (masked) tensors, on the host
    tol, elem_tol = tolerance(ref.dtype, uses_dot)
    r, o = ref.cpu(), out.cpu()
    if mask is not None and bool(mask.all()):
        mask = None
    if mask is not None:
        r, o = r[mask], o[mask]
    if not r.dtype.is_floating_point:
        bad = int((r != o).sum())
        return {"ok": bad == 0, "reason": None if bad == 0 else f"{bad} of {r.numel()} elements differ",
                "rel_err": 0.0 if bad == 0 else bad / max(1, r.numel()), "max_err": float(bad), "tol": 0.0}
    r, o = r.double(), o.double()
    fr = torch.isfinite(r)
    nan = int((torch.isnan(o) & fr).sum())
    if nan:
        return {"ok": False, "reason": f"{nan} of {o.numel()} elements are NaN (unwritten or invalid) where "
                "the original's are finite", "rel_err": math.inf, "max_err": math.inf, "tol": tol, "nan": nan}
    if r.numel() == 0:
        return {"ok": True, "rel_err": 0.0, "max_err": 0.0, "tol": tol}
    same = torch.equal(torch.isnan(r), torch.isnan(o)) and torch.equal(r[torch.isinf(r)], o[torch.isinf(r)])
    if not torch.equal(fr, torch.isfinite(o)) or not same:
        return {"ok": False, "reason": "NaN or infinities differ from the original's", "rel_err": math.inf,
                "max_err": math.inf, "tol": tol}
    diff = o[fr] - r[fr]
    norm = float(r[fr].norm())
    rms = norm / math.sqrt(max(1, int(fr.sum())))
    rel = float(diff.norm()) / norm if norm > 0 else float(diff.norm())
    max_err = float(diff.abs().max()) if diff.numel() else 0.0
    max_rel = max_err / rms if rms > 0 else max_err
    ok = rel <= tol and max_rel <= elem_tol
    reason = None
    if not ok:
        reason = (f"relative error {rel:.3g} (tolerance {tol:g})" if rel > tol else
                  f"an element is off by {max_rel:.3g}× the output's RMS (tolerance {elem_tol:g})")
        reason += f", worst at flat index {int(diff.abs().argmax())}" + (
            " of the compared elements" if mask is not None else "")
    return {"ok": ok, "reason": reason, "rel_err": rel, "max_err": max_err, "tol": tol}


def close(a, b):
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, float) and isinstance(y, float) and math.isfinite(x):
            if abs(x - y) > 1e-9 * max(abs(x), abs(y), 1e-300):
                return False
        elif x != y:
            return False
    return True


gen = torch.Generator().manual_seed(20261125)
dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int8, torch.bool]
outcomes, failures, flat_hits = {}, [], 0
for trial in range(600):
    dtype = dtypes[trial % len(dtypes)]
    shape = [int(torch.randint(1, 9, (1,), generator=gen)) for _ in range(int(torch.randint(0, 4, (1,), generator=gen)))]
    base = torch.randn([*shape, 3] if trial % 5 == 0 else shape, generator=gen) * 3
    ref = base[..., 1] if trial % 5 == 0 else base  # every fifth: a strided view
    if dtype.is_floating_point:
        ref = ref.to(dtype)
        kind = trial % 6
        noise = torch.randn(ref.shape, generator=gen).to(dtype)
        scale = [0.0, 1e-7, 1e-4, 1e-2, 1.0, 1e-5][kind]
        out = (ref.double() + noise.double() * scale * float(ref.double().abs().max() if ref.numel() else 1)).to(dtype)
        if trial % 4 == 1 and ref.numel():  # NaN and infinities in the original, copied or not
            spots = torch.rand(ref.shape, generator=gen)
            ref = torch.where(spots < 0.1, float("nan"), torch.where(spots > 0.92, float("-inf"), ref))
            out = torch.where(torch.rand(ref.shape, generator=gen) < 0.8, torch.where(torch.isfinite(ref), out, ref), out)
        if trial % 7 == 3 and ref.numel():  # a stray NaN in the candidate
            out = out.clone().reshape(-1)
            out[int(torch.randint(0, out.numel(), (1,), generator=gen))] = float("nan")
            out = out.reshape(ref.shape)
    elif dtype == torch.bool:
        ref = ref > 0
        out = ref ^ (torch.rand(ref.shape, generator=gen) < (0.05 if trial % 2 else 0.0))
    else:
        ref = (ref * 10).to(dtype)
        out = torch.where(torch.rand(ref.shape, generator=gen) < (0.1 if trial % 3 else 0.0), ref + 1, ref).to(dtype)
    mask = None
    if trial % 3 == 2:
        mask = torch.rand(ref.shape, generator=gen) < (0.5 if trial % 2 else 1.1)
    uses_dot = trial % 2 == 0
    want = whole(ref, out, uses_dot, mask)
    for chunk in (1, 3, 7, 1 << 24):
        got = compare(ref, out, uses_dot, mask=mask, chunk=chunk)
        if not close(got, want):
            failures.append([trial, str(dtype), shape, chunk, repr(got), repr(want)])
    reason = want.get("reason") or "ok"
    key = "worst" if "worst" in reason else reason.split(" ")[0]
    outcomes[key] = outcomes.get(key, 0) + 1
    if dtype.is_floating_point and ref.numel():  # the two runs' agreement, elementwise
        for moves in (True, False):
            a = agreeing(ref, out, uses_dot, moves)
            x, y = ref.double(), out.double()
            fin = torch.isfinite(x)
            rms = float(x[fin].norm()) / math.sqrt(max(1, int(fin.sum())))
            near = (x - y).abs() <= (1.0 if moves else 0.01) * tolerance(ref.dtype, uses_dot)[1] * max(rms, 1e-300)
            special = (torch.isnan(x) & torch.isnan(y)) | (torch.isinf(x) & (x == y))
            want_agree = torch.where(fin & torch.isfinite(y), near, special)
            if not torch.equal(agreeing(ref, out, uses_dot, moves, chunk=5), want_agree) or not torch.equal(a, want_agree):
                failures.append([trial, "agreeing", str(dtype), moves])
print(json.dumps({"failures": failures[:5], "n_failures": len(failures), "outcomes": outcomes}))
"""


def test_sliced_compare_equals_one_whole_pass_on_random_tensors():
    proc = subprocess.run([sys.executable, "-c", PROBE], check=False, capture_output=True, text=True,
                          cwd=WORKER_DIR, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["n_failures"] == 0, result["failures"]
    # the trials reach every verdict the comparison gives, so equality covers each path
    outcomes = result["outcomes"]  # each verdict the comparison gives is reached, so equality covers its path
    assert outcomes.get("ok", 0) > 50 and outcomes.get("worst", 0) > 20 and outcomes.get("NaN", 0) > 5, outcomes
    assert sum(n for k, n in outcomes.items() if k.isdigit()) > 50, outcomes  # "N of M elements ..."
