"""Every tuning constant of the C backend, in one place, each with the benchmark that sets it.

A Tuning is a value: CBackend(tuning=replace(TUNING, lane_statements=60)) renders a small robot the way a
large one is rendered (the tests do so). Rerun the benchmark named beside a constant before changing it:

    python benchmarks/bench_batch.py before/panda.c after/panda.c --rounds 4     # batch entries vs single calls
    python benchmarks/bench_compile.py robots/panda.urdf                         # gcc time of a module
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    """Each constant's measurements: docs/perf-history.md "Tuning constants", by the constant's name."""
    #: a single-state function of more statements than this is cut into static parts (parts.py): gcc -O2 grows
    #: faster than linearly with one basic block; every function of a 7-DoF arm stays one piece. For speed no
    #: count divides well (parts help solo12's 1983-statement dID 1.7x, hurt regressors up to 2.3x):
    #: docs/perf-history.md "One piece or parts, for speed". bench_compile.py and bench_c.py --before
    split_above: int = 1900
    #: the statements of one such part. bench_compile.py
    part_size: int = 250
    #: a batch entry keeps blocks of lanes of every input and output on the stack: above this many reals per
    #: state it loops single calls (at most 512 KB of blocks; an OpenMP thread's stack may be 2 MB)
    batch_entries: int = 4096
    #: lanes only for a function of more than this many statements per entry it moves: below, the copies into
    #: and out of the blocks cost more than the lanes save. bench_batch.py
    lane_work: float = 0.6
    #: a sin/cos (pair) counts as this many more statements in lane_work's comparison (only): about the lines
    #: of the vectorized block of input angles that it replaced, so that the bundled robots' plans stay
    trig_statements: int = 5
    #: a function of more statements than this runs its lanes in parts of lane_part statements: gcc's time on
    #: one lane loop grows faster than its length, and a long loop keeps more vectors live than there are
    #: registers (1000 against 1400: iiwa14's, xarm7's coriolis_nu 1.6-1.7x). bench_batch.py --before main
    lane_statements: int = 1000
    #: the statements of one lane part. bench_compile.py
    lane_part: int = 250
    #: at most this many statements of a module go into lane parts (lanes cost gcc ~3.5x the single function),
    #: in the order of the function table; the rest loop single calls. bench_compile.py
    lane_budget: int = 20000
    #: the sin and cos of the angles of a function's inputs alone go through one vectorized block (sd_sincos_n)
    #: when there are at least this many, else one sd_sincos call per angle: the arms' 4-7 angles gain too
    #: (Panda, UR5, iiwa14: gravity 1.33-1.57x, forward dynamics 1.06-1.18x, none slower). bench_c.py --before
    trig_block: int = 4
    #: the block's arrays are padded with zeros to a multiple of this many entries. 1, none: a padded vector
    #: load of the angles spans the run's copy and the zeros' stores, which the processor cannot forward to
    #: it (a stall before every sin and cos; forward dynamics 0.92x with pad 4); unpadded, each of the loop's
    #: loads (4, then 2 and 1 entries for the remainder) falls within one store of the copy. bench_c.py --before
    trig_pad: int = 1
    #: the doubles of the widest vector that gcc vectorizes the block's loop with (AVX2): a run of input angles
    #: is copied in pieces where the loop's loads start (trig._loads), each piece one move of their width
    trig_vector: int = 4
    #: runs of at least zero_run exact zeros of an output are stored by loops of zero_chunk entries (64 bytes
    #: of doubles); one loop over a long run becomes `rep stos`, slow to start. bench_c.py
    zero_run: int = 4
    zero_chunk: int = 8
    #: a function of at least this many output entries stores each entry just after its last operand, a
    #: smaller one at the end. bench_c.py
    early_stores: int = 32
    #: like branches (a quadruped's legs, a robot's two arms) run as lanes of one loop in a single-state function
    #: (branch_lanes.py) when there are at least branch_lanes of them: four on solo12 1.3-2.2x (ID, g, FD, M^-1, C,
    #: dID, dFD), two on Baxter's arms 1.2-1.7x (ID, M, FD, M^-1, C, Ag) and talos' legs 1.43x (ID), under
    #: lane_loads' rule: docs/perf-history.md "Like branches as lanes in the C backend", "A leg's statements after
    #: the sum over the legs". bench_c.py --before
    branch_lanes: int = 2
    #: ... and when the values that something outside the loops reads (a scalar statement, an output: a load
    #: from the loop's array each) are at most lane_loads per statement the loops save. solo12, go2, Spot: 0.09-0.34
    #: for ID, g, FD, M^-1, C, dID and dFD (1.0-3.0x), 0.39-0.41 for Ag (1.37-1.46x; the gymnasium Ant's ID at 0.43
    #: 0.99x), 0.47-0.49 for M (0.95-1.08x), 0.52-0.83 for J 0.91x, Y 1.03x and ANYmal's ID 0.62x (legs that line up
    #: in part): docs/perf-history.md "Like branches as lanes in the C backend", "A leg's statements after the sum
    #: over the legs". Outputs count too: stored from the loops they cost as much (docs/perf-history.md "Outputs
    #: stored by the branch loops; lanes for functions cut into parts"). bench_c.py --before, bench_batch.py --before
    lane_loads: float = 0.45
    #: ... and when the function in lane form (the loops' statements once) has at most lane_piece times split_above
    #: statements: it is one piece, never parts (parts would have to pass the loops' arrays). 2: talos_reduced's FD
    #: (2447) 1.29x, Baxter's dFD 1.33x against parts; compile of Baxter's module 12.8 -> 19.5 s: docs/perf-history.md
    #: "A lane form of up to twice split_above in one piece". bench_c.py --before
    lane_piece: float = 2.0

TUNING = Tuning()
