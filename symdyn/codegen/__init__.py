"""From recursions to code: trace on a Tape, optimize once, then one backend module per language (python, c,
cpp) and the C module's loader (cload)."""
