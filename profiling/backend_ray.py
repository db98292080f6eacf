"""The Ray backend: each job is one Ray task, so run_many runs them in parallel."""

from __future__ import annotations

import time

from tritonlens.profiling import ray_task
from tritonlens.profiling.backends import (
    REMOTE_GRACE,
    Backend,
    BackendError,
    as_job,
    ship_user_files,
)
from tritonlens.profiling.client import worker_bundle
from tritonlens.profiling.worker.messages import MessageError, Reply


class RayBackend(Backend):
    """Each job is one Ray task (num_gpus=1 when the cluster has GPUs); run_many runs them in parallel."""

    name = "ray"

    def __init__(self, address: str | None = None, python: str | None = None, timeout: float = 120,
                 init_kwargs: dict | None = None):
        try:
            import ray
        except ImportError as exc:
            raise BackendError("the ray backend needs Ray: pip install 'tritonlens[cluster]'") from exc
        self.ray = ray
        self.address = address
        self.python = python
        self.timeout = float(timeout)
        if not ray.is_initialized():
            kwargs = dict(init_kwargs or {})
            kwargs.setdefault("ignore_reinit_error", True)
            kwargs.setdefault("include_dashboard", False)
            kwargs.setdefault("log_to_driver", False)
            try:
                ray.init(address=address, **kwargs)
            except Exception as exc:
                raise BackendError(f"ray: cannot connect to {address or 'a local cluster'}: {exc}") from exc
        self.gpus = float(ray.cluster_resources().get("GPU", 0))
        # by value: the cluster's nodes need not have tritonlens installed
        ray.cloudpickle.register_pickle_by_value(ray_task)
        self._remote = ray.remote(num_gpus=1 if self.gpus >= 1 else 0, max_retries=0)(ray_task.run_job)

    @property
    def parallel(self) -> bool:
        return True

    def _submit(self, job, timeout):
        shipped, files = ship_user_files(job)
        bundle = dict(worker_bundle())
        bundle.update(files)
        return self._remote.remote(bundle, shipped, timeout, self.python, None)

    def run_many(self, jobs, timeout=None, cancel=None):
        limit = self.timeout if timeout is None else float(timeout)
        jobs = [as_job(job) for job in jobs]
        refs = []
        replies: list = [None] * len(jobs)
        for i, job in enumerate(jobs):
            try:
                refs.append((i, self._submit(job, limit)))
            except OSError as exc:
                replies[i] = Reply.failure(job.id, "bad_job", str(exc))
        pending = dict((ref, i) for i, ref in refs)
        deadline = time.monotonic() + limit + REMOTE_GRACE
        while pending:
            if cancel is not None and cancel.is_set():
                for ref, i in pending.items():
                    self.ray.cancel(ref)  # KeyboardInterrupt in the task: its supervisor kills the worker
                    replies[i] = Reply.failure(jobs[i].id, "cancelled", "cancelled; Ray task cancelled")
                break
            if time.monotonic() > deadline:
                for ref, i in pending.items():
                    self.ray.cancel(ref)
                    replies[i] = Reply.failure(jobs[i].id, "timeout", "Ray task did not finish in time")
                break
            done, _ = self.ray.wait(list(pending), num_returns=1, timeout=0.2)
            for ref in done:
                i = pending.pop(ref)
                try:
                    replies[i] = Reply.from_json(self.ray.get(ref))
                except MessageError as exc:
                    replies[i] = Reply.failure(jobs[i].id, "protocol", f"Ray task's reply is unreadable: {exc}")
                except Exception as exc:
                    replies[i] = Reply.failure(jobs[i].id, "crash", f"Ray task failed: {exc}")
                replies[i].id = jobs[i].id or replies[i].id
        return replies

    def run(self, job, timeout=None, cancel=None):
        return self.run_many([job], timeout=timeout, cancel=cancel)[0]
