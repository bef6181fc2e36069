"""The command-line reference (reference/cli.md), generated from `hil`'s own argparse
parser (`hil.cli.parser()`, built from the COMMANDS table of hil/cli.py): one section per subcommand
with its usage, its description and every option with its help, as `hil COMMAND --help` prints them.
`python docs/gen/cli_reference.py` writes it into docs/ (committed; a test checks it is current).
"""
from __future__ import annotations

import argparse
import html

PAGE = "reference/cli.md"


def _text(text: str) -> str:
    """One line, with the checkout's or the installation's configs folder written as `configs`."""
    from drivers.core.paths import CONFIGS
    return " ".join(text.split()).replace(str(CONFIGS), "configs")


def _cell(text: str) -> str:
    return html.escape(_text(text), quote=False).replace("|", "\\|")


def _usage(p: argparse.ArgumentParser) -> str:
    return " ".join(p.format_usage().split()).removeprefix("usage: ")


def _options(p: argparse.ArgumentParser) -> list[str]:
    """A table of the parser's arguments: the flags (or the positional's name), their value, the help."""
    formatter = p._get_formatter()
    rows = ["| argument | value | help |", "|---|---|---|"]
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            name = ", ".join(f"`{s}`" for s in action.option_strings)
            value = "" if action.nargs == 0 else formatter._format_args(action, action.dest.upper())
        else:
            name, value = f"`{action.metavar or action.dest}`", {"?": "optional", "*": "any number"}.get(
                action.nargs, "")
        help_ = formatter._expand_help(action) if action.help else ""
        if action.choices and not isinstance(action, argparse._SubParsersAction):
            help_ += f" (one of: {', '.join(map(str, action.choices))})"
        rows.append(f"| {name} | {_cell(value) and f'`{value}`'} | {_cell(help_)} |")
    return rows


def render() -> str:
    from hil.cli import parser
    top = parser()
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    out = ["# Command-line reference", "",
           "Generated from `hil`'s own parser (`hil.cli.parser()`), so it is what `hil --help` and "
           "`hil COMMAND --help` print. [hil.md](../hil.md) explains the loop and the commands' exit "
           "statuses; the config files they take are in the [config reference](config.md).", "",
           "## `hil`", "", f"`{_usage(top)}`", "", top.description or "", "", *_options(top), "",
           "Commands:", ""]
    out += [f"- [`hil {name}`](#hil-{name}): {_cell(_text(p.description or '').split('. ')[0].rstrip('.'))}"
            for name, p in sub.choices.items()]
    out.append("")
    for name, p in sub.choices.items():
        out += [f"## `hil {name}` {{#hil-{name}}}", "", "```text", _usage(p), "```", "",
                _text(p.description or ""), "", *_options(p), ""]
        if p.epilog:
            out += [_text(p.epilog), ""]
    return "\n".join(out) + "\n"


def main() -> None:
    """Writes the page into docs/ (committed, so that links work in a checkout and on GitHub;
    tests/test_docs_reference.py fails while it differs from what this renders)."""
    from pathlib import Path
    (Path(__file__).resolve().parents[1] / PAGE).write_text(render())


if __name__ == "__main__":
    main()
