from dynamics_cy._model cimport Data, Model

cdef void point_jacobian(Model m, Data d, int n, const double* p_WQ, double* J, int ld) noexcept nogil
cdef void bias_spatial_accelerations(Model m, Data d) noexcept nogil
cdef void point_translational(Model m, Data d, int f, const double* p_FQ, double* J, double* a_W) noexcept nogil
