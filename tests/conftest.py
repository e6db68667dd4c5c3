"""pytest settings for the test suite."""

# tests/programs/ holds whole programs that test_programs.py runs as subprocesses (under
# ferrotape and TensorFlow); importing them for --doctest-modules would run them, and the ones
# that stop on a known gap would fail collection.
collect_ignore = ["programs"]
