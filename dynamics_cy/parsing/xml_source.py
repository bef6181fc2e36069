"""XML reading with line numbers, and value parsing whose errors name the file, line and element."""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from xml.parsers import expat

import numpy as np

from ..errors import ParseError


class XmlSource:
    """A parsed XML document that remembers each element's line, for error messages."""

    def __init__(self, text: str, source: str | None):
        self.source = source
        self._lines: dict[ET.Element, int] = {}
        builder = ET.TreeBuilder()
        parser = expat.ParserCreate()
        lines = self._lines

        def start(tag, attrs):
            lines[builder.start(tag, attrs)] = parser.CurrentLineNumber

        parser.StartElementHandler = start
        parser.EndElementHandler = builder.end
        parser.CharacterDataHandler = builder.data
        try:
            parser.Parse(text, True)
        except expat.ExpatError as e:
            raise ParseError(f"malformed XML: {expat.ErrorString(e.code)}", source, e.lineno) from None
        self.root = builder.close()

    def error(self, element: ET.Element | None, message: str) -> ParseError:
        if element is None:
            return ParseError(message, self.source)
        name = element.get("name")
        what = f"<{element.tag}{f' name={name!r}' if name else ''}>"
        return ParseError(message, self.source, self._lines.get(element), what)

    def line(self, element: ET.Element) -> int | None:
        return self._lines.get(element)

    def floats(self, element: ET.Element, text: str | None, n: int | None, what: str) -> np.ndarray:
        """Whitespace-separated finite numbers, exactly n of them when n is given."""
        if text is None:
            raise self.error(element, f"missing {what}")
        try:
            values = np.array([float(x) for x in text.split()], dtype=float)
        except ValueError:
            raise self.error(element, f"{what} must be numbers, got {text!r}") from None
        if n is not None and values.size != n:
            raise self.error(element, f"{what} must have {n} numbers, got {values.size} ({text!r})")
        if not np.all(np.isfinite(values)):
            raise self.error(element, f"{what} must be finite, got {text!r}")
        return values

    def attr_float(self, element: ET.Element, key: str, default: float | None = None,
                   allow_inf: bool = False) -> float:
        text = element.get(key)
        if text is None:
            if default is None:
                raise self.error(element, f"missing attribute '{key}'")
            return default
        try:
            value = float(text)
        except ValueError:
            raise self.error(element, f"attribute '{key}' must be a number, got {text!r}") from None
        if math.isnan(value) or (math.isinf(value) and not allow_inf):
            raise self.error(element, f"attribute '{key}' must be finite, got {text!r}")
        return value

    def text_float(self, element: ET.Element, tag: str, default: float | None = None) -> float:
        child = element.find(tag)
        if child is None or child.text is None or not child.text.strip():
            if default is None:
                raise self.error(element, f"missing <{tag}>")
            return default
        return float(self.floats(child, child.text, 1, f"<{tag}>")[0])
