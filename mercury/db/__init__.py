"""Database back-ends: Django's own, with a process-wide pool of idle connections (see `pool`)."""
