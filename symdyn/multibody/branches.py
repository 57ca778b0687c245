"""The branches of a kinematic tree: the chains from a joint whose parent (or the world) has several children down
to the next such joint, the trunk above the first one being no branch. Branches of one shape (joint types in order,
and the shapes of the branches below) are alike: a quadruped's legs, a humanoid's arms. The C backend runs like
branches as lanes of one loop (codegen/c/branch_lanes.py); benchmarks/branch_share.py counts their share."""
import collections


class Branches:
    """The branch of each joint and of each input entry, and the branches above each branch."""

    def __init__(self, model):
        self.parent = [j.parent for j in model.joints]
        kids = collections.Counter(self.parent)
        self.of = [self._start(k, kids) for k in range(len(self.parent))]
        self.names = sorted({b for b in self.of if b is not None})
        self.above = {b: {self.of[k] for k in self._ancestors(b) if self.of[k] is not None} for b in self.names}
        self.shape = {b: tuple(model.joints[k].type for k, o in enumerate(self.of) if o == b) for b in self.names}
        for b in sorted(self.names, key=lambda b: -len(self.above[b])):        # deepest first: a branch's shape
            below = sorted(str(self.shape[c]) for c in self.names if b in self.above[c])   # holds its sub-branches'
            self.shape[b] = (self.shape[b], tuple(below))
        self.entry = {}
        for k in range(len(self.parent)):
            for i in model.q_slices[k]:
                self.entry[("q", i)] = self.of[k]
            for i in model.v_slices[k]:
                self.entry.update({(a, i): self.of[k] for a in ("qd", "qdd", "tau")})

    def _start(self, k, kids):
        """The joint that starts k's branch: k or the nearest joint above it whose parent (the world too, for the
        roots of a fixed base) has several children; None on the trunk."""
        while k >= 0 and kids[self.parent[k]] < 2:
            k = self.parent[k]
        return k if k >= 0 else None

    def _ancestors(self, k):
        k = self.parent[k]
        while k >= 0:
            yield k
            k = self.parent[k]

    def owner(self, read):
        """The branch a statement reading the inputs of the branches `read` belongs to: the lowest one that holds
        all of them at or below it (an arm's statement reads the torso's values as the other arm's does, and the
        sums over its fingers), None where they span branches under the trunk (or read none)."""
        read = [b for b in read if not any(b in self.above[c] for c in read)]     # the lowest of one line
        if not read:
            return None
        common = None
        for b in read:
            line = [b] + sorted(self.above[b], key=lambda a: -len(self.above[a]))     # b, then up to the trunk
            common = line if common is None else [a for a in common if a in line]
        return common[0] if common else None

    def groups(self, fewest):
        """[[branch]]: the branches of each shape that has at least `fewest` of them, in the order of their first."""
        shapes = collections.defaultdict(list)
        for b in self.names:
            shapes[self.shape[b]].append(b)
        return [members for members in shapes.values() if len(members) >= fewest]
