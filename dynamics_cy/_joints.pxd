# The joint table: for every joint type, in one place, its X_FM(q), its motion subspace S_M, its bias
# acceleration cJ and its kinematic maps q̇ = N(q) v and v = N⁺(q) q̇. Adding a joint type means adding
# a code to JointType and a branch to each function below (and its class in joints.py, which takes its
# code from here). Each function is one switch on the type, inlined into the algorithms. A joint's
# constant parameters a are 4 doubles: its unit axis â and, for a screw, the lead ℓ = pitch/(2π)
# (translation along â per radian).
from libc.math cimport cos, fabs, sin
from libc.string cimport memset

from dynamics_cy._vec3 cimport cross3
from dynamics_cy._spatial cimport axis_angle, quat_matrix, rpy_matrix


cpdef enum JointType:
    WELD = 0
    REVOLUTE = 1                 # q = θ about the unit axis a (in F = M)
    PRISMATIC = 2                # q = x along a
    BALL_RPY = 3                 # q = [r p y], R_FM = Rz(y) Ry(p) Rx(r); v = w_FM in F
    QUATERNION_FLOATING = 4      # q = [qw qx qy qz x y z]; v = [w_FM in F; v_FM in F]
    PLANAR = 5                   # q = [x y θ] in F's xy plane; v = q̇
    RPY_FLOATING = 6             # q = [r p y x y z], R_FM = Rz(y) Ry(p) Rx(r); v = [w_FM in F; v_FM in F]
    SCREW = 7                    # q = θ about â and ℓ θ along â (F = M on â); v = θ̇
    UNIVERSAL = 8                # q = [θ0 θ1], R_FM = Rx(θ0) Ry(θ1); v = q̇


cdef enum:
    BIAS_NONE = 0
    BIAS_LINEAR_F = 1
    BIAS_ANGULAR_M = 2


cdef inline void joint_X_FM(int jt, const double* a, const double* qj, double* R_FM, double* p_FM,
                            double* Sm) noexcept nogil:
    """X_FM(q) = (R_FM, p_FM) and the motion subspace S_M (nv columns of 6 at Mo in M) of a joint of
    type jt with parameters a (â, ℓ)."""
    cdef int k
    cdef double c0, s0, c1, s1
    memset(Sm, 0, 36 * sizeof(double))
    memset(R_FM, 0, 9 * sizeof(double))
    p_FM[0] = 0.0
    p_FM[1] = 0.0
    p_FM[2] = 0.0
    if jt == REVOLUTE:
        axis_angle(a, qj[0], R_FM)
        Sm[0], Sm[1], Sm[2] = a[0], a[1], a[2]
    elif jt == PRISMATIC:
        R_FM[0], R_FM[4], R_FM[8] = 1.0, 1.0, 1.0
        p_FM[0], p_FM[1], p_FM[2] = a[0] * qj[0], a[1] * qj[0], a[2] * qj[0]
        Sm[3], Sm[4], Sm[5] = a[0], a[1], a[2]
    elif jt == BALL_RPY:
        rpy_matrix(qj[0], qj[1], qj[2], R_FM)
        for k in range(3):   # column k: [R_MF e_k; 0] = [row k of R_FM; 0]
            Sm[6 * k], Sm[6 * k + 1], Sm[6 * k + 2] = R_FM[3 * k], R_FM[3 * k + 1], R_FM[3 * k + 2]
    elif jt == QUATERNION_FLOATING or jt == RPY_FLOATING:
        if jt == QUATERNION_FLOATING:
            quat_matrix(qj, R_FM)
            p_FM[0], p_FM[1], p_FM[2] = qj[4], qj[5], qj[6]
        else:
            rpy_matrix(qj[0], qj[1], qj[2], R_FM)
            p_FM[0], p_FM[1], p_FM[2] = qj[3], qj[4], qj[5]
        for k in range(3):
            Sm[6 * k], Sm[6 * k + 1], Sm[6 * k + 2] = R_FM[3 * k], R_FM[3 * k + 1], R_FM[3 * k + 2]
            Sm[6 * (k + 3) + 3], Sm[6 * (k + 3) + 4], Sm[6 * (k + 3) + 5] = \
                R_FM[3 * k], R_FM[3 * k + 1], R_FM[3 * k + 2]
    elif jt == PLANAR:
        R_FM[0], R_FM[1], R_FM[3], R_FM[4], R_FM[8] = cos(qj[2]), -sin(qj[2]), sin(qj[2]), cos(qj[2]), 1.0
        p_FM[0], p_FM[1] = qj[0], qj[1]
        for k in range(2):  # [0; R_MF e_k]
            Sm[6 * k + 3], Sm[6 * k + 4], Sm[6 * k + 5] = R_FM[3 * k], R_FM[3 * k + 1], R_FM[3 * k + 2]
        Sm[14] = 1.0
    elif jt == SCREW:
        axis_angle(a, qj[0], R_FM)
        p_FM[0], p_FM[1], p_FM[2] = a[0] * a[3] * qj[0], a[1] * a[3] * qj[0], a[2] * a[3] * qj[0]
        Sm[0], Sm[1], Sm[2] = a[0], a[1], a[2]
        Sm[3], Sm[4], Sm[5] = a[0] * a[3], a[1] * a[3], a[2] * a[3]
    elif jt == UNIVERSAL:
        # R_FM = Rx(θ0) Ry(θ1); w_M = θ̇0 R_MF x̂ + θ̇1 ŷ with R_MF x̂ = [c1, 0, s1]
        c0, s0, c1, s1 = cos(qj[0]), sin(qj[0]), cos(qj[1]), sin(qj[1])
        R_FM[0], R_FM[1], R_FM[2] = c1, 0.0, s1
        R_FM[3], R_FM[4], R_FM[5] = s0 * s1, c0, -s0 * c1
        R_FM[6], R_FM[7], R_FM[8] = -c0 * s1, s0, c0 * c1
        Sm[0], Sm[2] = c1, s1
        Sm[7] = 1.0
    else:  # a weld folded at compile time never reaches here; a root weld keeps identity
        R_FM[0], R_FM[4], R_FM[8] = 1.0, 1.0, 1.0


