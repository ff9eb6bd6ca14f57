"""Channel layers for bench/load.py's diagnosis only (MERCURY_CHANNEL_LAYER=bench.layers.StampedRedisChannelLayer).

channels_redis's layer, stamping each streamed frame's message (MERCURY_STREAM_TIMESTAMPS) as the serving process
takes it off Redis: a frame's time between the channel layer and its page's consumer then splits into Redis and the
process's receive loop, and waiting in the consumer's own queue behind its earlier messages.
"""

from __future__ import annotations

import time
from typing import Any

from channels_redis.core import RedisChannelLayer


class StampedRedisChannelLayer(RedisChannelLayer):  # type: ignore[misc]
    async def receive_single(self, channel: str) -> Any:
        channel_name, message = await super().receive_single(channel)
        if (
            isinstance(message, dict)
            and message.get("type") == "game.stream"
            and len(message.get("at", ())) == 3
        ):
            message["at"] = [*message["at"], time.time()]
        return channel_name, message
