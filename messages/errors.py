"""Typed errors for invalid LCM messages.

Every error names where it happened (channel and LCM type), the field, and the
numbers involved; `counter` is its key in the decoders' and encoders'
`counters` dicts. Decoders used in the control loop never raise these: they
return False / None and keep the error as `last_error` (see messages.codec and
messages.validation).
"""

from dynamics_cy.errors import HilstackError
from messages.registry import type_for_fingerprint


class MessageError(HilstackError, ValueError):
    """Base class: a message that must not be used.

    Attributes: channel, type_name, field (LCM field name, or "" when the
    error concerns the whole buffer), expected, actual, index (element index
    within an array field, or None).
    """

    counter = ""

    def __init__(self, *, channel="", type_name="", field="", expected=None, actual=None,
                 index=None):
        self.channel = channel
        self.type_name = type_name
        self.field = field
        self.expected = expected
        self.actual = actual
        self.index = index
        where = f"{channel or '<no channel>'} ({type_name})"
        super().__init__(f"{where}: {self._describe()}")

    def _element(self):
        return self.field if self.index is None else f"{self.field}[{self.index}]"

    text = ""
    """The description's template: str.format of the attributes and `element` (field[index])."""

    def _describe(self):
        if self.text:
            return self.text.format(**vars(self), element=self._element())
        raise NotImplementedError


class FingerprintError(MessageError):
    """The buffer does not start with the type's fingerprint."""

    counter = "fingerprint"

    def _describe(self):
        other = type_for_fingerprint(self.actual)
        what = other.__name__ if other else "a type unknown to messages"
        return (f"fingerprint {self.actual:#018x} is not {self.type_name}'s "
                f"{self.expected:#018x}; the buffer holds {what}")


class SizeError(MessageError):
    """The buffer's length disagrees with what its fields declare."""


class TruncatedError(SizeError):
    """The buffer ends before its last field."""

    counter = "truncated"

    def _describe(self):
        at = f" while reading {self._element()}" if self.field else ""
        return f"buffer of {self.actual} bytes is truncated{at}: needs at least {self.expected}"


class OversizedError(SizeError):
    """The buffer has bytes after its last field."""

    counter = "oversized"

    def _describe(self):
        return (f"buffer of {self.actual} bytes is oversized: the message ends at byte {self.expected}, "
                f"leaving {self.actual - self.expected} extra")


class LengthMismatchError(MessageError):
    """A num_* field disagrees with the lengths of the arrays or other counts."""

    counter = "length_mismatch"
    text = "{field}={actual} disagrees with the rest of the message, which implies {expected}"


class NonFiniteError(MessageError):
    """A floating-point value is NaN or infinite."""

    counter = "non_finite"
    text = "{element} is {actual!r}; values must be finite (and within float32 range in float fields)"


class JointCountError(MessageError):
    """The message's joint count disagrees with the robot model."""

    counter = "joint_count"
    text = "{field} has {actual} joints but the model has {expected}"


class JointNamesError(MessageError):
    """The message's joint names disagree with the robot model."""

    counter = "joint_names"
    text = "{element} is not the model's {expected!r}"


class MalformedError(MessageError):
    """A field holds a value its type does not allow (e.g. a string without NUL)."""

    counter = "malformed"

    def _describe(self):
        return (f"{self._element() or 'the buffer'} holds an invalid value "
                f"({self.actual!r}; {self.expected})")


ERROR_TYPES = (FingerprintError, TruncatedError, OversizedError, LengthMismatchError,
               NonFiniteError, JointCountError, JointNamesError, MalformedError)
"""Every concrete error type; their `counter` names are the counters' keys."""

_BY_COUNTER = {cls.counter: cls for cls in ERROR_TYPES}


def make_error(counter, **details):
    """The error whose counter name is `counter`, built from keyword details."""
    return _BY_COUNTER[counter](**details)
