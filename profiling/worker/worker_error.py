"""Why a worker job has no result: the error every reply and report carries (messages.py's
`Reply.error`, a profile's launch, an ncu run). Standard library only: this file travels with the
worker folder."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

try:  # imported as tritonlens.profiling.worker.worker_error
    from .json_message import NONE, OPT_STR, Message, json_field
except ImportError:  # a plain file in the worker folder
    from json_message import NONE, OPT_STR, Message, json_field

ERROR_TYPES = {
    # raised in the worker
    "exception": "the job raised", "oom": "out of memory", "bad_job": "not a job this worker runs",
    "harness": "the file or its harness has no way to run its kernels (the message says what to do)",
    "cuda": "the CUDA context is unusable: the reply is fatal, the worker exits",
    # decided by the supervisor or the backend; the next job gets a fresh worker
    "timeout": "the job ran past its limit", "crash": "the worker died (message: exit status or signal)",
    "cancelled": "the caller cancelled", "spawn": "no worker could start",
    "protocol": "the worker wrote something that is not a reply", "backend": "the remote side failed",
}


@dataclass
class WorkerError(Message):
    """Why a job has no result: `type` says what the client can do about it."""

    drop_none: ClassVar[bool] = True
    type: str = json_field(str)  # one of ERROR_TYPES
    message: str = json_field(str, "")
    traceback: str | None = json_field(OPT_STR, None)
    stderr: str | None = json_field(OPT_STR, None)  # the worker's stderr while the job ran (tail)
    exit_code: int | None = json_field((int, NONE), None)

    def __str__(self) -> str:
        # A person reads this (a toast, a lens): a job's own error is its message; the other types
        # are the supervisor's words for what happened and keep their name in front.
        if self.type in ("exception", "harness") and self.message:
            return self.message
        return f"{self.type}: {self.message}"
