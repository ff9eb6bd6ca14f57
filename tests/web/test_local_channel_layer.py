"""The embedded default's channel layer (mercury/channel_layer.py, LocalChannelLayer): channels' in-memory layer
with group sends that put each message straight on its members' queues, and a walk for expired messages at most
once a second."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import pytest
from channels.layers import get_channel_layer

from mercury.channel_layer import LocalChannelLayer


@pytest.mark.skipif(bool(os.environ.get("REDIS_URL")), reason="the embedded default: no REDIS_URL")
def test_it_is_the_default_without_redis() -> None:
    assert type(get_channel_layer()) is LocalChannelLayer


async def test_a_group_send_reaches_every_member_in_order_and_a_full_one_holds_up_nobody() -> None:
    layer = LocalChannelLayer(capacity=2)
    a, b, full = [await layer.new_channel() for _ in range(3)]
    for channel in (a, b, full):
        await layer.group_add("game-1", channel)
    await layer.group_add("game-2", a)
    await layer.send(full, {"type": "x", "n": -2})
    await layer.send(
        full, {"type": "x", "n": -1}
    )  # at capacity: group sends to it are dropped, as channels' are
    for n in range(2):
        await layer.group_send("game-1", {"type": "x", "n": n})
    assert [(await layer.receive(a))["n"] for _ in range(2)] == [0, 1]
    assert [(await layer.receive(b))["n"] for _ in range(2)] == [0, 1]
    assert [(await layer.receive(full))["n"] for _ in range(2)] == [-2, -1]
    await layer.group_send("game-3", {"type": "x"})  # nobody listens: nothing happens
    message = {"type": "x", "items": [1]}
    await layer.group_send("game-2", message)
    got = await layer.receive(a)
    assert (
        got == message and got is not message and got["items"] is not message["items"]
    )  # a copy, as channels'


async def test_a_thread_outside_the_loop_sends_without_waiting_and_its_messages_keep_their_order() -> None:
    layer = LocalChannelLayer()
    page = await layer.new_channel()
    await layer.group_add("game-1", page)
    loop = asyncio.get_running_loop()

    def drive() -> None:  # a drive thread: it never runs the loop's code itself
        for n in range(50):
            layer.group_send_soon(loop, "game-1", {"type": "game.stream", "n": n})

    sender = threading.Thread(target=drive)
    sender.start()
    sender.join()  # returned before the loop sent anything: the sends wait for the loop's next turn
    assert page not in layer.channels
    assert [(await layer.receive(page))["n"] for _ in range(50)] == list(range(50))
    with pytest.raises(TypeError):
        layer.group_send_soon(loop, "bad group name!", {"type": "x"})


async def test_expired_messages_and_memberships_still_go(monkeypatch: Any) -> None:
    layer = LocalChannelLayer(expiry=0.05, group_expiry=1)
    gone, stays = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("game-1", gone)
    await layer.send(gone, {"type": "x"})  # never read: it expires, and its channel leaves the group
    await layer.group_send("game-0", {"type": "w"})  # a walk for expired messages: none yet
    await asyncio.sleep(0.1)
    await layer.group_add("game-1", stays)
    await layer.group_send("game-1", {"type": "y"})  # the last walk was at the first send: not yet another
    assert gone in layer.groups["game-1"]
    monkeypatch.setattr(LocalChannelLayer, "CLEAN_INTERVAL", 0.0)
    await layer.group_send("game-1", {"type": "z"})
    assert gone not in layer.groups["game-1"] and stays in layer.groups["game-1"]
    assert [(await layer.receive(stays))["type"] for _ in range(2)] == ["y", "z"]
