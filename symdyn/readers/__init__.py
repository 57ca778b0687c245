"""Robot files in (YAML, Denavit-Hartenberg, URDF, joint-parameter files), a validated Model out."""
