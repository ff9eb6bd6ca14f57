"""The channel layer as configured: on Redis, a page that waits a long while between turns keeps its socket.

A consumer's receive is channels_redis's blocking pop of up to 5 s, over and over; redis-py 8 gives each socket
read a 5 s time-out by default, so an idle page's receive could fail with "Timeout reading" and its socket close
(found by tests/reliability/test_school.py). Runs where REDIS_URL is set (CI's second leg).
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from channels.layers import get_channel_layer

pytestmark = [
    pytest.mark.configured,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)"),
]


async def test_a_receive_that_waits_through_several_blocking_pops_gets_the_message() -> None:
    layer = get_channel_layer()
    assert type(layer).__name__ == "BatchedRedisChannelLayer"  # the default (mercury/channel_layer.py)
    channel = await layer.new_channel()

    async def send_later() -> None:
        await asyncio.sleep(12)  # two and a half of channels_redis's 5 s pops
        await layer.send(channel, {"type": "game.advanced", "n": 1})

    sender = asyncio.create_task(send_later())
    message = await asyncio.wait_for(layer.receive(channel), timeout=30)
    await sender
    assert message == {"type": "game.advanced", "n": 1}


def test_a_worker_threads_messages_arrive_in_order_over_one_redis_connection() -> None:
    """A driver in a worker process sends from plain threads (no event loop): each thread keeps one connection
    for its messages (`group_send_blocking`) instead of opening one each (async_to_sync's fresh loop: about 3 ms
    of CPU a streamed frame), and they arrive in the order they were sent."""
    import threading

    import redis
    from asgiref.sync import async_to_sync

    from simulations.services.pages.broadcast import send_to_game

    layer = get_channel_layer()
    server = redis.Redis.from_url(os.environ["REDIS_URL"])
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)("game-424242", channel)
    opened = server.info("stats")["total_connections_received"]

    def drive() -> None:
        for n in range(40):
            send_to_game(424242, {"type": "game.stream", "n": n})

    worker = threading.Thread(target=drive)
    worker.start()
    worker.join()
    assert server.info("stats")["total_connections_received"] - opened <= 2  # was one a message

    async def receive_all() -> list[int]:
        return [(await layer.receive(channel))["n"] for _ in range(40)]

    assert async_to_sync(receive_all)() == list(range(40))


def test_the_pub_sub_layer_carries_a_worker_threads_messages_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """MERCURY_CHANNEL_LAYER=channels_redis.pubsub.RedisPubSubChannelLayer (docs/deploying.md, the settings): a page
    subscribed to its game's group gets a worker thread's messages, in order, and a game nobody watches gets none."""
    import threading

    from asgiref.sync import async_to_sync
    from channels_redis.pubsub import RedisPubSubChannelLayer

    from simulations.services.pages import broadcast

    layer = RedisPubSubChannelLayer(hosts=[{"address": os.environ["REDIS_URL"]}])
    monkeypatch.setattr(broadcast, "get_channel_layer", lambda: layer)

    async def watch() -> list[int]:
        channel = await layer.new_channel()
        await layer.group_add("game-424243", channel)

        def drive() -> None:
            for n in range(20):
                for game in (424243, 424244):
                    broadcast.send_to_game(game, {"type": "game.stream", "n": n})
            broadcast._thread_loop().close()  # the thread's connections go with its loop (a worker keeps them)

        worker = threading.Thread(target=drive)
        worker.start()
        got = [(await asyncio.wait_for(layer.receive(channel), timeout=10))["n"] for _ in range(20)]
        worker.join()
        await asyncio.sleep(0.2)
        assert layer.channels[channel].empty()  # nothing from the other game
        await layer.flush()
        return got

    assert async_to_sync(watch)() == list(range(20))


def _batched_layer() -> Any:
    from mercury.channel_layer import BatchedRedisChannelLayer

    return BatchedRedisChannelLayer(
        hosts=[{"address": os.environ["REDIS_URL"]}], prefix=f"batch-test-{os.getpid()}"
    )


def test_the_batched_layer_delivers_every_pages_messages_in_order_in_few_round_trips() -> None:
    """mercury.channel_layer: a process's messages come off Redis many per round trip (channels_redis takes one
    per four), and each page still gets exactly its own, in order."""
    from asgiref.sync import async_to_sync

    async def watch() -> tuple[dict[str, list[int]], int]:
        layer = _batched_layer()
        takes = 0
        take = layer._take

        async def counted(channel: str) -> None:
            nonlocal takes
            takes += 1
            await take(channel)

        layer._take = counted
        pages = {game: await layer.new_channel() for game in ("g1", "g2", "g3")}
        for game, channel in pages.items():
            await layer.group_add(game, channel)
        for n in range(30):
            for game in pages:
                await layer.group_send(game, {"type": "game.stream", "n": n})
        got = {
            game: [(await layer.receive(channel))["n"] for _ in range(30)] for game, channel in pages.items()
        }
        await layer.flush()
        return got, takes

    got, took = async_to_sync(watch)()
    assert got == {game: list(range(30)) for game in ("g1", "g2", "g3")}
    assert took == 1  # 90 messages, one round trip (channels_redis: four round trips each)


def test_a_page_that_leaves_while_it_reads_for_the_process_loses_no_other_pages_message() -> None:
    """The page whose receive is reading Redis for the whole process disconnects (its receive is cancelled) after
    Redis gave out the messages and before they were read off the socket: the read goes on, and what it took
    reaches the other pages."""
    from asgiref.sync import async_to_sync

    async def watch() -> dict[str, Any]:
        layer = _batched_layer()
        connect = layer.connection

        class SlowAnswers:  # Redis pops at once; its answer reaches the process 0.5 s later
            def __init__(self, connection: Any) -> None:
                self.connection = connection

            def __getattr__(self, name: str) -> Any:
                return getattr(self.connection, name)

            async def zpopmin(self, *args: Any) -> Any:
                popped = await self.connection.zpopmin(*args)
                await asyncio.sleep(0.5)
                return popped

        layer.connection = lambda index: SlowAnswers(connect(index))
        leaving, staying = await layer.new_channel(), await layer.new_channel()
        await layer.group_add("game-a", staying)
        await layer.group_send("game-a", {"type": "game.advanced", "n": 7})
        reading = asyncio.create_task(layer.receive(leaving))  # first in: it takes the read
        await asyncio.sleep(0.2)
        waiting = asyncio.create_task(layer.receive(staying))
        await asyncio.sleep(0.1)
        reading.cancel()  # popped from Redis, not yet delivered
        message = await asyncio.wait_for(waiting, timeout=10)
        await layer.flush()
        return dict(message)

    assert async_to_sync(watch)() == {"type": "game.advanced", "n": 7}


def test_a_group_send_reaches_every_member_in_two_round_trips_and_keeps_channels_redis_rules() -> None:
    """mercury.channel_layer's group send: every member of the group gets the message (pages of two processes
    and a plain channel), a member whose queue is full is skipped without holding up the others, expired
    messages do not count against a queue's room, and it costs two round trips (channels_redis's: four)."""
    from asgiref.sync import async_to_sync

    async def watch() -> tuple[list[Any], int, int]:
        first, second, third = _batched_layer(), _batched_layer(), _batched_layer()  # three processes
        for layer in (first, second, third):
            layer.capacity = 2
        one, two, plain, full = (
            await first.new_channel(),
            await second.new_channel(),
            "plain-page",
            await third.new_channel(),
        )
        for channel in (one, two, plain, full):
            await first.group_add("game-7", channel)
        # the full page's queue (its process's key) holds two unread messages; the plain page's queue one message
        # and one long expired, which is dropped before its room is counted
        await third.send(full, {"type": "filler", "n": 1})
        await third.send(full, {"type": "filler", "n": 2})
        await first.connection(0).zadd(first.prefix + plain, {b"old": 1.0})  # scored in 1970
        await first.send(plain, {"type": "filler", "n": 3})

        from mercury.channel_layer import GROUP_SEND_LUA

        await first.connection(0).script_load(GROUP_SEND_LUA)  # as after any earlier send: sent by its hash
        round_trips = await _round_trips(first, first.group_send("game-7", {"type": "game.advanced", "n": 9}))
        # Read before any receive, which takes a process's whole queue into its buffer at once.
        queued = await third.connection(0).zcard(third.prefix + full.split("!")[0] + "!")
        got = [
            await first.receive(one),
            await second.receive(two),
            await first.receive(plain),  # the filler first, then the group's message
            await first.receive(plain),
            await third.receive(full),
            await third.receive(full),
        ]
        await first.flush()
        return got, round_trips, queued

    got, round_trips, queued = async_to_sync(watch)()
    assert got == [
        {"type": "game.advanced", "n": 9},
        {"type": "game.advanced", "n": 9},
        {"type": "filler", "n": 3},
        {"type": "game.advanced", "n": 9},
        {"type": "filler", "n": 1},
        {"type": "filler", "n": 2},
    ]
    assert round_trips == 2
    assert queued == 2  # the full page's two fillers and nothing more: the group's message did not fit


@pytest.mark.parametrize("sender_kind", ["coroutine", "blocking thread"])
def test_a_group_send_to_members_it_knows_is_one_round_trip_and_sees_every_change(sender_kind: str) -> None:
    """Once a layer has read a group's members, its next send to the group is one round trip (a script that adds
    the message only if the members are still those). A page that joins or leaves meanwhile, in another process,
    is seen by the next send, which reaches exactly the members then (in two round trips); a full queue is
    skipped on that path as on the other. The same from a thread without an event loop (a worker's drive thread,
    `group_send_blocking`), sending from one of two threads in turn (each has its own connection)."""
    from asgiref.sync import async_to_sync

    threads = [ThreadPoolExecutor(max_workers=1) for _ in range(2)]

    async def watch() -> tuple[list[int], list[int], list[Any], list[Any]]:
        sender, first, second = _batched_layer(), _batched_layer(), _batched_layer()  # three processes
        one, two = await first.new_channel(), await second.new_channel()
        await first.group_add("game-10", one)
        sent = []
        for n, change in enumerate([None, None, ("add", two), ("discard", one), ("full", None)], start=1):
            if change and change[0] == "add":
                await second.group_add("game-10", change[1])
            elif change and change[0] == "discard":
                await first.group_discard("game-10", change[1])
            elif change:
                sender.capacity = 2  # the second page's queue holds two unread messages: no room for this one
            message = {"type": "game.advanced", "n": n}
            if sender_kind == "coroutine":
                sent.append(await _round_trips(sender, sender.group_send("game-10", message)))
            else:
                thread = threads[n % 2]
                sent.append(
                    await asyncio.wrap_future(
                        thread.submit(_blocking_round_trips, sender, "game-10", message)
                    )
                )
        queued = [await first.connection(0).zcard(_process_key(first, one)),
                  await second.connection(0).zcard(_process_key(second, two))]  # fmt: skip
        got_one = [(await first.receive(one))["n"] for _ in range(3)]
        got_two = [(await second.receive(two))["n"] for _ in range(2)]
        for layer in (sender, first, second):
            await layer.flush()
        return sent, queued, got_one, got_two

    sent, queued, got_one, got_two = async_to_sync(watch)()
    for thread in threads:
        thread.shutdown()
    # the first send reads the members (two round trips); a change costs the send that finds it one more
    assert sent == [2, 1, 2, 2, 1]
    assert queued == [3, 2]  # nothing beyond what each got below: the left page's 4th, the full page's 5th
    assert got_one == [1, 2, 3]
    assert got_two == [3, 4]


def _counting(found: Any, tally: list[int], *, awaited: bool) -> Any:
    """`found` wrapped to count one round trip in `tally[0]` a call (`awaited`: it is a coroutine function)."""
    if not awaited:

        def call(*args: Any, **kwargs: Any) -> Any:
            tally[0] += 1
            return found(*args, **kwargs)

        return call

    async def call_awaited(*args: Any, **kwargs: Any) -> Any:
        tally[0] += 1
        return await found(*args, **kwargs)

    return call_awaited


class _Counted:
    """A Redis client whose commands, and pipeline executions, each count one round trip in `tally[0]`
    (`awaited`: an asyncio client's, whose commands are coroutines)."""

    def __init__(self, client: Any, tally: list[int], *, awaited: bool) -> None:
        self.client, self.tally, self.awaited = client, tally, awaited

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.client, name)
        if name == "pipeline":
            return lambda **kw: _CountedPipe(found(**kw), self.tally, awaited=self.awaited)
        if not callable(found):
            return found
        return _counting(found, self.tally, awaited=self.awaited)


