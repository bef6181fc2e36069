"""ProcessModelDirectives: the directives added to a plant through a parser, one built for the plant
when none is given. Apart from the parsers (parser.py hands each parser a .dmd.yaml file to
model_directives.py) as Drake's detail_select_parser.h keeps parser selection apart from them, so
the directives never import the Parser."""
from __future__ import annotations

from ..errors import ParseError
from .collision_filter_groups import GroupResolver
from .model_directives import ModelDirectives, ModelInstanceInfo, _process
from .parser import Parser


def ProcessModelDirectives(directives: ModelDirectives, plant=None, parser=None) -> list[ModelInstanceInfo]:
    """Adds what the directives say to the parser's plant (pydrake's two forms: (directives, parser) and
    (directives, plant, parser)); the models added, in order, with the welds that placed them."""
    if parser is None:
        if plant is None:
            raise TypeError("ProcessModelDirectives() needs a parser (or a plant)")
        parser = Parser(plant)
    elif plant is not None and plant is not parser.plant():
        raise ValueError("ProcessModelDirectives(): the plant is not the parser's plant")
    added: list[ModelInstanceInfo] = []
    resolver = GroupResolver()
    try:
        _process(parser, directives, "", added, resolver)
        resolver.resolve(parser._collision_groups)
    except ValueError as e:
        raise ParseError(str(e)) from None
    return added
