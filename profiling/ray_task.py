"""The function a Ray task runs. Pickled by value, so it imports nothing outside the stdlib."""

from __future__ import annotations


def run_job(bundle: dict, job: dict, timeout: float, python: str | None, env: dict | None) -> dict:
    """Runs on a Ray worker. Self-contained (stdlib only): shipped by value, no tritonlens there."""
    import importlib.util
    import os
    import shutil
    import tempfile

    root = tempfile.mkdtemp(prefix="tritonlens-ray-")
    try:
        real = os.path.realpath(root)
        for rel, text in bundle.items():
            dest = os.path.realpath(os.path.join(real, rel))
            if not dest.startswith(real + os.sep):
                raise ValueError(f"refusing bundle path {rel!r}")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "w", encoding="utf-8") as fh:
                fh.write(text)
        spec = importlib.util.spec_from_file_location("tritonlens_remote_supervisor",
                                                      os.path.join(root, "worker", "supervisor.py"))
        sup_mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sup_mod)
        sup = sup_mod.Supervisor(python=python, env=env, timeout=timeout, worker_dir=os.path.join(root, "worker"))
        try:
            reply = sup.run(sup_mod.resolve_paths(job, root)).to_json()  # JSON: the driver has no `messages`
        finally:  # also on ray.cancel (KeyboardInterrupt): never leave a worker behind
            sup.close()
        reply["host"] = os.uname().nodename
        return reply
    finally:
        shutil.rmtree(root, ignore_errors=True)
