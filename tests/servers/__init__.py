"""Helpers that start real local HTTP servers for the backend tests (loopback only)."""
