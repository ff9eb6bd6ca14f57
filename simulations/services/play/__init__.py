"""Playing the AI's turns: the one game loop, its lease and queue, the AI-turn door, budgets, the headless loop."""
