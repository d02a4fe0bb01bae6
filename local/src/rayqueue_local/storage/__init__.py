"""The object store: reads, writes, patches, garbage collection, the watch log and persistence."""
