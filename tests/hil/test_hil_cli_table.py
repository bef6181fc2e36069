"""The CLI's help comes from one place (hil/cli.py's COMMANDS, hil/cli_table.py): each command's
one-line help in `hil --help`, its description and options in `hil CMD --help`, its handler run."""
import pytest

from hil.cli import COMMANDS, parser
from hil.cli_table import help_of


def help_text(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args(argv)
    assert exit_.value.code == 0
    return " ".join(capsys.readouterr().out.split())      # wrapped lines joined


def test_every_command_has_a_docstring_help_a_description_and_its_handler(capsys):
    listing = help_text(["--help"], capsys)
    names = [c.name for c in COMMANDS]
    assert len(set(names)) == len(names) >= 13
    for c in COMMANDS:
        short, description = help_of(c.handler)
        assert short and short.endswith(".") and len(description) > len(short), c.name
        assert f"hil {c.name} {c.usage}".strip() + " " + short in listing, c.name
        page = help_text([c.name, "--help"], capsys)
        assert description in page, c.name
        for flags, _ in c.args:
            assert flags[-1].lstrip("-").replace("-", "_") in page.replace("-", "_"), (c.name, flags)


def test_the_parsed_command_carries_its_handler():
    args = parser().parse_args(["report", "some.lcmlog", "--json"])
    assert args.handler is next(c.handler for c in COMMANDS if c.name == "report") and args.json
