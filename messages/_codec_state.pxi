# The lcmt_robot_state and lcmt_hil_telemetry codecs (included by messages/_codec.pyx).

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
            if not finite_bits(bits):
                return self.fail(NON_FINITE, 3, 0, <int64_t>bits_of(<double>real_of(bits)), i)
        self.utime = <int64_t>get_u64(p + 8)
        for i in range(n):
            self.dst[i] = <double>real_of(get_u32(p + pos + 4 * i))
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
        put(self.out + 16, <uint16_t>self.num_joints)
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
                if not finite_bits(<uint32_t>bits_of(<float>x[i])):
                    ok = self.fail(NON_FINITE, 3, 0, <int64_t>bits_of(x[i]), i)
                    break
        if ok:
            for i in range(n):
                put(self.out + self.positions + 4 * i, <uint32_t>bits_of(<float>x[i]))
            put(self.out + 8, <uint64_t>utime)
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
        put(self.out + p, <uint32_t>(len(name) + 1))
        memcpy(self.out + p + 4, <const char*>name, len(name))
        p += 4 + len(name) + 1
        self.mid = p
        p += 2 + 4
        put(self.out + p, <uint32_t>(len(text) + 1))
        memcpy(self.out + p + 4, <const char*>text, len(text))
        self.tail = p + 4 + len(text) + 1
        put(self.out + self.tail + 16, <uint32_t>n)
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
            put(self.out + 8 + 8 * i, <uint64_t>head[i])
        self.out[self.mid] = <uint8_t><int8_t>controller_state
        self.out[self.mid + 1] = <uint8_t><int8_t>safety_state
        put(self.out + self.mid + 2, <uint32_t>fault_code)
        put(self.out + self.tail, <uint64_t>status_utime)
        put(self.out + self.tail + 8, <uint64_t>status_rejected)
        ok = (self._put_f64s(15, base, q, "q") and self._put_f64s(16, base + 8 * n, v, "v")
              and self._put_f64s(17, base + 16 * n, q_desired, "q_desired")
              and self._put_f64s(18, base + 24 * n, tau_commanded, "tau_commanded"))
        return self._returned(ok)
