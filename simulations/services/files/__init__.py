"""Files moved in and out: game exports and imports, scenario drafts published from admin."""
