from dynamics_cy._model cimport Data, Model

cdef int center_of_mass(Model m, Data d, double* p_W, double* J, double* a_W) noexcept nogil
