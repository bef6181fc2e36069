"""Builds the Cython extensions (dynamics_cy's model, algorithms and kernels, messages._codec, core._control,
drivers.sim._contact and _physics, drivers.serial._servo_wire, planning._wbc_qp and _wbc_reduce; -O3, numpy
headers). dynamics_cy's modules cimport each other's cdef functions through their .pxd files."""
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = [
    Extension(
        name,
        [name.replace(".", "/") + ".pyx"],
        include_dirs=[numpy.get_include()],
        extra_compile_args=["-O3", "-fno-math-errno"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in ("dynamics_cy._arrays", "dynamics_cy._joints", "dynamics_cy._model", "dynamics_cy._kinematics",
                 "dynamics_cy._rnea", "dynamics_cy._crba", "dynamics_cy._aba", "dynamics_cy._jacobians",
                 "dynamics_cy._com", "dynamics_cy._facade", "dynamics_cy._kernels", "messages._codec", "core._control",
                 "drivers.sim._contact", "drivers.sim._physics", "drivers.serial._servo_wire", "planning._wbc_qp",
                 "planning._wbc_reduce")
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    ),
)
