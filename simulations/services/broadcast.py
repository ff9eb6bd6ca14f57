"""Tell a game's websocket group that the game advanced; consumers re-render from the database."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer


def group_name(game_id: int) -> str:
    return f"game-{game_id}"


def notify_game_advanced(game_id: int) -> None:
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group_name(game_id), {"type": "game.advanced"})
