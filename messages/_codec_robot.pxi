# The status and command codecs of the iiwa and Panda (included by messages/_codec.pyx).

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
        if self.kind_id == PANDA and not finite_bits(get_u64(t)):
            return self.fail(NON_FINITE, PANDA_RATE_FIELD, 0, <int64_t>get_u64(t), -1)
        self.utime = <int64_t>get_u64(p + 8)
        for a in range(self.n_arrays):
            read_f64s(self.dst[a], arrays + 8 * n * a, n)
        if self.kind_id == PANDA:
            self.control_command_success_rate = real_of(get_u64(t))
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
        put(self.out + 16, <uint32_t>num_joints)

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
                if not finite_bits(bits_of(rate)):
                    ok = self.fail(NON_FINITE, PANDA_RATE_FIELD, 0, <int64_t>bits_of(rate), -1)
                else:
                    put(self.out + self.tail, bits_of(rate))
                    self.out[self.tail + 8] = <uint8_t><int8_t>(0 if robot_mode is None else robot_mode)
                    put(self.out + self.tail + 9,
                            <uint64_t><int64_t>(0 if robot_utime is None else robot_utime))
                    self.out[self.tail + 17] = <uint8_t><int8_t>(0 if control_mode is None else control_mode)
        if ok:
            put(self.out + 8, <uint64_t>utime)
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
            put(self.out + pos, <uint32_t>count)
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
            put(self.out + 8, <uint64_t>utime)
        return self._returned(ok)

    def encode_or_raise(self, int64_t utime, position=None, torque=None, velocity=None):
        """encode(...), raising the typed error instead of returning None."""
        return self._or_raise(self.encode(utime, position, torque, velocity))
