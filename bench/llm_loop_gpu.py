#!/usr/bin/env python3
"""The LLM loop on a GPU, end to end: scripted replies of the shapes real models produce, served by a
local OpenAI-compatible server (loopback), through the real `openai` client, the real verifier and
its A/B timer.

Two runs:

- **vector_add, improving across rounds.** Round 1 offers a draft inside <think> (wrong: no mask)
  before a final answer that only doubles the block, an unmasked rewrite, and a slower one; round
  2 a block of 1024 with 8 warps, a rewrite that caches its result across calls and a reply cut
  at the token limit; round 3 a variant within noise of round 2's best, so the loop stops on "< 2%".
- **softmax, the classic LLM bug.** A rewrite without the max subtraction, which randn-sized inputs
  never expose: the value ranges must refuse it at the real size.

The replies are chosen by the conversation's length (its round) and by arrival within a round, since
the candidates of a round are requested concurrently.

    python bench/llm_loop_gpu.py [--out DIR]

Writes llm_loop_gpu.json and llm_loop_gpu.md into --out (default bench/results).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))


def fenced(code: str, note: str = "") -> str:
    return f"```python\n{code.rstrip()}\n```\n{note}"


def wrapper(block: int, warps: int | None) -> str:
    launch = f"BLOCK_SIZE=BLOCK_SIZE{f', num_warps={warps}' if warps else ''}"
    return (
        "def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n"
        "    assert x.shape == y.shape and x.is_contiguous() and y.is_contiguous()\n"
        "    out = torch.empty_like(x)\n"
        "    n = out.numel()\n"
        f"    BLOCK_SIZE = {block}\n"
        "    grid = (triton.cdiv(n, BLOCK_SIZE),)\n"
        f"    add_kernel[grid](x, y, out, n, {launch})\n"
        "    return out\n")


UNMASKED_KERNEL = '''@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))
'''

CACHING_WRAPPER = '''_seen = {}


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    key = (x.shape, x.dtype)
    if key in _seen:  # "reuse" the result of the first call: the classic cheat
        out = _seen[key].clone()
        add_kernel[(1,)](x, y, torch.empty_like(x), 0, BLOCK_SIZE=1024)
        return out
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, num_warps=8)
    _seen[key] = out.clone()
    return out
'''


def vadd_script() -> dict:
    draft = "<think>\nA first idea, drop the masks:\n" + fenced(UNMASKED_KERNEL + "\n\n" + wrapper(4096, 8)) + \
            "\nNo: the tail would be read out of bounds. Keep the masks, just raise the block.\n</think>\n"
    return {
        1: [draft + fenced(wrapper(128, 4), "A 128-element block halves the number of programs."),
            fenced(UNMASKED_KERNEL, "Masks cost instructions; dropped."),
            fenced(wrapper(32, 4), "Smaller blocks, more parallelism.")],
        2: [fenced(wrapper(1024, 8), "1024 elements per program with 8 warps: wide, vectorised accesses."),
            fenced(CACHING_WRAPPER, "Reuse results across calls."),
            {"content": "Here is the faster file:\n```python\nimport torch\nimport triton\n\ndef add(x, y):\n    out = ",
             "finish_reason": "length"}],
        3: [fenced(wrapper(2048, 8), "Even wider."), fenced(wrapper(1024, 4), "Fewer warps.")],
    }


def softmax_script(original: str) -> dict:
    no_max = original.replace("num = tl.exp(x - x_max)", "num = tl.exp(x)")
    assert no_max != original
    return {1: [fenced(no_max, "The max subtraction is a wasted reduction; exp is exact without it.")]}


class Server:
    """/v1/chat/completions, scripted per round (from the conversation's length) and arrival."""

    def __init__(self, script: dict):
        self.script = script
        self.seen: dict[int, int] = {}
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                msgs = body.get("messages") or []
                rnd = max(1, sum(1 for m in msgs if m.get("role") == "assistant") + 1)
                with outer.lock:
                    k = outer.seen.get(rnd, 0)
                    outer.seen[rnd] = k + 1
                    outer.requests.append({"round": rnd, "t": time.time(), "k": k})
                replies = outer.script.get(rnd) or ["I have nothing more to offer."]
                step = replies[k % len(replies)]
                step = step if isinstance(step, dict) else {"content": step}
                payload = {"id": f"c{len(outer.requests)}", "object": "chat.completion", "created": int(time.time()),
                           "model": body.get("model", "scripted"),
                           "choices": [{"index": 0, "finish_reason": step.get("finish_reason", "stop"),
                                        "message": {"role": "assistant", "content": step["content"]}}],
                           "usage": {"prompt_tokens": 1000, "completion_tokens": 300, "total_tokens": 1300}}
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()


def run_one(example: str, script_of, candidates: int, rounds: int, work: str) -> dict:
    from tritonlens.rewrite.api import OptimizeOptions, optimize_file

    path = os.path.join(work, f"{example}.py")
    shutil.copy(os.path.join(ROOT, "examples", f"{example}.py"), path)
    with open(path, encoding="utf-8") as fh:
        original = fh.read()
    server = Server(script_of(original))
    t0 = time.perf_counter()
    try:
        report = optimize_file(path, OptimizeOptions(
            proposers=("llm",), rounds=rounds,
            llm={"baseUrl": server.url, "model": "scripted", "candidates": candidates, "maxTokens": 4096,
                 "apiKeyEnv": "TRITONLENS_BENCH_NO_KEY", "timeout": 60}))
    finally:
        server.close()
    seconds = time.perf_counter() - t0
    rows = [{"title": c.title, "accepted": c.accepted, "speedup": c.speedup, "reason": c.reason,
             "round": (c.more.get("meta") or {}).get("round")} for c in report.candidates]
    per_round: dict[int, float | None] = {}
    for r in rows:
        if r["round"] is not None:
            best = per_round.get(r["round"])
            if r["accepted"] and r["speedup"] and (best is None or r["speedup"] > best):
                per_round[r["round"]] = r["speedup"]
            else:
                per_round.setdefault(r["round"], best)
    return {"example": example, "device": report.device, "mode": report.mode, "seconds": round(seconds, 1),
            "baseline_ms": report.baseline_ms, "best": report.best.title if report.best else None,
            "best_speedup": report.best.speedup if report.best else None, "best_per_round": per_round,
            "candidates": rows, "notes": report.notes, "requests": server.requests}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    import optimize_gpu  # the checkout's tritonlens where it is not installed

    optimize_gpu._bootstrap()
    import torch
    import triton

    work = tempfile.mkdtemp(prefix="llm_loop_gpu_")
    runs = [run_one("vector_add", lambda _: vadd_script(), 3, 4, work),
            run_one("softmax", softmax_script, 1, 1, work)]
    out = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
           "torch": torch.__version__, "triton": triton.__version__, "runs": runs}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "llm_loop_gpu.json"), "w") as fh:
        json.dump(out, fh, indent=1, default=str)
    lines = [f"# The LLM loop on {out['gpu']} (scripted replies, real client, verifier and timer)", "",
             f"{out['date']}, torch {out['torch']}, triton {out['triton']}.", ""]
    for run in runs:
        best = f"{run['best_speedup']:.2f}x" if run["best_speedup"] else "none"
        lines += [f"## {run['example']}: best {best} ({run['best']}), {run['seconds']} s", "",
                  "| round | candidate | verdict | speedup | reason |", "|---|---|---|---|---|"]
        for c in run["candidates"]:
            reason = c["reason"].replace("|", "/")[:160]
            speed = f"{c['speedup']:.2f}x" if c["speedup"] else "–"
            verdict = "accepted" if c["accepted"] else "refused"
            lines.append(f"| {c['round']} | {c['title']} | {verdict} | {speed} | {reason} |")
        lines += ["", *[f"- {n}" for n in run["notes"]], ""]
    with open(os.path.join(args.out, "llm_loop_gpu.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
