"""From recursions to code: trace on a Tape, optimize once, then one backend package per language (python/,
c/, cpp/, each with its templates; languages.py lists them) and the C module's loader (c/loader.py)."""
