"""Builds the Cython extensions (dynamics_cy's model, algorithms, kernels, capsule distances and linalg,
dynamics_cy.planning._wbc_qp and _wbc_reduce, messages._codec, drivers.core._control, drivers.sim._contact,
_constraints, _forces and _physics, drivers.serial._servo_wire; -O3, numpy headers). dynamics_cy's modules
cimport each other's cdef functions through their .pxd files."""
import shutil
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    """Ships the repository's top-level configs/ as drivers' package data (drivers/configs in the
    wheel), where drivers.core.paths finds it once installed."""

    def run(self):
        super().run()
        shutil.copytree(Path(__file__).resolve().parent / "configs", Path(self.build_lib) / "drivers" / "configs",
                        dirs_exist_ok=True)


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
                 "dynamics_cy._com", "dynamics_cy._reaction", "dynamics_cy._regressor", "dynamics_cy._facade",
                 "dynamics_cy._kernels", "dynamics_cy._capsules", "dynamics_cy.linalg",
                 "dynamics_cy.planning._wbc_qp",
                 "dynamics_cy.planning._wbc_reduce", "messages._codec", "drivers.core._control", "drivers.sim._contact",
                 "drivers.sim._constraints", "drivers.sim._forces",
                 "drivers.sim._physics", "drivers.serial._servo_wire")
]

setup(
    cmdclass={"build_py": BuildPy},
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
