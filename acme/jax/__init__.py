"""JAX-side building blocks: variable clients, prefetching, actors, utilities."""
