"""Class benchmark (issue #67): whole classes at once, each of 30 students in 10 groups of 3 sharing a Mercury game,
every student and teacher a real HTTP + websocket client, students at a human pace.

    .venv/bin/python bench/class_room.py --setup embedded|scaled [--classes 1] [--students 30] [--per-group 3]
                                         [--think 8] [--window 120] [--json FILE] [--database-url URL]
                                         [--redis-url URL] [--token-rate 30]

Per run, from scratch (a fresh database and fresh processes, as bench/load.py makes them): a teacher per class opens
a session over HTTP (*Students per game* 3, seats drawn), its students join with the code over HTTP and wait on the
waiting page, the teacher starts it, and each student opens their group's game page and its websocket and plays
their own seat as bench/load.py's student does (first choices, a short message in talks, yes votes), reading and
typing for T/2 to 3T/2 seconds (--think) before each move; the teacher keeps the live room open (its websocket).
After a settling time, a window of --window seconds is measured:

- move to every screen: for each student move the group sees (Rounds 1 and 3; a Round 2 talk is private), from
  sending it over the game's websocket to the moment the last of the group's other students has a frame showing the
  game at that move's version or later (every screen of the group, not only the mover's, has it); p50, p99 and max, and moves some other screen did not show within 10 s;
- games kept moving: games with no error whose version advanced at least once in every --stall seconds of the
  window (students' own thinking is included: a group waits on its slowest student, as in class);
- errors by kind (a status other than 200/302/409, a socket closed, an exception), for students and teachers.

Figures go to stdout and, with --json, as one JSON line per run; docs/benchmarks.md keeps the current figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.http_games import CSRF, HX_CSRF, SetUp, _panels, percentile, revision  # noqa: E402
from bench.load import DEFAULT_PG_URL, DEFAULT_REDIS_URL, Student, configure, fresh_database  # noqa: E402

GAME_PATH = re.compile(r"/games/(\d+)/$")
SHOWN_WITHIN = 10.0  # seconds: a move no other screen showed by then counts as not shown
PLAY_FORM = '/play/"'  # the waiting page's button once the session runs
SESSION_URL = re.compile(r"/classes/(\d+)/")


@dataclass
class ClassStudent(Student):
    """A student of a class: joins with the code, waits for the group's game, plays their seat in it. Records when
    each move was sent (and at which game version) and when each version first reached their screen."""

    code: str = ""
    session_id: int = 0
    # (sent at, version the move answered, whether the group sees it: not a Round 2 private talk's move)
    sent_moves: list[tuple[float, int, bool]] = field(default_factory=list)
    status: str = ""  # the game's phase on the newest panels the student was shown
    first_seen: dict[int, float] = field(default_factory=dict)  # version -> when a frame first showed it
    reviewed: bool = False  # the game reached its review

    def _take(self, text: str) -> None:
        super()._take(text)
        shown = _panels(text)
        if shown is not None and shown[2] not in self.first_seen:
            self.first_seen[shown[2]] = time.time()
        self.reviewed = self.reviewed or (shown is not None and shown[0] == "review")
        if shown is not None and shown[2] >= max(self.first_seen, default=0):
            self.status = shown[1]

    async def _play(self, session: aiohttp.ClientSession, stop: asyncio.Event) -> None:
        referer = {"Referer": self.base + "/"}
        status, _, url = await self._post_from_lobby(session, "/join/", {"code": self.code})
        if status != 200:
            raise RuntimeError(f"join answered {status} at {url}")
        while not stop.is_set():  # the waiting page, as its no-JavaScript refresh asks again
            _, waiting, _ = await self._request(session, "GET", f"/classes/{self.session_id}/wait/")
            play = CSRF.search(waiting) if PLAY_FORM in waiting else None
            if play is not None:  # started: its button leads to the group's game
                status, page, url = await self._request(
                    session, "POST", f"/classes/{self.session_id}/play/", headers=referer,
                    data={"csrfmiddlewaretoken": play.group(1)},
                )  # fmt: skip
                found = GAME_PATH.search(url)
                if status != 200 or found is None:
                    raise RuntimeError(f"the session's game answered {status} at {url}")
                self.game = int(found.group(1))
                break
            await asyncio.sleep(1.0)
        else:
            return
        self._take(page)
        hx_token = HX_CSRF.search(page)
        if hx_token is None:
            raise RuntimeError("the game page has no CSRF header")
        headers = {"HX-Request": "true", "HX-Target": "panels", "X-CSRFToken": hx_token.group(1), **referer}
        self.doing = "websocket connect"
        async with session.ws_connect(f"{self.base}/ws/games/{self.game}/", headers={"Origin": self.base},
                                      max_msg_size=0) as ws:  # fmt: skip
            inbox: asyncio.Queue[tuple[float, aiohttp.WSMessage | Exception]] = asyncio.Queue()
            reader = asyncio.create_task(self._read(ws, inbox))
            sender = ws.send_str

            async def noted(data: str, compress: int | None = None) -> None:  # a move: when, at which version
                shown = max(self.first_seen, default=0)
                self.sent_moves.append((time.time(), shown, not self.status.startswith("ROUND_2")))
                await sender(data, compress)

            ws.send_str = noted  # type: ignore[method-assign]
            try:
                await self._answer(session, ws, stop, inbox, _panels(page), headers)
            finally:
                reader.cancel()


async def teacher_opens(base: str, key: str, students: int, per_group: int) -> int:
    """The teacher's new session over HTTP: its id."""
    jar = aiohttp.CookieJar(unsafe=True)
    jar.update_cookies({"sessionid": key})
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        async with http.get(f"{base}/classes/new/") as r:
            form = await r.text()
        token = CSRF.search(form)
        if token is None:
            raise RuntimeError("the teacher has no new-session form")
        data = {"csrfmiddlewaretoken": token.group(1), "scenario": "mercury", "title": "Bench class",
                "max_students": students, "students_per_group": per_group, "model": "default"}  # fmt: skip
        async with http.post(f"{base}/classes/new/", data=data, headers={"Referer": base + "/"}) as r:
            found = SESSION_URL.search(str(r.url))
            if r.status != 200 or found is None:
                raise RuntimeError(f"opening a session answered {r.status} at {r.url}")
            return int(found.group(1))


