"""What a game is made of: scenario versions and the model it plays with."""
