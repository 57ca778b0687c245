"""The registry of output languages (--lang), in the order of the files written: a language is one package
under codegen/ with its Backend and templates, listed here or `register`ed (docs/contributing.md).
"""
from .c import C, C32
from .cpp import CPP
from .python import PYTHON

BACKENDS = {backend.name: backend for backend in (PYTHON, C, CPP)}
#: other spellings of a backend with parameters: --lang c-float32 is --lang c --precision float32
ALIASES = {"c-float32": C32}
LANGUAGES = tuple(BACKENDS) + tuple(ALIASES)


def register(backend):
    """Add a backend (an instance of a Backend subclass) under its name, after the others."""
    global LANGUAGES
    BACKENDS[backend.name] = backend
    LANGUAGES = tuple(BACKENDS) + tuple(ALIASES)


def with_requirements(languages):
    """The backends of `languages` and of the languages their files include, in registry order;
    ValueError for an unknown language."""
    known = {**BACKENDS, **ALIASES}
    unknown = [name for name in languages if name not in known]
    if unknown:
        raise ValueError(f"unknown language {', '.join(unknown)} (expected {', '.join(known)})")
    wanted = set(languages)
    for name in languages:
        wanted.update(known[name].requires)
    return [backend for name, backend in known.items() if name in wanted]
