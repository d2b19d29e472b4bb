"""Utilities: counters, loggers, observers."""
