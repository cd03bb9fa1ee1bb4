"""Build hook for the one thing pyproject.toml cannot declare: the optional C
speedup of the hand solver's search (service/engine/_solver_native.c).

``optional=True``: without a C compiler the install still succeeds and the
solver runs its pure-Python search (service/engine/_solver_core.py), which
gives the same answers.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "service.engine._solver_native",
            ["service/engine/_solver_native.c"],
            optional=True,
        )
    ]
)
