"""Building blocks for agent packages: the builder interface, the shared n-step-transition builder, config checks
and the declarative description of an agent (``AgentDefinition``)."""