@dataclass
class Teacher:
    base: str
    key: str
    session_id: int
    errors: list[str] = field(default_factory=list)
    room_frames: int = 0

    async def run(self, joined: Any, stop: asyncio.Event) -> None:
        """Keeps the live room open; starts the session once every student has joined."""
        jar = aiohttp.CookieJar(unsafe=True)
        jar.update_cookies({"sessionid": self.key})
        try:
            async with aiohttp.ClientSession(cookie_jar=jar) as http:
                async with http.get(f"{self.base}/classes/{self.session_id}/") as r:
                    room = await r.text()
                async with http.ws_connect(f"{self.base}/ws/classes/{self.session_id}/",
                                           headers={"Origin": self.base}) as ws:  # fmt: skip
                    reader = asyncio.create_task(self._read(ws))
                    await joined()
                    token = CSRF.search(room)
                    data = {"csrfmiddlewaretoken": token.group(1) if token else ""}
                    async with http.post(f"{self.base}/classes/{self.session_id}/start/", data=data,
                                         headers={"Referer": self.base + "/"}) as r:  # fmt: skip
                        if r.status != 200:
                            self.errors.append(f"start answered {r.status}")
                    await stop.wait()
                    reader.cancel()
        except Exception as exc:  # noqa: BLE001 - every failure is a figure
            self.errors.append(f"{type(exc).__name__}: {str(exc)[:120]}")

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for message in ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                self.errors.append(f"room socket closed ({message.type.name})")
                return
            self.room_frames += 1


def session_code(session_id: int) -> str:
    from django.db import connections

    from simulations.models import ClassSession

    code = ClassSession.objects.get(pk=session_id).code
    connections.close_all()
    return code


def make_teachers(keys: list[str]) -> None:
    """The last users made by fresh_database teach: staff in the Teachers group."""
    from django.contrib.auth.models import Group, User
    from django.contrib.sessions.models import Session
    from django.db import connections

    teachers, _ = Group.objects.get_or_create(name="Teachers")
    for key in keys:
        user = User.objects.get(pk=Session.objects.get(session_key=key).get_decoded()["_auth_user_id"])
        user.is_staff = True
        user.save(update_fields=["is_staff"])
        user.groups.add(teachers)
    connections.close_all()


def move_to_screens(students: list[ClassStudent], opened: float, closed: float) -> tuple[list[float], int]:
    """Per move sent in the window (up to SHOWN_WITHIN seconds before it closes): seconds until every other student
    of the group showed its version or later, and the count of moves some other screen did not show within
    SHOWN_WITHIN seconds (a refused move, which makes no version, counts here too)."""
    by_game: dict[int, list[ClassStudent]] = {}
    for s in students:
        by_game.setdefault(s.game, []).append(s)
    delays, missing = [], 0
    for s in students:
        others = [o for o in by_game.get(s.game, []) if o is not s]
        for sent, version, public in s.sent_moves:
            if not public or not opened <= sent <= closed - SHOWN_WITHIN or not others:
                continue
            reached = []
            for other in others:
                later = [at for v, at in other.first_seen.items() if v > version and at >= sent]
                if later:
                    reached.append(min(later))
            if len(reached) < len(others) or max(reached) - sent > SHOWN_WITHIN:
                missing += 1
            else:
                delays.append(max(reached) - sent)
    return delays, missing


