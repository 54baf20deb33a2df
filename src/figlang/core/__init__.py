"""The kernel every layer stands on: errors, atomic I/O, paths, text keys, provenance, devices, plugins."""