cdef inline int joint_bias(int jt, const double* qj, const double* vj, double* b) noexcept nogil:
    """The joint's bias acceleration cJ_M = Ṡ_M v: BIAS_NONE (b untouched) when S_M is constant in M;
    BIAS_LINEAR_F with b = w_F × v_F in F, cJ_M = [0; -R_MF b]; BIAS_ANGULAR_M with cJ_M = [b; 0]."""
    if jt == QUATERNION_FLOATING or jt == RPY_FLOATING:
        cross3(vj, vj + 3, b)
        return BIAS_LINEAR_F
    if jt == PLANAR:
        b[0] = -vj[2] * vj[1]
        b[1] = vj[2] * vj[0]
        b[2] = 0.0
        return BIAS_LINEAR_F
    if jt == UNIVERSAL:
        # d/dt [c1, 0, s1] θ̇0 = θ̇0 θ̇1 [-s1, 0, c1]
        b[0] = -vj[0] * vj[1] * sin(qj[1])
        b[1] = 0.0
        b[2] = vj[0] * vj[1] * cos(qj[1])
        return BIAS_ANGULAR_M
    return BIAS_NONE


cdef inline int joint_qdot(int jt, const double* qj, const double* vj, double* qd) noexcept nogil:
    """q̇_j = N_j(q) v_j. Returns 1 at a roll-pitch-yaw gimbal lock (|pitch| = π/2), else 0."""
    cdef int k
    cdef double cy, sy, cp, sp, rd
    if jt == REVOLUTE or jt == PRISMATIC or jt == SCREW:
        qd[0] = vj[0]
    elif jt == PLANAR:
        qd[0], qd[1], qd[2] = vj[0], vj[1], vj[2]
    elif jt == UNIVERSAL:
        qd[0], qd[1] = vj[0], vj[1]
    elif jt == BALL_RPY or jt == RPY_FLOATING:
        cp = cos(qj[1])
        if fabs(cp) < 1e-10:
            return 1
        sp, cy, sy = sin(qj[1]), cos(qj[2]), sin(qj[2])
        rd = (cy * vj[0] + sy * vj[1]) / cp
        qd[0] = rd
        qd[1] = -sy * vj[0] + cy * vj[1]
        qd[2] = vj[2] + sp * rd
        if jt == RPY_FLOATING:
            qd[3], qd[4], qd[5] = vj[3], vj[4], vj[5]
    elif jt == QUATERNION_FLOATING:
        # q̇ = ½ [0; w] ⊗ q  (w expressed in F)
        qd[0] = -0.5 * (vj[0] * qj[1] + vj[1] * qj[2] + vj[2] * qj[3])
        qd[1] = 0.5 * (qj[0] * vj[0] + vj[1] * qj[3] - vj[2] * qj[2])
        qd[2] = 0.5 * (qj[0] * vj[1] + vj[2] * qj[1] - vj[0] * qj[3])
        qd[3] = 0.5 * (qj[0] * vj[2] + vj[0] * qj[2] - vj[1] * qj[1])
        for k in range(3):
            qd[4 + k] = vj[3 + k]
    return 0


cdef inline void joint_qdot_to_v(int jt, const double* qj, int nvj, double* Np, int ld) noexcept nogil:
    """The joint's block of N⁺(q) (v_j = N⁺_j q̇_j), written at Np with row stride ld (zeroed by the caller)."""
    cdef int k
    cdef double s, w, x, y, z, cp, sp, cy, sy
    if jt == QUATERNION_FLOATING:
        # w_F = (2/|q|²) [-qv, qw 1 + [qv]x] q̇_quat; v_F = ṗ
        w, x, y, z = qj[0], qj[1], qj[2], qj[3]
        s = 2.0 / (w * w + x * x + y * y + z * z)
        Np[0], Np[1], Np[2], Np[3] = -s * x, s * w, -s * z, s * y
        Np[ld], Np[ld + 1], Np[ld + 2], Np[ld + 3] = -s * y, s * z, s * w, -s * x
        Np[2 * ld], Np[2 * ld + 1], Np[2 * ld + 2], Np[2 * ld + 3] = -s * z, -s * y, s * x, s * w
        for k in range(3):
            Np[(3 + k) * ld + 4 + k] = 1.0
    elif jt == BALL_RPY or jt == RPY_FLOATING:
        # w_F = [cy cp, -sy, 0; sy cp, cy, 0; -sp, 0, 1] [ṙ ṗ ẏ]; v_F = ṗ_FM
        cp, sp, cy, sy = cos(qj[1]), sin(qj[1]), cos(qj[2]), sin(qj[2])
        Np[0], Np[1] = cy * cp, -sy
        Np[ld], Np[ld + 1] = sy * cp, cy
        Np[2 * ld], Np[2 * ld + 2] = -sp, 1.0
        if jt == RPY_FLOATING:
            for k in range(3):
                Np[(3 + k) * ld + 3 + k] = 1.0
    else:
        for k in range(nvj):
            Np[k * ld + k] = 1.0
