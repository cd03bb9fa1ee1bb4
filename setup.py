"""Build hook for what pyproject.toml cannot declare: the solver's C search.

``service/engine/solver/_native.c`` is built with ``optional=True``: without a
C compiler or the Python headers the install still succeeds, and the solver
runs its pure-Python search, which gives the same answers (more slowly).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "service.engine.solver._native",
            ["service/engine/solver/_native.c"],
            optional=True,
        )
    ]
)
