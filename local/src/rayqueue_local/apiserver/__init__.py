"""The HTTPS front end: request parsing, authentication and RBAC, REST handlers, watch streams, faults."""
