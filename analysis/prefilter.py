"""Answers that need no parsing, for callers that must stay cheap to start (the CLI on files that
hold no kernel, the server on every document it is sent): this module imports nothing."""


def may_hold_kernels(text: str) -> bool:
    """Whether `text` can define a Triton kernel at all: decorating one needs a name imported from
    triton, so a file that never says "triton" has none, and its analysis finds nothing."""
    return "triton" in text
