# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Allocation-free LCM encoders and decoders for the 1 kHz path (public API: messages.codec).

The wire format is LCM's: the type's 8-byte packed fingerprint, then the fields
in declaration order, big-endian, arrays preceded by their num_* field, strings
as an int32 length (including the NUL) and the bytes. Fingerprints come from
the lcm-gen classes, so they follow LCM's rule exactly.

Each object owns its numpy arrays (decoders) or its output buffer (encoders),
allocated once; a call creates no Python objects on success. A decoder
validates the whole message before writing, so on failure its arrays keep the
last good message; after a failed encode nothing is publishable until the next
good one. Failures are recorded as a code plus numbers (field, element,
expected, actual) and a per-code counter; `last_error` turns them into a
messages.errors exception only when asked. The C functions are nogil, but the
GIL is not released: for a 7-joint message that would cost more than it saves.

One extension module, its source by what it holds: the wire format (_wire.pxd), the bookkeeping
every codec shares (here), the robots' status and command codecs (_codec_robot.pxi) and the
robot-state and telemetry codecs (_codec_state.pxi), and the fixed-size grippers' and force/torque
codecs (_codec_scalars.pxi).
"""
cimport numpy as cnp
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memchr, memcmp, memcpy, memset

from messages._wire cimport *

import numpy as np

from messages import errors
from messages.drake import (lcmt_force_torque, lcmt_iiwa_command, lcmt_iiwa_status,
                            lcmt_panda_command, lcmt_panda_status, lcmt_robot_state,
                            lcmt_schunk_wsg_command, lcmt_schunk_wsg_status)
from messages.hilmsg import lcmt_hil_telemetry
from messages.registry import fingerprint as _fingerprint

cnp.import_array()



ERROR_NAMES = ("ok", "fingerprint", "truncated", "oversized", "length_mismatch", "non_finite",
               "joint_count", "joint_names", "malformed")
"""Counter name of each error code (messages._wire's codes index this tuple)."""

_KINDS = {"iiwa": IIWA, "panda": PANDA}


# ---------------------------------------------------------------- numpy arrays

cdef const double* _f64s(object obj, str argument, Py_ssize_t* length) except NULL:
    """Data and length of a 1-D, C-contiguous, aligned, native float64 ndarray; TypeError otherwise.

    Uses numpy's C API rather than the buffer protocol: numpy builds (and
    frees) a buffer description on every buffer request, this reads the
    array's fields and allocates nothing.
    """
    if not cnp.PyArray_Check(obj):
        raise TypeError(f"{argument} must be a float64 numpy array, not {type(obj).__name__}")
    cdef cnp.ndarray array = <cnp.ndarray>obj
    if (cnp.PyArray_NDIM(array) != 1 or cnp.PyArray_TYPE(array) != cnp.NPY_DOUBLE
            or not cnp.PyArray_ISCARRAY_RO(array)):
        raise TypeError(f"{argument} must be a 1-D C-contiguous native float64 array, "
                        f"got shape {obj.shape}, dtype {obj.dtype}")
    length[0] = cnp.PyArray_DIM(array, 0)
    return <const double*>cnp.PyArray_DATA(array)


cdef double* _data(object array) except NULL:
    """Pointer to the data of an array this module allocated with np.zeros."""
    cdef Py_ssize_t length
    return <double*>_f64s(array, "array", &length)


cdef int _check_num_joints(int num_joints) except -1:
    if num_joints < 1:
        raise ValueError(f"num_joints must be positive, got {num_joints}")
    return 0

# ---------------------------------------------------------------- bookkeeping

cdef class _Checked:
    """Error state and counters shared by every encoder and decoder."""

    cdef readonly int num_joints
    cdef readonly object message_type
    cdef readonly str kind
    cdef int kind_id
    cdef public object channel
    cdef uint64_t fingerprint
    cdef int err_code, err_field, err_index
    cdef int64_t err_expected, err_actual
    cdef uint64_t counts[NUM_CODES]

    cdef void _setup(self, object message_type, int num_joints, object channel):
        self.message_type = message_type
        self.fingerprint = _fingerprint(message_type)
        self.num_joints = num_joints
        self.channel = channel

    cdef int _setup_robot(self, str kind, object iiwa_type, object panda_type, int num_joints,
                          object channel) except -1:
        """_setup for the lcmt_iiwa_* or lcmt_panda_* type, by kind ("iiwa" or "panda")."""
        if kind not in _KINDS:
            raise ValueError(f"unknown robot kind {kind!r}; expected 'iiwa' or 'panda'")
        _check_num_joints(num_joints)
        self.kind, self.kind_id = kind, _KINDS[kind]
        self._setup(iiwa_type if self.kind_id == IIWA else panda_type, num_joints, channel)
        return 0

    cdef inline bint fail(self, int code, int field, int64_t expected, int64_t actual,
                          Py_ssize_t index) noexcept nogil:
        self.err_code = code
        self.err_field = field
        self.err_expected = expected
        self.err_actual = actual
        self.err_index = <int>index
        self.counts[code] += 1
        return False

    cdef inline bint succeed(self) noexcept nogil:
        self.counts[OK] += 1
        return True

    @property
    def ok_count(self):
        """Number of successful calls."""
        return self.counts[OK]

    @property
    def counters(self):
        """{counter name: failures} for every error type (see messages.errors)."""
        return {ERROR_NAMES[code]: self.counts[code] for code in range(1, NUM_CODES)}

    @property
    def last_error(self):
        """The most recent failure as a messages.errors.MessageError, or None."""
        if self.err_code == OK:
            return None
        cdef int field = self.err_field
        cdef object expected = self.err_expected, actual = self.err_actual
        if self.err_code == FINGERPRINT:
            expected, actual = <uint64_t>self.err_expected, <uint64_t>self.err_actual
        elif self.err_code == NON_FINITE:
            actual = real_of(<uint64_t>self.err_actual)
        elif self.err_code == JOINT_NAMES:
            expected = self._expected_name(self.err_index)
        elif self.err_code == MALFORMED:
            expected = self._malformed_reason()
        return errors.make_error(
            ERROR_NAMES[self.err_code],
            channel=self.channel or "",
            type_name=self.message_type.__name__,
            field=(self.message_type.__slots__[field] if field >= 0
                   else "fingerprint" if field == FINGERPRINT_FIELD else ""),
            expected=expected,
            actual=actual,
            index=self.err_index if self.err_index >= 0 else None)

    def _expected_name(self, index):
        return None

    def _malformed_reason(self):
        return ""

    def _raise_last_error(self):
        raise self.last_error


cdef class _Decoder(_Checked):
    """decode(data) -> bool around a subclass's _decode(pointer, size)."""

    cdef readonly int64_t utime

    cdef bint _decode(self, const uint8_t* p, Py_ssize_t size) noexcept nogil:
        return False

    def decode(self, data):
        """Decode `data` (bytes-like) into this object's arrays; False on an invalid message.

        Never raises for a bad message: the error is kept as last_error and
        counted; the arrays keep the last good message. (TypeError only if
        `data` does not support the buffer protocol.)
        """
        cdef Py_buffer view
        cdef bint ok
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        ok = self._decode(<const uint8_t*>view.buf, view.len)
        PyBuffer_Release(&view)
        return ok

    def decode_or_raise(self, data):
        """decode(data), raising the typed error instead of returning False."""
        if not self.decode(data):
            self._raise_last_error()

    cdef inline bint truncated(self, int field, Py_ssize_t needed, Py_ssize_t size,
                               Py_ssize_t index) noexcept nogil:
        return self.fail(TRUNCATED, field, needed, size, index)

    cdef inline bint check_fingerprint(self, const uint8_t* p, Py_ssize_t size) noexcept nogil:
        if size < 8:
            return self.truncated(FINGERPRINT_FIELD, 8, size, -1)
        if get_u64(p) != self.fingerprint:
            return self.fail(FINGERPRINT, FINGERPRINT_FIELD, <int64_t>self.fingerprint,
                             <int64_t>get_u64(p), -1)
        return True


cdef class _Encoder(_Checked):
    """Owns the output buffer: a private bytes object rewritten in place.

    encode() returns a read-only memoryview of it (valid until the next
    encode). publish() hands the bytes object itself to lcm, which copies it
    into the packet: lcm.LCM.publish (and EventLog.write_event) accept only
    `bytes` - bytearray and memoryview are refused - so this avoids a copy
    per message without ever letting the mutable bytes object escape.
    """

    cdef bytes _buffer
    cdef uint8_t* out
    cdef readonly Py_ssize_t size
    cdef object _view
    cdef bint _ready

    cdef void _allocate(self, Py_ssize_t size):
        self._buffer = PyBytes_FromStringAndSize(NULL, size)
        self.out = <uint8_t*>PyBytes_AS_STRING(self._buffer)
        memset(self.out, 0, size)
        put(self.out, self.fingerprint)
        self.size = size
        self._view = memoryview(self._buffer)

    def publish(self, lc, channel=None):
        """Publish the last encoded message on `channel` (default: self.channel).

        Returns False, publishing nothing, if the last encode() failed.
        """
        if not self._ready:
            return False
        if channel is None:
            channel = self.channel
            if channel is None:
                raise ValueError("publish() needs a channel: none was given to the encoder")
        lc.publish(channel, self._buffer)
        return True

    def tobytes(self):
        """A copy of the last successfully encoded message, e.g. for a log; None if none."""
        return PyBytes_FromStringAndSize(<const char*>self.out, self.size) if self._ready else None

    cdef int _put_f64s(self, int field, Py_ssize_t offset, object array, str argument) except -1:
        """Validate and write `array` (n joints); None writes zeros. 1 on success, 0 on failure."""
        cdef Py_ssize_t n = self.num_joints, length, bad
        cdef const double* x
        if array is None:
            memset(self.out + offset, 0, 8 * n)
            return 1
        x = _f64s(array, argument, &length)
        if length != n:
            return self.fail(JOINT_COUNT, field, n, length, -1)
        bad = first_non_finite(x, n)
        if bad >= 0:
            return self.fail(NON_FINITE, field, 0, <int64_t>bits_of(x[bad]), bad)
        write_f64s(self.out + offset, x, n)
        return 1

    cdef object _returned(self, bint ok):
        self._ready = ok
        if ok:
            self.succeed()
            return self._view
        return None

    cdef object _or_raise(self, object view):
        if view is None:
            self._raise_last_error()
        return view


include "_codec_robot.pxi"
include "_codec_state.pxi"
include "_codec_scalars.pxi"
