"""The command line: ``serve``, ``check`` and ``--version`` (REQ-OPS-001).

Exit codes: 0 success, 1 configuration error, 2 usage error. Nothing is written to stdout by
``serve`` except MCP messages (REQ-MCP-002); ``check`` reports on stdout, errors go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from rypsok import __version__

EXIT_OK = 0
EXIT_CONFIG = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"rypsok: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rypsok", description="Meta-search and page fetch for AI agents, over MCP."
    )
    parser.add_argument("--version", action="version", version=f"rypsok {__version__}")
    config_help = "TOML configuration (or RYPSOK_CONFIG)"
    # --config is accepted before or after the command; after it wins.
    parser.add_argument("--config", metavar="FILE", help=config_help)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    serve = commands.add_parser("serve", help="serve MCP over stdio (default) or Streamable HTTP")
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--config", metavar="FILE", help=config_help, default=argparse.SUPPRESS)
    check = commands.add_parser("check", help="validate the configuration and show what would run")
    check.add_argument("--config", metavar="FILE", help=config_help, default=argparse.SUPPRESS)
    check.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="also run the start-up checks of this transport (http: listener and callers' tokens)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    # Imported here so that --version and usage errors stay fast and cannot fail on imports.
    from rypsok.app import ConfigurationError, check_report, load, serve

    try:
        settings, path = load(args.config)
        if args.command == "check":
            report = check_report(settings, path)
            if args.transport == "http":
                from rypsok.mcp.http import check_http

                check_http(settings.http)
                callers = len(settings.http.callers)
                report += (
                    f"http: {settings.http.bind} port {settings.http.port}, "
                    f"{callers} caller(s) with a token\n"
                )
            sys.stdout.write(report)
            return EXIT_OK
        return serve(settings, path, transport=args.transport)
    except ConfigurationError as exc:
        sys.stderr.write(f"rypsok: configuration error: {exc}\n")
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return EXIT_OK