class _CountedPipe:
    """A pipeline whose `execute` counts one round trip; its queued commands cost none."""

    def __init__(self, pipe: Any, tally: list[int], *, awaited: bool) -> None:
        self.pipe = pipe
        self.execute = _counting(pipe.execute, tally, awaited=awaited)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pipe, name)


async def _round_trips(layer: Any, send: Any) -> int:
    """Redis round trips `send` (a coroutine of `layer`) takes: each command or pipeline execution is one."""
    tally = [0]
    connect = layer.connection
    layer.connection = lambda index: _Counted(connect(index), tally, awaited=True)
    try:
        await send
    finally:
        layer.connection = connect
    return tally[0]


def _blocking_round_trips(layer: Any, group: str, message: dict[str, Any]) -> int:
    """Redis round trips `layer.group_send_blocking` takes in this thread (it must send: True)."""
    tally = [0]
    clients = layer._blocking_client
    layer._blocking_client = lambda index: _Counted(clients(index), tally, awaited=False)
    try:
        assert layer.group_send_blocking(group, message) is True
    finally:
        del layer._blocking_client
    return tally[0]


def test_a_blocking_group_send_to_a_group_without_members_sends_nothing() -> None:
    """A drive's frames for a game nobody watches: one round trip, nothing queued anywhere."""
    import redis

    layer = _batched_layer()
    server = redis.Redis.from_url(os.environ["REDIS_URL"])
    assert _blocking_round_trips(layer, "game-unwatched", {"type": "game.stream", "n": 1}) == 1
    assert _blocking_round_trips(layer, "game-unwatched", {"type": "game.stream", "n": 2}) == 1
    assert server.keys(layer.prefix + "*") == []


def _process_key(layer: Any, channel: str) -> str:
    """The Redis key of the process queue a page's channel is read from."""
    return str(layer.prefix + channel.split("!")[0] + "!")


@pytest.mark.parametrize("sender_kind", ["coroutine", "blocking thread"])
def test_a_group_send_works_after_redis_forgot_its_scripts(sender_kind: str) -> None:
    """A restarted Redis knows no scripts: the group send sends the script whole once, then by its hash again
    (from a drive thread's blocking connection too)."""
    import redis
    from asgiref.sync import async_to_sync

    async def watch() -> list[Any]:
        layer = _batched_layer()
        page = await layer.new_channel()
        await layer.group_add("game-8", page)
        redis.Redis.from_url(os.environ["REDIS_URL"]).script_flush()
        for n in (1, 2):
            message = {"type": "game.advanced", "n": n}
            if sender_kind == "coroutine":
                await layer.group_send("game-8", message)
            else:
                assert await asyncio.to_thread(layer.group_send_blocking, "game-8", message)
        got = [(await layer.receive(page))["n"], (await layer.receive(page))["n"]]
        await layer.flush()
        return got

    assert async_to_sync(watch)() == [1, 2]
