"""The robot as data: the frozen Model, its joint types, spatial algebra, geometry, Lie groups, constraints."""
