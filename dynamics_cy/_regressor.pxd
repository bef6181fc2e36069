from dynamics_cy._model cimport Data, Model

cdef void frame_regressor(Model m, Data d, int n, const double* R_NF, const double* p_NF, double* Y,
                          int ld) noexcept nogil
cdef void torque_regressor(Model m, Data d, double* Y) noexcept nogil
cdef void friction_regressor(int nv, const double* v, double epsilon, double* Y) noexcept nogil
