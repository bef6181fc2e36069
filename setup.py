"""Builds the Cython extensions (dynamics_cy._kernels, messages._codec, hil._control, drivers.sim._physics,
drivers.serial._servo_wire,
planning._wbc_qp, planning._wbc_reduce; -O3, numpy headers)."""
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
    for name in ("dynamics_cy._kernels", "messages._codec", "hil._control", "drivers.sim._physics",
                 "drivers.serial._servo_wire", "planning._wbc_qp", "planning._wbc_reduce")
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
