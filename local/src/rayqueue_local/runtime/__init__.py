"""Real local processes: Ray heads, the process registry, Prometheus and the GPU metrics exporter."""
