"""Who may read and drive a game, and the class sessions that gather students."""
