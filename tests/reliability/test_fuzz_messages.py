"""Fuzzing the LCM layer: mutated real encodings of every message type through the validated decoder
and the 1 kHz codec. Property: success or a messages.errors.MessageError, never anything else; and
what the validated decoder accepts re-encodes to the very same bytes (nothing was silently changed)."""
from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from messages import (
    MESSAGE_TYPES,
    lcmt_iiwa_command,
    lcmt_iiwa_status,
    lcmt_panda_command,
    lcmt_panda_status,
    lcmt_robot_state,
)
from messages.codec import CommandDecoder, RobotStateDecoder, StatusDecoder
from messages.errors import MessageError
from messages.testing import random_message
from messages.validation import MessageDecoder, decode_message
from tests.reliability.inputs import fuzz_settings, mutations

ENCODED = {t: [random_message(t, random.Random(seed), counts={"num_joints": 7} if "num_joints" in t.__slots__
                                                         else None).encode() for seed in range(3)]
           for t in MESSAGE_TYPES}


@pytest.mark.parametrize("message_type", MESSAGE_TYPES, ids=lambda t: t.__name__)
@fuzz_settings(60)
@given(seed=st.integers(0, 2), mutate=mutations())
def test_validated_decoder_accepts_only_what_reencodes_identically(message_type, seed, mutate):
    data = mutate(ENCODED[message_type][seed])
    try:
        message = decode_message(message_type, data, "FUZZ")
    except MessageError:
        assert MessageDecoder(message_type, "FUZZ").decode(data) is None
        return
    assert message.encode() == data


JOINTS_7 = {t: [random_message(t, random.Random(seed), counts={n: 7 for n in t.__slots__ if n.startswith("num_")})
                .encode() for seed in range(3)] for t in (lcmt_iiwa_status, lcmt_panda_status, lcmt_iiwa_command,
                                                         lcmt_panda_command, lcmt_robot_state)}
CODEC = [(StatusDecoder, "iiwa", lcmt_iiwa_status), (StatusDecoder, "panda", lcmt_panda_status),
         (CommandDecoder, "iiwa", lcmt_iiwa_command), (CommandDecoder, "panda", lcmt_panda_command)]


@pytest.mark.parametrize("decoder, kind, message_type", CODEC, ids=lambda x: getattr(x, "__name__", x))
@fuzz_settings(150)
@given(seed=st.integers(0, 2), mutate=mutations())
def test_the_1khz_decoders_never_raise_and_accept_only_valid_messages(decoder, kind, message_type, seed, mutate):
    """The codec checks more than the message's encoding (e.g. one torque per joint), so it accepts a
    subset of what the validated decoder does."""
    data = mutate(JOINTS_7[message_type][seed])
    if decoder(kind, 7, channel="FUZZ").decode(data):
        decode_message(message_type, data, "FUZZ", num_joints=7)


@fuzz_settings(100)
@given(seed=st.integers(0, 2), mutate=mutations())
def test_the_robot_state_decoder_accepts_only_valid_messages(seed, mutate):
    data = mutate(JOINTS_7[lcmt_robot_state][seed])
    if RobotStateDecoder(num_joints=7, channel="FUZZ").decode(data):
        decode_message(lcmt_robot_state, data, "FUZZ", num_joints=7)


@fuzz_settings(150)
@given(data=st.binary(max_size=600))
def test_random_bytes_are_rejected_by_every_decoder_without_raising(data):
    for decoder, kind, _ in CODEC:
        assert decoder(kind, 7).decode(data) in (True, False)
    assert RobotStateDecoder(num_joints=7).decode(data) in (True, False)
    for message_type in MESSAGE_TYPES:
        MessageDecoder(message_type).decode(data)
