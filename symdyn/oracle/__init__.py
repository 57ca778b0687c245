"""Independent libraries that symdyn's functions are checked against."""
