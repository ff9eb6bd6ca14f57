"""What reaches a page: fragments rendered, messages to a game's websocket group, frame pacing, page threads."""
