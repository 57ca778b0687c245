"""The spatial-operator recursions, one module per algorithm, written once over an abstract scalar."""
