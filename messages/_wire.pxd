# cython: language_level=3
"""LCM's wire format in C, for messages._codec: the error codes and field indices the codec
reports, the message layouts, and the big-endian reads and writes of integers and IEEE-754 values.
All inline and nogil: they compile into the codec's loops (hand-written, since they must allocate
nothing)."""
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t

cdef enum:
    # Error codes: messages._codec.ERROR_NAMES[code] is each one's counter name.
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


ctypedef fused word:          # an unsigned integer as LCM puts it on the wire, big-endian
    uint16_t
    uint32_t
    uint64_t

ctypedef fused real:          # an IEEE-754 value: binary32 (LCM's float) or binary64 (double)
    float
    double


cdef inline uint64_t get_u64(const uint8_t* p) noexcept nogil:
    return ((<uint64_t>p[0] << 56) | (<uint64_t>p[1] << 48) | (<uint64_t>p[2] << 40)
            | (<uint64_t>p[3] << 32) | (<uint64_t>p[4] << 24) | (<uint64_t>p[5] << 16)
            | (<uint64_t>p[6] << 8) | <uint64_t>p[7])

cdef inline uint32_t get_u32(const uint8_t* p) noexcept nogil:
    return ((<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16) | (<uint32_t>p[2] << 8)
            | <uint32_t>p[3])

cdef inline uint16_t get_u16(const uint8_t* p) noexcept nogil:
    return <uint16_t>((<uint16_t>p[0] << 8) | <uint16_t>p[1])

cdef inline void put(uint8_t* p, word v) noexcept nogil:
    """Writes v big-endian at p (sizeof(v) bytes; the loop has a constant count: the compiler
    unrolls it)."""
    cdef size_t i
    for i in range(sizeof(word)):
        p[i] = <uint8_t>(v >> (8 * (sizeof(word) - 1 - i)))

cdef extern from *:
    """
    #include <string.h>
    /* IEEE-754 bit casts: memcpy is C's defined way (a pointer cast is not); compilers emit a move. */
    static inline double hil_f64_of(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }
    static inline float hil_f32_of(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
    static inline uint64_t hil_bits_of_f64(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
    static inline uint32_t hil_bits_of_f32(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
    """
    double f64_of "hil_f64_of"(uint64_t bits) nogil
    float f32_of "hil_f32_of"(uint32_t bits) nogil
    uint64_t bits_of_f64 "hil_bits_of_f64"(double x) nogil
    uint32_t bits_of_f32 "hil_bits_of_f32"(float x) nogil

cdef inline double real_of(word bits) noexcept nogil:
    """The IEEE-754 value whose bits these are: binary32 for a uint32, binary64 for a uint64."""
    return f32_of(bits) if word is uint32_t else f64_of(bits)

cdef inline uint64_t bits_of(real x) noexcept nogil:
    """The IEEE-754 bits of x (a float's in the low 32 bits: cast them to uint32_t for put and
    finite_bits)."""
    return bits_of_f32(x) if real is float else bits_of_f64(x)

cdef inline bint finite_bits(word bits) noexcept nogil:
    """Whether the IEEE-754 value with these bits (binary32 for a uint32) is finite: its exponent
    is not all ones."""
    if word is uint32_t:
        return (bits & 0x7F800000U) != 0x7F800000U
    else:
        return (bits & 0x7FF0000000000000ULL) != 0x7FF0000000000000ULL


cdef inline Py_ssize_t first_non_finite_wire(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Index of the first NaN/inf among n big-endian doubles at p, or -1."""
    cdef Py_ssize_t i
    for i in range(n):
        if not finite_bits(get_u64(p + 8 * i)):
            return i
    return -1

cdef inline Py_ssize_t first_non_finite(const double* x, Py_ssize_t n) noexcept nogil:
    """Index of the first NaN/inf among n native doubles at x, or -1."""
    cdef Py_ssize_t i
    for i in range(n):
        if not finite_bits(bits_of(x[i])):
            return i
    return -1

cdef inline void read_f64s(double* dst, const uint8_t* p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        dst[i] = real_of(get_u64(p + 8 * i))

cdef inline void write_f64s(uint8_t* p, const double* src, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        put(p + 8 * i, bits_of(src[i]))


cdef inline bint valid_utf8(const uint8_t* s, Py_ssize_t n) noexcept nogil:
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
