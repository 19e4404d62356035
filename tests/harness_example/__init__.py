"""A complete example benchmark for the harness (tests/test_harness_example.py): one folder + one registry line."""
