# The codecs of the fixed-size types: an int64 time, then doubles (included by messages/_codec.pyx).
# lcmt_schunk_wsg_command, lcmt_schunk_wsg_status (the WSG and Panda-hand drivers' messages) and
# lcmt_force_torque.

cdef enum:
    MAX_SCALARS = 6


cdef class _ScalarsDecoder(_Decoder):
    """Decodes a message of one int64 then k doubles into `values` (float64, shape (k,), wire order);
    the int64 is `utime` (lcmt_force_torque's `timestamp`, in milliseconds). A non-finite double is
    refused (NonFiniteError naming the field)."""

    cdef readonly object values
    cdef double* dst
    cdef Py_ssize_t n

    cdef void _setup_scalars(self, object message_type, object channel):
        self._setup(message_type, 0, channel)
        self.n = len(message_type.__slots__) - 1
        self.values = np.zeros(self.n)
        self.dst = _data(self.values)

    cdef bint _decode(self, const uint8_t* p, Py_ssize_t size) noexcept nogil:
        cdef Py_ssize_t expected = 16 + 8 * self.n, bad
        if not self.check_fingerprint(p, size):
            return False
        if size < expected:
            return self.truncated(0 if size < 16 else 1 + (size - 16) // 8, expected, size, -1)
        if size > expected:
            return self.fail(OVERSIZED, WHOLE_BUFFER, expected, size, -1)
        bad = first_non_finite_wire(p + 16, self.n)
        if bad >= 0:
            return self.fail(NON_FINITE, 1 + bad, 0, <int64_t>get_u64(p + 16 + 8 * bad), -1)
        self.utime = <int64_t>get_u64(p + 8)
        read_f64s(self.dst, p + 16, self.n)
        return self.succeed()


cdef class _ScalarsEncoder(_Encoder):
    """Encodes a message of one int64 then k doubles; a non-finite value is refused."""

    cdef Py_ssize_t n
    cdef double v[MAX_SCALARS]

    cdef void _setup_scalars(self, object message_type, object channel):
        self._setup(message_type, 0, channel)
        self.n = len(message_type.__slots__) - 1
        self._allocate(16 + 8 * self.n)

    cdef object _write(self, int64_t time):
        """Write `time` and self.v[:n]; the memoryview, or None if a value is not finite."""
        cdef Py_ssize_t bad = first_non_finite(self.v, self.n)
        if bad >= 0:
            return self._returned(self.fail(NON_FINITE, 1 + bad, 0, <int64_t>bits_of(self.v[bad]), -1))
        put(self.out + 8, <uint64_t>time)
        write_f64s(self.out + 16, self.v, self.n)
        return self._returned(True)


cdef class WsgCommandDecoder(_ScalarsDecoder):
    """lcmt_schunk_wsg_command -> utime, values = [target_position_mm, force] (the driver's side)."""

    def __init__(self, channel=None):
        self._setup_scalars(lcmt_schunk_wsg_command, channel)

    @property
    def target_position_mm(self):
        return self.dst[0]

    @property
    def force(self):
        return self.dst[1]


cdef class WsgCommandEncoder(_ScalarsEncoder):
    """lcmt_schunk_wsg_command (the controller's side): encode(utime, target_position_mm, force)."""

    def __init__(self, channel=None):
        self._setup_scalars(lcmt_schunk_wsg_command, channel)

    def encode(self, int64_t utime, double target_position_mm, double force):
        self.v[0], self.v[1] = target_position_mm, force
        return self._write(utime)

    def encode_or_raise(self, int64_t utime, double target_position_mm, double force):
        return self._or_raise(self.encode(utime, target_position_mm, force))


cdef class WsgStatusDecoder(_ScalarsDecoder):
    """lcmt_schunk_wsg_status -> utime, values = [actual_position_mm, actual_force,
    actual_speed_mm_per_s] (the controller's side)."""

    def __init__(self, channel=None):
        self._setup_scalars(lcmt_schunk_wsg_status, channel)

    @property
    def actual_position_mm(self):
        return self.dst[0]

    @property
    def actual_force(self):
        return self.dst[1]

    @property
    def actual_speed_mm_per_s(self):
        return self.dst[2]


cdef class WsgStatusEncoder(_ScalarsEncoder):
    """lcmt_schunk_wsg_status (the driver's side): encode(utime, actual_position_mm, actual_force,
    actual_speed_mm_per_s)."""

    def __init__(self, channel=None):
        self._setup_scalars(lcmt_schunk_wsg_status, channel)

    def encode(self, int64_t utime, double actual_position_mm, double actual_force,
               double actual_speed_mm_per_s):
        self.v[0], self.v[1], self.v[2] = actual_position_mm, actual_force, actual_speed_mm_per_s
        return self._write(utime)

    def encode_or_raise(self, int64_t utime, double actual_position_mm, double actual_force,
                        double actual_speed_mm_per_s):
        return self._or_raise(self.encode(utime, actual_position_mm, actual_force, actual_speed_mm_per_s))


cdef class ForceTorqueDecoder(_ScalarsDecoder):
    """lcmt_force_torque -> utime (the message's `timestamp`, milliseconds), values = [fx, fy, fz,
    tx, ty, tz] (N, N·m)."""

    def __init__(self, channel=None):
        self._setup_scalars(lcmt_force_torque, channel)


cdef class ForceTorqueEncoder(_ScalarsEncoder):
    """lcmt_force_torque: encode(timestamp_ms, fx, fy, fz, tx, ty, tz)."""

    def __init__(self, channel=None):
        self._setup_scalars(lcmt_force_torque, channel)

    def encode(self, int64_t timestamp, double fx, double fy, double fz, double tx, double ty,
               double tz):
        self.v[0], self.v[1], self.v[2], self.v[3], self.v[4], self.v[5] = fx, fy, fz, tx, ty, tz
        return self._write(timestamp)

    def encode_or_raise(self, int64_t timestamp, double fx, double fy, double fz, double tx,
                        double ty, double tz):
        return self._or_raise(self.encode(timestamp, fx, fy, fz, tx, ty, tz))
