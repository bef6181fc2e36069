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
"""
cimport numpy as cnp
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memchr, memcmp, memcpy, memset

import numpy as np

from messages import errors
from messages.drake import (lcmt_iiwa_command, lcmt_iiwa_status, lcmt_panda_command,
                            lcmt_panda_status, lcmt_robot_state)
from messages.hilmsg import lcmt_hil_telemetry
from messages.registry import fingerprint as _fingerprint

cnp.import_array()


# ---------------------------------------------------------------- error codes

cdef enum:
    OK = 0
    FINGERPRINT
    TRUNCATED
    OVERSIZED
    LENGTH_MISMATCH
    NON_FINITE
    JOINT_COUNT
    JOINT_NAMES
    MALFORMED
    NUM_CODES

ERROR_NAMES = ("ok", "fingerprint", "truncated", "oversized", "length_mismatch", "non_finite",
               "joint_count", "joint_names", "malformed")
"""Counter name of each error code; the codes index this tuple."""

cdef enum:
    IIWA_IPO_ARRAY = 3      # joint_position_ipo: the 4th array of lcmt_iiwa_status

cdef enum:
    # Field index of error reports that concern no field; otherwise the
    # index is the field's position in the lcm-gen class's __slots__.
    WHOLE_BUFFER = -2
    FINGERPRINT_FIELD = -1
    # Bits of lcmt_panda_status.CONTROL_MODE_*; CommandDecoder also reports
    # which arrays an iiwa command carried with them.
    MODE_POSITION = 1
    MODE_VELOCITY = 2
    MODE_TORQUE = 4
    # Robot kinds.
    IIWA = 0
    PANDA = 1
    # Wire layout.
    STATUS_HEADER = 20        # fingerprint, utime, num_joints
    PANDA_STATUS_TAIL = 18    # success rate, robot_mode, robot_utime, control_mode
    PANDA_RATE_FIELD = 10     # slot of control_command_success_rate
    ROBOT_STATE_HEADER = 18   # fingerprint, utime, int16 num_joints

_KINDS = {"iiwa": IIWA, "panda": PANDA}


# ---------------------------------------------------------------- big-endian bytes

cdef inline uint64_t get_u64(const uint8_t* p) noexcept nogil:
    return ((<uint64_t>p[0] << 56) | (<uint64_t>p[1] << 48) | (<uint64_t>p[2] << 40)
            | (<uint64_t>p[3] << 32) | (<uint64_t>p[4] << 24) | (<uint64_t>p[5] << 16)
            | (<uint64_t>p[6] << 8) | <uint64_t>p[7])

cdef inline uint32_t get_u32(const uint8_t* p) noexcept nogil:
    return ((<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16) | (<uint32_t>p[2] << 8)
            | <uint32_t>p[3])

cdef inline uint16_t get_u16(const uint8_t* p) noexcept nogil:
    return <uint16_t>((<uint16_t>p[0] << 8) | <uint16_t>p[1])

cdef inline void put_u64(uint8_t* p, uint64_t v) noexcept nogil:
    p[0] = <uint8_t>(v >> 56)
    p[1] = <uint8_t>(v >> 48)
    p[2] = <uint8_t>(v >> 40)
    p[3] = <uint8_t>(v >> 32)
    p[4] = <uint8_t>(v >> 24)
    p[5] = <uint8_t>(v >> 16)
    p[6] = <uint8_t>(v >> 8)
    p[7] = <uint8_t>v

cdef inline void put_u32(uint8_t* p, uint32_t v) noexcept nogil:
    p[0] = <uint8_t>(v >> 24)
    p[1] = <uint8_t>(v >> 16)
    p[2] = <uint8_t>(v >> 8)
    p[3] = <uint8_t>v

cdef inline void put_u16(uint8_t* p, uint16_t v) noexcept nogil:
    p[0] = <uint8_t>(v >> 8)
    p[1] = <uint8_t>v

cdef inline double bits_to_f64(uint64_t bits) noexcept nogil:
    cdef double value
    memcpy(&value, &bits, 8)
    return value

cdef inline uint64_t f64_to_bits(double value) noexcept nogil:
    cdef uint64_t bits
    memcpy(&bits, &value, 8)
    return bits

cdef inline float bits_to_f32(uint32_t bits) noexcept nogil:
    cdef float value
    memcpy(&value, &bits, 4)
    return value

cdef inline uint32_t f32_to_bits(float value) noexcept nogil:
    cdef uint32_t bits
    memcpy(&bits, &value, 4)
    return bits

cdef inline bint finite_f64_bits(uint64_t bits) noexcept nogil:
    return (bits & 0x7FF0000000000000ULL) != 0x7FF0000000000000ULL

cdef inline bint finite_f32_bits(uint32_t bits) noexcept nogil:
    return (bits & 0x7F800000U) != 0x7F800000U


# ---------------------------------------------------------------- double arrays

cdef inline Py_ssize_t first_non_finite_wire(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Index of the first NaN/inf among n big-endian doubles at p, or -1."""
    cdef Py_ssize_t i
    for i in range(n):
        if not finite_f64_bits(get_u64(p + 8 * i)):
            return i
    return -1

