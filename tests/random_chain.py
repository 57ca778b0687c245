"""Random chains and trees for the identity tests: see symdyn.synthetic."""
from symdyn.synthetic import random_chain, random_description, random_tree, random_tree_description  # noqa: F401