def kept_moving(
    students: list[ClassStudent], opened: float, closed: float, stall: float
) -> tuple[int, int, list[float]]:
    """(games that advanced at least once every `stall` seconds of the window, or reached the review; games; each
    game's longest wait in the window for a new version, in seconds)."""
    games: dict[int, list[ClassStudent]] = {}
    for s in students:
        if s.game:
            games.setdefault(s.game, []).append(s)
    moving, longest = 0, list[float]()
    for group in games.values():
        seen: dict[int, float] = {}
        for s in group:
            for v, at in s.first_seen.items():
                seen[v] = min(at, seen.get(v, at))
        times = sorted(at for at in seen.values() if opened <= at <= closed)
        marks = [opened, *times, closed]
        wait = (
            0.0
            if any(s.reviewed for s in group)
            else max(b - a for a, b in zip(marks, marks[1:], strict=False))
        )
        longest.append(round(wait, 1))
        if wait <= stall and not any(s.errors for s in group):
            moving += 1
    return moving, len(games), longest


def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-class-"))
    env = configure(args, tmp)
    import django

    django.setup()
    total = args.classes * args.students
    keys = fresh_database(args, tmp, total + args.classes)
    teacher_keys, student_keys = keys[total:], keys[:total]
    make_teachers(teacher_keys)
    setup = SetUp(args.setup, env, tmp, args.worker_threads, web=args.web, workers=args.workers)
    try:
        students: list[ClassStudent] = []
        teachers: list[Teacher] = []

        async def main() -> tuple[float, float]:
            stop = asyncio.Event()
            tasks = []
            for c in range(args.classes):
                session_id = await teacher_opens(setup.base, teacher_keys[c], args.students, args.per_group)
                code = await asyncio.get_running_loop().run_in_executor(None, session_code, session_id)
                mine = [
                    ClassStudent(
                        setup.base,
                        key,
                        "",
                        think=args.think,
                        rng=random.Random(n),
                        code=code,
                        session_id=session_id,
                    )  # fmt: skip
                    for n, key in enumerate(student_keys[c * args.students : (c + 1) * args.students])
                ]
                students.extend(mine)
                teacher = Teacher(setup.base, teacher_keys[c], session_id)
                teachers.append(teacher)

                async def everyone_joined(group: list[ClassStudent] = mine) -> None:
                    while not all(s.http and s.doing.startswith("GET /classes") for s in group):
                        if any(s.errors for s in group):
                            return
                        await asyncio.sleep(0.5)

                tasks.append(asyncio.create_task(teacher.run(everyone_joined, stop)))
                for s in mine:
                    tasks.append(asyncio.create_task(s.play(stop)))
                    await asyncio.sleep(args.ramp / max(1, total))
            await asyncio.sleep(args.settle)
            opened = time.time()
            await asyncio.sleep(args.window)
            closed = time.time()
            stop.set()
            await asyncio.wait(tasks, timeout=30)
            for task in tasks:
                task.cancel()
            return opened, closed

        opened, closed = asyncio.run(main())
    finally:
        setup.stop()
    delays, missing = move_to_screens(students, opened, closed)
    moving, games, longest = kept_moving(students, opened, closed, args.stall)
    errors: dict[str, int] = {}
    for s in students:
        for _, e in s.errors:
            errors[e.split(":")[0]] = errors.get(e.split(":")[0], 0) + 1
    for t in teachers:
        for e in t.errors:
            errors["teacher " + e.split(":")[0]] = errors.get("teacher " + e.split(":")[0], 0) + 1
    for message in sorted(
        {e for s in students for _, e in s.errors} | {e for t in teachers for e in t.errors}
    ):
        print(
            f"error: {message}", file=sys.stderr
        )  # each kind's words, to look into (the figures count kinds)
    return {
        "setup": args.setup, "classes": args.classes, "students": total, "per_group": args.per_group,
        "think_s": args.think, "window_s": args.window, "games": games, "kept_moving": moving, "longest_waits_s": longest,
        "moves": len(delays) + missing, "moves_not_shown": missing,
        "move_to_screens_p50_s": round(percentile(delays, 50), 3) if delays else None,
        "move_to_screens_p99_s": round(percentile(delays, 99), 3) if delays else None,
        "move_to_screens_max_s": round(max(delays), 3) if delays else None,
        "room_frames": sum(t.room_frames for t in teachers), "errors": errors,
        "machine": f"{platform.machine()} {platform.python_version()}", "revision": revision(),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", choices=("embedded", "scaled"), default="embedded")
    parser.add_argument("--classes", type=int, default=1)
    parser.add_argument("--students", type=int, default=30, help="students per class")
    parser.add_argument("--per-group", type=int, default=3)
    parser.add_argument("--think", type=float, default=8.0, help="mean seconds a student takes over a move")
    parser.add_argument("--window", type=float, default=120.0)
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--ramp", type=float, default=10.0)
    parser.add_argument("--stall", type=float, default=30.0)
    parser.add_argument("--token-rate", type=float, default=30.0)
    parser.add_argument("--worker-threads", type=int, default=64)
    parser.add_argument("--web", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--database-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = run(args)
    print(json.dumps(report))
    if args.json:
        with args.json.open("a") as out:
            out.write(json.dumps(report) + "\n")
    return 0 if not report["errors"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
