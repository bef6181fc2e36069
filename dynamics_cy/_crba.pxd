from dynamics_cy._model cimport Data, Model

cdef void subtree_sum(Model m, double* x, int width) noexcept nogil
cdef void world_subspaces(Model m, Data d) noexcept nogil
cdef void crba(Model m, Data d, double* M) noexcept nogil
