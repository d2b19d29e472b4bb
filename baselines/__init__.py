"""Reference experiments: one definition per (agent, environment), a command line, and results."""
