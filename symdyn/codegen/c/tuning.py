"""Every tuning constant of the C backend, in one place, each with the benchmark that sets it.

A Tuning is a value: CBackend(tuning=replace(TUNING, lane_statements=60)) renders a small robot the way a
large one is rendered (the tests do so). Rerun the benchmark named beside a constant before changing it:

    python benchmarks/bench_batch.py before/panda.c after/panda.c --rounds 4     # batch entries vs single calls
    python benchmarks/bench_compile.py robots/panda.urdf                         # gcc time of a module
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    #: a single-state function of more statements than this is cut into static parts (parts.py): gcc -O2 grows
    #: faster than linearly with one basic block (a 100-link Coriolis matrix ran out of memory at 18 GB).
    #: Every function of a 7-DoF arm stays one piece (largest: 1326 statements, xarm7). bench_compile.py
    split_above: int = 2000
    #: the statements of one such part: gcc -O2 on a 50-link Coriolis matrix in parts of 250 / 500 / 1000 /
    #: 2000 statements took 6.4 / 7.8 / 11 / 15 s. bench_compile.py
    part_size: int = 250
    #: a batch entry keeps a block of lanes of every input and output on the stack: above this many
    #: reals per state it loops single calls (at most 512 KB of blocks; an OpenMP thread's stack may be
    #: 2 MB). The Panda's regressor has 707.
    batch_entries: int = 4096
    #: lanes only for a function of more than this many statements per entry it moves: below, the copies
    #: into and out of the blocks cost more than the lanes save. bench_batch.py, one thread, 4096 states:
    #: the Panda's base_parameters (0.14) 0.43-0.65x, planar6's regressor (0.28) 0.82x, solo12 floating's
    #: frame_jacobian (0.58) 0.89-0.98x; planar2's frame_jacobian (0.64) 7.7x, stanford's regressor
    #: (0.68) 1.4x, z1's regressor (0.72) 2.1x.
    lane_work: float = 0.6
    #: a sin/cos (pair) counts as this many more statements in lane_work's comparison (only): about the lines of
    #: the vectorized block of input angles that it replaced (docs/perf-history.md "Codegen optimizations
    #: re-measured"), so that the plans of the bundled robots stay as they were (planar2's frame_jacobian,
    #: one angle in 4 lines, in lanes: 7.7x)
    trig_statements: int = 5
    #: a function of more statements than this runs its lanes in parts of lane_part statements: gcc's time
    #: on one lane loop grows faster than its length (talos_reduced floating's inverse dynamics, 1538
    #: statements: 6.7 s in one loop, 1.0 s as single calls). The xarm7's coriolis_nu (1331) stays one
    #: loop: 4.5-5.3x the single calls. bench_batch.py and bench_compile.py
    lane_statements: int = 1400
    #: the statements of one lane part (talos_reduced floating's Coriolis matrix: 6.3 / 6.5 / 8.0 s of gcc
    #: in parts of 125 / 250 / 500). bench_compile.py
    lane_part: int = 250
    #: at most this many statements of a module go into lane parts (lanes cost gcc ~3.5x the single
    #: function), in the order of the function table; the rest loop single calls. talos_reduced floating,
    #: load_c's flags: 77 s of gcc without lane parts, 96 s at 20000 (its dynamics, mass matrix, M^-1,
    #: Coriolis matrix get lanes: 2.1-3.1x the single calls), 171 s with all 75k. bench_compile.py
    lane_budget: int = 20000
    #: the sin and cos of the angles of a function's inputs alone go through one vectorized block
    #: (sd_sincos_n) when there are at least this many, else through one sd_sincos per angle, inlined: the
    #: block made the arms' functions (6-7 angles) slower (UR5 gravity 37 -> 45 ns, docs/perf-history.md
    #: "Codegen optimizations re-measured"), those of 12-32 angles faster (single calls, gravity: solo12
    #: 97 -> 63 ns, anymal 96 -> 63, baxter 127 -> 103, talos_reduced 247 -> 149; docs/perf-history.md
    #: "The vectorized sin/cos block for many angles"). bench_batch.py
    trig_block: int = 8
    #: the block's arrays are padded with zeros to a multiple of this many entries: gcc vectorizes a loop
    #: of a constant count without a scalar remainder (one AVX2 vector of doubles)
    trig_pad: int = 4
    #: runs of at least zero_run exact zeros of an output are stored by loops of zero_chunk entries (64
    #: bytes of doubles, a few vector stores); one loop over a long run becomes `rep stos`, whose start-up
    #: made the Panda's regressor slower than single stores. bench_c.py
    zero_run: int = 4
    zero_chunk: int = 8
    #: a function of at least this many output entries stores each entry just after its last operand, a
    #: smaller one at the end (solo12's inverse dynamics, 18 entries, was slower with early stores; the
    #: Panda's 6x7 centroidal map 9% faster with them). bench_c.py
    early_stores: int = 32


TUNING = Tuning()
