"""The scalar contexts the recursions run in: numeric floats and arrays, and dual numbers (the symbolic one,
the Tape, is symdyn.codegen.tape)."""
