"""`tritonlens serve`: the language server on stdio (or TCP for debugging)."""

from __future__ import annotations

import argparse
import logging
import sys


def _host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host, int(port)


def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="run the language server (stdio by default)",
                              description="Run the tritonlens language server.")
    p.add_argument("--tcp", metavar="HOST:PORT", type=_host_port, help="listen on TCP instead of stdio (debugging)")
    p.add_argument("--log-file", metavar="FILE", help="also write the server's log to FILE")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="level of the log file and of window/logMessage (default INFO)")
    p.set_defaults(func=serve)


def serve(args) -> int:
    from .app import create_server
    from .logs import setup_logging

    # The event loop shares the GIL with the analysis thread. At Python's default 5 ms switch
    # interval, every blocking read or write the loop makes while an analysis runs costs it up to
    # 5 ms to get the GIL back, and a request waits behind many of them; at 0.5 ms it is answered
    # in milliseconds (bench/lsp_loop_free.py). A thread alone never switches, so analysis
    # throughput is unchanged when the loop is idle.
    sys.setswitchinterval(0.0005)
    server = create_server()
    try:
        setup_logging(server, args.log_file, args.log_level)
    except OSError as exc:
        print(f"tritonlens serve: cannot open log file: {exc}", file=sys.stderr)
        return 2
    logging.getLogger("tritonlens.server").info("starting on %s", "tcp %s:%d" % args.tcp if args.tcp else "stdio")
    if args.tcp:
        server.start_tcp(*args.tcp)
    else:
        server.start_io()
    return 0
