"""The registry of output languages: the CLI's --lang, generate and load_c iterate it.

Adding a language is one module defining its Backend (see backends.py), its templates, and its
line here; the order is the order of the files written.
"""
from .c import C, C32
from .cpp import CPP
from .python import PYTHON

BACKENDS = {backend.name: backend for backend in (PYTHON, C, CPP, C32)}
LANGUAGES = tuple(BACKENDS)


def with_requirements(languages):
    """The backends of `languages` and of the languages their files include, in registry order;
    ValueError for an unknown language."""
    unknown = [name for name in languages if name not in BACKENDS]
    if unknown:
        raise ValueError(f"unknown language {', '.join(unknown)} (expected {', '.join(LANGUAGES)})")
    wanted = set()
    for name in languages:
        wanted.add(name)
        wanted.update(BACKENDS[name].requires)
    return [backend for name, backend in BACKENDS.items() if name in wanted]
