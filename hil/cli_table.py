"""The `hil` subcommands as one table: each command's help comes from its handler's docstring (first
paragraph: the one-line help shown by `hil --help`; the rest: the description of `hil CMD --help`),
its options from a list of argument specs, and the parser is built from the table in one place
(argparse: the standard library's, no dependency for a dozen subcommands).
"""
from __future__ import annotations

import argparse
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Callable

Arg = tuple[tuple[str, ...], dict]


def arg(*flags: str, **kwargs) -> Arg:
    """One add_argument call, as data."""
    return flags, kwargs


@dataclass(frozen=True)
class Command:
    """A subcommand: `hil NAME USAGE`, run by `handler(args) -> exit status`, with `args`."""
    name: str
    handler: Callable
    usage: str = ""
    args: tuple[Arg, ...] = ()
    epilog: str | None = None
    extra: dict = field(default_factory=dict)       # more add_parser keywords

    @property
    def summary(self) -> str:
        return help_of(self.handler)[0]


def help_of(handler: Callable) -> tuple[str, str]:
    """(one-line help, description) from the handler's docstring: its first paragraph, and the whole."""
    doc = inspect.getdoc(handler) or ""
    first = " ".join(doc.split("\n\n", 1)[0].split())
    return first, " ".join(doc.split())


def add_commands(sub, commands: list[Command]) -> None:
    """One subparser per command, its description from the handler, its arguments from the table; the
    handler is stored as args.handler. (The one-line helps are listed by command_list, in the epilog.)"""
    for c in commands:
        description = help_of(c.handler)[1]
        p = sub.add_parser(c.name, description=textwrap.fill(description, 100, break_on_hyphens=False),
                           epilog=c.epilog, formatter_class=argparse.RawDescriptionHelpFormatter, **c.extra)
        for flags, kwargs in c.args:
            p.add_argument(*flags, **kwargs)
        p.set_defaults(handler=c.handler)


def command_list(commands: list[Command], width: int = 104) -> str:
    """The `commands:` section of `hil --help`: each usage line and its one-line help."""
    lines = ["commands:"]
    for c in commands:
        usage = f"  hil {c.name} {c.usage}".rstrip()
        body = textwrap.wrap(c.summary, width - 24, break_on_hyphens=False)
        if len(usage) < 22:
            lines.append(f"{usage:<24}{body[0]}")
            body = body[1:]
        else:
            lines.append(usage)
        lines.extend(" " * 24 + line for line in body)
    return "\n".join(lines)
