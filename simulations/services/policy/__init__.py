"""How a person's move is taken: form checks, text rules, rate limits, the move pipeline, the sentences shown."""