cdef inline Py_ssize_t first_non_finite(const double* x, Py_ssize_t n) noexcept nogil:
    """Index of the first NaN/inf among n native doubles at x, or -1."""
    cdef Py_ssize_t i
    for i in range(n):
        if not finite_f64_bits(f64_to_bits(x[i])):
            return i
    return -1

cdef inline void read_f64s(double* dst, const uint8_t* p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        dst[i] = bits_to_f64(get_u64(p + 8 * i))

cdef inline void write_f64s(uint8_t* p, const double* src, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        put_u64(p + 8 * i, f64_to_bits(src[i]))


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
            actual = bits_to_f64(<uint64_t>self.err_actual)
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
        put_u64(self.out, self.fingerprint)
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
            return self.fail(NON_FINITE, field, 0, <int64_t>f64_to_bits(x[bad]), bad)
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


# ---------------------------------------------------------------- status


cdef class StatusDecoder(_Decoder):
    """Decodes lcmt_iiwa_status or lcmt_panda_status into preallocated float64 arrays.

    Arrays (shape (num_joints,)), named as Drake's IiwaStatusReceiver ports:
    position_measured, velocity_estimated, position_commanded, torque_measured,
    torque_commanded, torque_external; iiwa also position_ipo; panda also
    velocity_commanded and acceleration_commanded (the others are None).
    Scalars: utime; panda also control_command_success_rate, robot_mode,
    robot_utime, control_mode.
    """

    cdef int n_arrays
    cdef double* dst[8]
    cdef readonly object position_measured, velocity_estimated, position_commanded
    cdef readonly object torque_measured, torque_commanded, torque_external
    cdef readonly object position_ipo, velocity_commanded, acceleration_commanded
    cdef readonly double control_command_success_rate
    cdef readonly int robot_mode, control_mode
    cdef readonly int64_t robot_utime

    def __init__(self, str kind="iiwa", int num_joints=7, channel=None):
        self._setup_robot(kind, lcmt_iiwa_status, lcmt_panda_status, num_joints, channel)
        self.position_measured = np.zeros(num_joints)
        self.velocity_estimated = np.zeros(num_joints)
        self.position_commanded = np.zeros(num_joints)
        self.torque_measured = np.zeros(num_joints)
        self.torque_commanded = np.zeros(num_joints)
        self.torque_external = np.zeros(num_joints)
        if self.kind_id == IIWA:
            self.position_ipo = np.zeros(num_joints)
            wire_order = (self.position_measured, self.velocity_estimated, self.position_commanded,
                          self.position_ipo, self.torque_measured, self.torque_commanded,
                          self.torque_external)
        else:
            self.velocity_commanded = np.zeros(num_joints)
            self.acceleration_commanded = np.zeros(num_joints)
            wire_order = (self.position_measured, self.position_commanded, self.velocity_estimated,
                          self.velocity_commanded, self.acceleration_commanded,
                          self.torque_measured, self.torque_commanded, self.torque_external)
        self.n_arrays = len(wire_order)
        for i, array in enumerate(wire_order):
            self.dst[i] = _data(array)

    cdef bint _decode(self, const uint8_t* p, Py_ssize_t size) noexcept nogil:
        cdef Py_ssize_t n, expected_size, payload, a, bad, offset
        cdef Py_ssize_t per_joint = 8 * self.n_arrays
        cdef Py_ssize_t tail = PANDA_STATUS_TAIL if self.kind_id == PANDA else 0
        cdef const uint8_t* arrays = p + STATUS_HEADER
        cdef const uint8_t* t
        if not self.check_fingerprint(p, size):
            return False
        if size < STATUS_HEADER:
            return self.truncated(0 if size < 16 else 1, 16 if size < 16 else STATUS_HEADER, size, -1)
        n = <int32_t>get_u32(p + 16)
        if n < 0:
            return self.fail(LENGTH_MISMATCH, 1, self.num_joints, n, -1)
        expected_size = STATUS_HEADER + per_joint * n + tail
        if size != expected_size:
            payload = size - STATUS_HEADER - tail
            if payload > 0 and payload % per_joint == 0:
                # The arrays are whole, for a different joint count.
                return self.fail(LENGTH_MISMATCH, 1, payload // per_joint, n, -1)
            if size > expected_size:
                return self.fail(OVERSIZED, WHOLE_BUFFER, expected_size, size, -1)
            offset = size - STATUS_HEADER
            if offset < per_joint * n:
                return self.truncated(2 + offset // (8 * n), expected_size, size, -1)
            # Inside panda's tail: rate [0, 8), robot_mode [8, 9), robot_utime [9, 17), control_mode.
            offset -= per_joint * n
            return self.truncated(PANDA_RATE_FIELD + (offset >= 8) + (offset >= 9) + (offset >= 17),
                                  expected_size, size, -1)
        if n != self.num_joints:
            return self.fail(JOINT_COUNT, 1, self.num_joints, n, -1)
        for a in range(self.n_arrays):
            if self.kind_id == IIWA and a == IIWA_IPO_ARRAY:
                continue        # kuka_driver sends NaN there outside FRI's COMMANDING states, by design
            bad = first_non_finite_wire(arrays + 8 * n * a, n)
            if bad >= 0:
                return self.fail(NON_FINITE, 2 + a, 0, <int64_t>get_u64(arrays + 8 * n * a + 8 * bad), bad)
        t = arrays + per_joint * n
        if self.kind_id == PANDA and not finite_f64_bits(get_u64(t)):
            return self.fail(NON_FINITE, PANDA_RATE_FIELD, 0, <int64_t>get_u64(t), -1)
        self.utime = <int64_t>get_u64(p + 8)
        for a in range(self.n_arrays):
            read_f64s(self.dst[a], arrays + 8 * n * a, n)
        if self.kind_id == PANDA:
            self.control_command_success_rate = bits_to_f64(get_u64(t))
            self.robot_mode = <int8_t>t[8]
            self.robot_utime = <int64_t>get_u64(t + 9)
            self.control_mode = <int8_t>t[17]
        return self.succeed()


cdef class StatusEncoder(_Encoder):
    """Encodes lcmt_iiwa_status or lcmt_panda_status (the simulated plant's side).

    encode() takes the arrays by the names StatusDecoder exposes; an array left
    None is sent as zeros, as Drake's IiwaStatusSender does for unconnected inputs.
    """

    cdef Py_ssize_t tail

    def __init__(self, str kind="iiwa", int num_joints=7, channel=None):
        self._setup_robot(kind, lcmt_iiwa_status, lcmt_panda_status, num_joints, channel)
        self.tail = STATUS_HEADER + 8 * (7 if self.kind_id == IIWA else 8) * num_joints
        self._allocate(self.tail + (PANDA_STATUS_TAIL if self.kind_id == PANDA else 0))
        put_u32(self.out + 16, <uint32_t>num_joints)

    cdef inline Py_ssize_t _offset(self, int index):
        return STATUS_HEADER + 8 * self.num_joints * index

    def encode(self, int64_t utime, position_measured=None, velocity_estimated=None,
               position_commanded=None, torque_measured=None, torque_commanded=None,
               torque_external=None, *, position_ipo=None, velocity_commanded=None,
               acceleration_commanded=None, control_command_success_rate=None,
               robot_mode=None, robot_utime=None, control_mode=None):
        """Encode a status; returns a memoryview of the message, or None if invalid.

        iiwa-only: position_ipo. panda-only: velocity_commanded,
        acceleration_commanded, control_command_success_rate, robot_mode,
        robot_utime, control_mode (scalars default to 0).
        """
        cdef bint ok
        cdef double rate
        self._ready = False
        if self.kind_id == IIWA:
            if not (velocity_commanded is None and acceleration_commanded is None
                    and control_command_success_rate is None and robot_mode is None
                    and robot_utime is None and control_mode is None):
                raise TypeError("panda-only arguments given to an iiwa StatusEncoder")
            ok = (self._put_f64s(2, self._offset(0), position_measured, "position_measured")
                  and self._put_f64s(3, self._offset(1), velocity_estimated, "velocity_estimated")
                  and self._put_f64s(4, self._offset(2), position_commanded, "position_commanded")
                  and self._put_f64s(5, self._offset(3), position_ipo, "position_ipo")
                  and self._put_f64s(6, self._offset(4), torque_measured, "torque_measured")
                  and self._put_f64s(7, self._offset(5), torque_commanded, "torque_commanded")
                  and self._put_f64s(8, self._offset(6), torque_external, "torque_external"))
        else:
            if position_ipo is not None:
                raise TypeError("position_ipo given to a panda StatusEncoder")
            ok = (self._put_f64s(2, self._offset(0), position_measured, "position_measured")
                  and self._put_f64s(3, self._offset(1), position_commanded, "position_commanded")
                  and self._put_f64s(4, self._offset(2), velocity_estimated, "velocity_estimated")
                  and self._put_f64s(5, self._offset(3), velocity_commanded, "velocity_commanded")
                  and self._put_f64s(6, self._offset(4), acceleration_commanded, "acceleration_commanded")
                  and self._put_f64s(7, self._offset(5), torque_measured, "torque_measured")
                  and self._put_f64s(8, self._offset(6), torque_commanded, "torque_commanded")
                  and self._put_f64s(9, self._offset(7), torque_external, "torque_external"))
            if ok:
                rate = 0.0 if control_command_success_rate is None else control_command_success_rate
                if not finite_f64_bits(f64_to_bits(rate)):
                    ok = self.fail(NON_FINITE, PANDA_RATE_FIELD, 0, <int64_t>f64_to_bits(rate), -1)
                else:
                    put_u64(self.out + self.tail, f64_to_bits(rate))
                    self.out[self.tail + 8] = <uint8_t><int8_t>(0 if robot_mode is None else robot_mode)
                    put_u64(self.out + self.tail + 9,
                            <uint64_t><int64_t>(0 if robot_utime is None else robot_utime))
                    self.out[self.tail + 17] = <uint8_t><int8_t>(0 if control_mode is None else control_mode)
        if ok:
            put_u64(self.out + 8, <uint64_t>utime)
        return self._returned(ok)

    def encode_or_raise(self, *args, **kwargs):
        """encode(...), raising the typed error instead of returning None."""
        return self._or_raise(self.encode(*args, **kwargs))


# ---------------------------------------------------------------- command

_COMMAND_FIELDS = {IIWA: ("position", "torque"), PANDA: ("position", "velocity", "torque")}
_FIELD_BITS = {"position": MODE_POSITION, "velocity": MODE_VELOCITY, "torque": MODE_TORQUE}
_DEFAULT_COMMAND_FIELDS = {IIWA: ("position", "torque"), PANDA: ("torque",)}


cdef class CommandDecoder(_Decoder):
    """Decodes lcmt_iiwa_command or lcmt_panda_command (the driver / simulated plant's side).

    Arrays position, torque (and velocity for panda; None for iiwa), shape
    (num_joints,); an array the message does not carry is zeroed and its
    has_* flag is False. control_mode is the CONTROL_MODE_* bitmask of the
    arrays present (for panda, the validated control_mode_expected).

    Valid iiwa commands carry positions, torques or both (Drake's
    position_only / torque_only / position_and_torque modes); valid panda
    commands carry exactly the arrays control_mode_expected selects.
    """

    cdef int n_sections
    cdef int section_bits[3]
    cdef double* dst[3]
    cdef readonly object position, velocity, torque
    cdef readonly bint has_position, has_velocity, has_torque
    cdef readonly int control_mode

    def __init__(self, str kind="iiwa", int num_joints=7, channel=None):
        self._setup_robot(kind, lcmt_iiwa_command, lcmt_panda_command, num_joints, channel)
        self.position = np.zeros(num_joints)
        self.torque = np.zeros(num_joints)
        self.velocity = np.zeros(num_joints) if self.kind_id == PANDA else None
        sections = ([self.position, self.torque] if self.kind_id == IIWA
                    else [self.position, self.velocity, self.torque])
        self.n_sections = len(sections)
        for s, name in enumerate(_COMMAND_FIELDS[self.kind_id]):
            self.dst[s] = _data(sections[s])
            self.section_bits[s] = _FIELD_BITS[name]

    def _malformed_reason(self):
        return "control_mode_expected must select position, velocity and/or torque (bits 1, 2, 4)"

    cdef bint _decode(self, const uint8_t* p, Py_ssize_t size) noexcept nogil:
        cdef Py_ssize_t counts[3]
        cdef Py_ssize_t offsets[3]
        cdef Py_ssize_t pos = 16, s, c, n = self.num_joints, bad
        cdef int mode = 0, wanted
        if not self.check_fingerprint(p, size):
            return False
        if size < 16:
            return self.truncated(0, 16, size, -1)
        for s in range(self.n_sections):
            if size < pos + 4:
                return self.truncated(1 + 2 * s, pos + 4, size, -1)
            c = <int32_t>get_u32(p + pos)
            if c < 0:
                return self.fail(LENGTH_MISMATCH, 1 + 2 * s, n, c, -1)
            counts[s] = c
            offsets[s] = pos + 4
            pos += 4 + 8 * c
            if size < pos:
                return self.truncated(2 + 2 * s, pos, size, -1)
        if self.kind_id == PANDA:
            if size < pos + 1:
                return self.truncated(7, pos + 1, size, -1)
            mode = <int8_t>p[pos]
            pos += 1
        if size != pos:
            return self.fail(OVERSIZED, WHOLE_BUFFER, pos, size, -1)
        if self.kind_id == IIWA:
            if counts[0] == 0 and counts[1] == 0:
                return self.fail(LENGTH_MISMATCH, 1, n, 0, -1)
            if counts[0] != 0 and counts[1] != 0 and counts[0] != counts[1]:
                return self.fail(LENGTH_MISMATCH, 3, counts[0], counts[1], -1)
            mode = (MODE_POSITION if counts[0] else 0) | (MODE_TORQUE if counts[1] else 0)
        elif mode <= 0 or mode & ~(MODE_POSITION | MODE_VELOCITY | MODE_TORQUE):
            return self.fail(MALFORMED, 7, 0, mode, -1)
        for s in range(self.n_sections):
            wanted = mode & self.section_bits[s]
            if wanted and counts[s] == 0:
                return self.fail(LENGTH_MISMATCH, 1 + 2 * s, n, 0, -1)
            if not wanted and counts[s] != 0:
                return self.fail(LENGTH_MISMATCH, 1 + 2 * s, 0, counts[s], -1)
            if wanted and counts[s] != n:
                return self.fail(JOINT_COUNT, 1 + 2 * s, n, counts[s], -1)
        for s in range(self.n_sections):
            bad = first_non_finite_wire(p + offsets[s], counts[s])
            if bad >= 0:
                return self.fail(NON_FINITE, 2 + 2 * s, 0, <int64_t>get_u64(p + offsets[s] + 8 * bad), bad)
        self.utime = <int64_t>get_u64(p + 8)
        for s in range(self.n_sections):
            if counts[s]:
                read_f64s(self.dst[s], p + offsets[s], n)
            else:
                memset(self.dst[s], 0, 8 * n)
        self.control_mode = mode
        self.has_position = (mode & MODE_POSITION) != 0
        self.has_velocity = (mode & MODE_VELOCITY) != 0
        self.has_torque = (mode & MODE_TORQUE) != 0
        return self.succeed()


cdef class CommandEncoder(_Encoder):
    """Encodes lcmt_iiwa_command or lcmt_panda_command (the controller's side).

    `fields` chooses which arrays every command carries: for iiwa ("position",),
    ("torque",) or ("position", "torque") (Drake's position_only, torque_only,
    position_and_torque; the default is the last); for panda any of
    "position", "velocity", "torque" (default ("torque",)), which also sets
    control_mode_expected.
    """

    cdef readonly tuple fields
    cdef Py_ssize_t offsets[3]

    def __init__(self, str kind="iiwa", int num_joints=7, fields=None, channel=None):
        cdef Py_ssize_t pos = 16, count
        cdef int s
        self._setup_robot(kind, lcmt_iiwa_command, lcmt_panda_command, num_joints, channel)
        allowed = _COMMAND_FIELDS[self.kind_id]
        fields = _DEFAULT_COMMAND_FIELDS[self.kind_id] if fields is None else tuple(fields)
        if not fields or not set(fields) <= set(allowed) or len(set(fields)) != len(fields):
            raise ValueError(f"fields of a {kind} command must be distinct names among {allowed}, "
                             f"got {fields}")
        self.fields = tuple(name for name in allowed if name in fields)
        self._allocate(16 + 4 * len(allowed) + 8 * num_joints * len(self.fields)
                       + (1 if self.kind_id == PANDA else 0))
        for s, name in enumerate(allowed):
            count = num_joints if name in self.fields else 0
            put_u32(self.out + pos, <uint32_t>count)
            self.offsets[s] = pos + 4 if count else -1
            pos += 4 + 8 * count
        if self.kind_id == PANDA:  # control_mode_expected
            self.out[pos] = <uint8_t>sum(_FIELD_BITS[name] for name in self.fields)

    cdef int _section(self, int s, object array, str argument) except -1:
        if self.offsets[s] < 0:
            if array is not None:
                raise TypeError(f"{argument} given, but this encoder sends only {self.fields}")
            return 1
        if array is None:
            raise TypeError(f"{argument} is required: this encoder sends {self.fields}")
        return self._put_f64s(2 + 2 * s, self.offsets[s], array, argument)

    def encode(self, int64_t utime, position=None, torque=None, velocity=None):
        """Encode a command; returns a memoryview of the message, or None if invalid.

        Pass exactly the arrays named in `fields` (float64, shape (num_joints,)).
        """
        cdef bint ok
        self._ready = False
        if self.kind_id == IIWA:
            if velocity is not None:
                raise TypeError("an iiwa command has no velocity")
            ok = self._section(0, position, "position") and self._section(1, torque, "torque")
        else:
            ok = (self._section(0, position, "position") and self._section(1, velocity, "velocity")
                  and self._section(2, torque, "torque"))
        if ok:
            put_u64(self.out + 8, <uint64_t>utime)
        return self._returned(ok)

    def encode_or_raise(self, int64_t utime, position=None, torque=None, velocity=None):
        """encode(...), raising the typed error instead of returning None."""
        return self._or_raise(self.encode(utime, position, torque, velocity))


# ---------------------------------------------------------------- robot state

cdef bytes _encode_names(tuple names):
    """The joint_name section of an lcmt_robot_state: (int32 length, bytes, NUL) per name."""
    out = bytearray()
    for name in names:
        raw = name.encode("utf-8")
        if b"\0" in raw:
            raise ValueError(f"joint name {name!r} contains a NUL character")
        out += (len(raw) + 1).to_bytes(4, "big") + raw + b"\0"
    return bytes(out)


def _names(joint_names):
    names = tuple(joint_names)
    if not names or len(names) > 32767 or not all(isinstance(name, str) for name in names):
        raise ValueError("joint_names must be 1 to 32767 strings")
    return names


cdef bint valid_utf8(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Whether s[0:n] is UTF-8 as Python's strict decoder takes it (no overlong forms, surrogates or
    code points above U+10FFFF)."""
    cdef Py_ssize_t i = 0, j, k
    cdef uint8_t c, c1
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            k = 1
        elif 0xE0 <= c <= 0xEF:
            k = 2
        elif 0xF0 <= c <= 0xF4:
            k = 3
        else:
            return False
        if i + k >= n:
            return False
        c1 = s[i + 1]
        if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 > 0x9F) or (c == 0xF0 and c1 < 0x90) \
                or (c == 0xF4 and c1 > 0x8F):
            return False
        for j in range(1, k + 1):
            if (s[i + j] & 0xC0) != 0x80:
                return False
        i += k + 1
    return True


cdef class RobotStateDecoder(_Decoder):
    """Decodes lcmt_robot_state into `position` (float64, shape (num_joints,)).

    With joint_names, the message's names must equal them in order; without,
    only the count is checked.
    """

    cdef readonly tuple joint_names
    cdef bytes names_block
    cdef const uint8_t* names
    cdef Py_ssize_t names_length
    cdef readonly object position
    cdef double* dst

    def __init__(self, joint_names=None, num_joints=None, channel=None):
        if joint_names is not None:
            self.joint_names = _names(joint_names)
            self.names_block = _encode_names(self.joint_names)
            self.names = <const uint8_t*>PyBytes_AS_STRING(self.names_block)
            self.names_length = len(self.names_block)
            num_joints = len(self.joint_names)
        elif num_joints is None:
            raise ValueError("give joint_names or num_joints")
        _check_num_joints(num_joints)
        self._setup(lcmt_robot_state, num_joints, channel)
        self.position = np.zeros(num_joints)
        self.dst = _data(self.position)

    def _expected_name(self, index):
        return self.joint_names[index]

    def _malformed_reason(self):
        return ("a string needs a length of at least 1, UTF-8 text with no NUL inside, and its NUL "
                "terminator at the end")

    cdef bint _decode(self, const uint8_t* p, Py_ssize_t size) noexcept nogil:
        cdef Py_ssize_t n, i, pos = ROBOT_STATE_HEADER, names_start, length, bad = -1
        cdef uint32_t bits
        if not self.check_fingerprint(p, size):
            return False
        if size < ROBOT_STATE_HEADER:
            return self.truncated(0 if size < 16 else 1, 16 if size < 16 else ROBOT_STATE_HEADER, size, -1)
        n = <int16_t>get_u16(p + 16)
        if n < 0:
            return self.fail(LENGTH_MISMATCH, 1, self.num_joints, n, -1)
        for i in range(n):
            if size < pos + 4:
                return self.truncated(2, pos + 4, size, i)
            length = <int32_t>get_u32(p + pos)
            if length < 1:
                return self.fail(MALFORMED, 2, 0, length, i)
            pos += 4 + length
            if size < pos:
                return self.truncated(2, pos, size, i)
            if p[pos - 1] != 0 or memchr(p + pos - length, 0, length - 1) != NULL \
                    or not valid_utf8(p + pos - length, length - 1):
                return self.fail(MALFORMED, 2, 0, length, i)
        if size < pos + 4 * n:
            return self.truncated(3, pos + 4 * n, size, -1)
        if size > pos + 4 * n:
            return self.fail(OVERSIZED, WHOLE_BUFFER, pos + 4 * n, size, -1)
        if n != self.num_joints:
            return self.fail(JOINT_COUNT, 1, self.num_joints, n, -1)
        if self.names_length:
            bad = self._name_mismatch(p + ROBOT_STATE_HEADER, pos - ROBOT_STATE_HEADER)
            if bad >= 0:
                return self.fail(JOINT_NAMES, 2, 0, 0, bad)
        for i in range(n):
            bits = get_u32(p + pos + 4 * i)
            if not finite_f32_bits(bits):
                return self.fail(NON_FINITE, 3, 0, <int64_t>f64_to_bits(<double>bits_to_f32(bits)), i)
        self.utime = <int64_t>get_u64(p + 8)
        for i in range(n):
            self.dst[i] = <double>bits_to_f32(get_u32(p + pos + 4 * i))
        return self.succeed()

    cdef Py_ssize_t _name_mismatch(self, const uint8_t* names, Py_ssize_t length) noexcept nogil:
        """Index of the first name that differs from joint_names, or -1."""
        cdef Py_ssize_t i, pos = 0, size
        if length == self.names_length and memcmp(names, self.names, length) == 0:
            return -1
        for i in range(self.num_joints):
            size = 4 + get_u32(self.names + pos)
            if pos + size > length or memcmp(names + pos, self.names + pos, size) != 0:
                return i
            pos += size
        return self.num_joints - 1


cdef class RobotStateEncoder(_Encoder):
    """Encodes lcmt_robot_state for fixed joint_names; positions go out as float32."""

    cdef readonly tuple joint_names
    cdef Py_ssize_t positions

    def __init__(self, joint_names, channel=None):
        self.joint_names = _names(joint_names)
        block = _encode_names(self.joint_names)
        self._setup(lcmt_robot_state, len(self.joint_names), channel)
        self.positions = ROBOT_STATE_HEADER + len(block)
        self._allocate(self.positions + 4 * self.num_joints)
        put_u16(self.out + 16, <uint16_t>self.num_joints)
        memcpy(self.out + ROBOT_STATE_HEADER, <const char*>block, len(block))

    def encode(self, int64_t utime, position):
        """Encode; returns a memoryview of the message, or None if invalid.

        A value outside float32's range becomes inf on the wire and is
        rejected as non-finite.
        """
        cdef Py_ssize_t i, length, n = self.num_joints
        cdef const double* x
        cdef bint ok = True
        self._ready = False
        x = _f64s(position, "position", &length)
        if length != n:
            ok = self.fail(JOINT_COUNT, 3, n, length, -1)
        else:
            for i in range(n):
                if not finite_f32_bits(f32_to_bits(<float>x[i])):
                    ok = self.fail(NON_FINITE, 3, 0, <int64_t>f64_to_bits(x[i]), i)
                    break
        if ok:
            for i in range(n):
                put_u32(self.out + self.positions + 4 * i, f32_to_bits(<float>x[i]))
            put_u64(self.out + 8, <uint64_t>utime)
        return self._returned(ok)

    def encode_or_raise(self, int64_t utime, position):
        """encode(...), raising the typed error instead of returning None."""
        return self._or_raise(self.encode(utime, position))


# ---------------------------------------------------------------- telemetry

cdef class TelemetryEncoder(_Encoder):
    """Encodes hilmsg.lcmt_hil_telemetry for the loop, allocation-free between text changes.

    The two strings (controller_name, fault_text) fix the message layout: `set_text` lays the buffer
    out anew for new strings (call it when the fault text changes, e.g. at a safety transition);
    `encode` only writes numbers into it.
    """

    cdef readonly str controller_name, fault_text
    cdef Py_ssize_t mid, tail     # offsets of controller_state and of status_utime

    def __init__(self, int num_joints, str controller_name, channel=None):
        _check_num_joints(num_joints)
        self._setup(lcmt_hil_telemetry, num_joints, channel)
        self.set_text(controller_name, "")

    def set_text(self, str controller_name, str fault_text):
        """Lays the buffer out for these strings (allocates; not for every tick)."""
        name, text = controller_name.encode("utf-8"), fault_text.encode("utf-8")
        if b"\0" in name or b"\0" in text:
            raise ValueError("telemetry strings must not contain NUL characters")
        cdef Py_ssize_t n = self.num_joints
        cdef Py_ssize_t p = 8 + 7 * 8
        self._allocate(p + 4 + len(name) + 1 + 2 + 4 + 4 + len(text) + 1 + 16 + 4 + 4 * 8 * n)
        put_u32(self.out + p, <uint32_t>(len(name) + 1))
        memcpy(self.out + p + 4, <const char*>name, len(name))
        p += 4 + len(name) + 1
        self.mid = p
        p += 2 + 4
        put_u32(self.out + p, <uint32_t>(len(text) + 1))
        memcpy(self.out + p + 4, <const char*>text, len(text))
        self.tail = p + 4 + len(text) + 1
        put_u32(self.out + self.tail + 16, <uint32_t>n)
        self.controller_name, self.fault_text = controller_name, fault_text
        self._ready = False

    def encode(self, int64_t utime, int64_t tick, int64_t period_ns, int64_t compute_ns, int64_t lateness_ns,
               int64_t deadline_misses, int64_t overruns, int controller_state, int safety_state,
               int fault_code, int64_t status_utime, int64_t status_rejected, q, v, q_desired,
               tau_commanded):
        """Writes one telemetry message; returns a memoryview of it, or None if an array is invalid."""
        cdef int64_t head[7]
        cdef int i
        cdef Py_ssize_t n = self.num_joints, base = self.tail + 20
        head[0], head[1], head[2], head[3] = utime, tick, period_ns, compute_ns
        head[4], head[5], head[6] = lateness_ns, deadline_misses, overruns
        self._ready = False
        for i in range(7):
            put_u64(self.out + 8 + 8 * i, <uint64_t>head[i])
        self.out[self.mid] = <uint8_t><int8_t>controller_state
        self.out[self.mid + 1] = <uint8_t><int8_t>safety_state
        put_u32(self.out + self.mid + 2, <uint32_t>fault_code)
        put_u64(self.out + self.tail, <uint64_t>status_utime)
        put_u64(self.out + self.tail + 8, <uint64_t>status_rejected)
        ok = (self._put_f64s(15, base, q, "q") and self._put_f64s(16, base + 8 * n, v, "v")
              and self._put_f64s(17, base + 16 * n, q_desired, "q_desired")
              and self._put_f64s(18, base + 24 * n, tau_commanded, "tau_commanded"))
        return self._returned(ok)
