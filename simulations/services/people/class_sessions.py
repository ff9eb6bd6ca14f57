"""Class sessions: a teacher opens one on a scenario version, students join with its short code, the teacher
starts it, each student plays their own game of it, the teacher watches every game and reads the class's results
(class_results.py).

A session's games are found, not linked: its members' games of its scenario version made while it ran. So every
kind's own start (a negotiation's seat choice, a deliberation's or Message Lab's set-up form) serves a class
unchanged, and a game stays its student's: the teacher reads it, nobody else does.

With `students_per_group` above one (a kind whose games seat several students: the negotiation, the code-review
committee), starting the session makes the groups' games: its members in the order they joined, that many a game,
each student in a seat drawn at random, the AI in the rest. The first of a group owns the game, the others hold seats in it
(services/ledger/seats.py); a student who joins later plays a game of their own."""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.crypto import salted_hmac

from simulations.kinds import Actor, NextStep, get_kind
from simulations.models import (
    ClassGuest,
    ClassMember,
    ClassSession,
    Game,
    GameSeat,
    ScenarioVersion,
)
from simulations.services.ledger.seats import hand_to_ai
from simulations.services.ledger.turns import create_game
from simulations.services.pages.broadcast import notify_class_changed, send_to_game
from simulations.services.pages.presence import present
from simulations.services.people.access import TEACHERS
from simulations.services.play.drive_queue import queue_drive_if_ai_next
from simulations.services.policy.message_text import FIELD_SENTENCES, UnreadableText, normalise_line
from simulations.services.policy.rate_limit import check_limit

# No 0/O, 1/I/L: a code read aloud or copied from a projector is typed right.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6


class JoinRefused(Exception):
    """A join the session does not take; the message is the sentence for the student."""

    UNKNOWN = "No class session has this code: check it with your teacher (letters and digits, no spaces)."
    RETURN = "No student of this session has that return code: check both codes, or ask your teacher."
    ENDED = "This class session has ended."
    FULL = "This class session is full: ask your teacher."
    TEACHER = "You are this session's teacher: open it from your sessions."
    NAME = f"Write your name as your teacher will know it (at most {60} characters)."


def may_teach(user: User | AnonymousUser) -> bool:
    """Teachers (the Teachers group) and staff open class sessions."""
    return bool(user.is_authenticated and (user.is_staff or user.groups.filter(name=TEACHERS).exists()))


def teaches(user: User | AnonymousUser, session: ClassSession) -> bool:
    """The session's own teacher, or an admin."""
    return bool(user.is_authenticated and (session.teacher_id == user.pk or user.is_superuser))


class GroupsRefused(ValueError):
    """Groups the scenario cannot seat; the message is the sentence for the teacher's form."""


def group_seats(version: ScenarioVersion) -> list[str]:
    """The seats students may take in a group's game: the scenario's seats (a kind that lists them: the
    negotiation's delegations, the committee's proposer and members), none for a kind whose games seat one student."""
    return list(version.roles.order_by("position").values_list("role_id", flat=True))


def open_session(
    *,
    teacher: User,
    version: ScenarioVersion,
    title: str,
    max_students: int,
    model: str = "",
    students_per_group: int = 1,
    turn_seconds: int | None = None,
    seats: Sequence[str] = (),
    results_shared: bool = False,
    token_budget: int | None = None,
    students_choose: bool = False,
) -> ClassSession:
    """Precondition: `may_teach(teacher)`, `version` listed. A new session waiting for students, with a fresh code.
    Raises GroupsRefused for groups of more students than the scenario has seats (or any, if it has none)."""
    available = group_seats(version)
    if students_per_group > 1 and students_per_group > len(available):
        raise GroupsRefused(
            f"This scenario seats {len(available)} students in one game at most: choose fewer students per game."
            if len(available) > 1 else "In this scenario each student plays their own game: choose one student per game."
        )  # fmt: skip
    as_written = {seat.lower(): seat for seat in available}  # "can" is CAN; "Security" is security
    seats = [as_written.get(seat.lower(), seat) for seat in seats]
    unknown = [seat for seat in seats if seat not in available]
    if unknown or len(set(seats)) != len(seats):
        raise GroupsRefused(f"Seats are this scenario's, each once: {', '.join(available)}.")
    if seats and len(seats) < students_per_group:
        raise GroupsRefused(f"Name a seat for each student of a group: {students_per_group} at least.")
    for _ in range(20):
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        try:
            with transaction.atomic():
                return ClassSession.objects.create(
                    teacher=teacher, scenario=version, title=title.strip() or version.title, code=code,
                    max_students=max_students, model=model, students_per_group=students_per_group,
                    turn_seconds=turn_seconds, seat_list=",".join(seats), results_shared=results_shared,
                    token_budget=token_budget, students_choose=students_choose and not seats,
                )  # fmt: skip
        except IntegrityError:
            continue  # that code is taken: draw another
    raise RuntimeError("no free join code after 20 draws")


def normalised_code(code: str) -> str:
    return "".join(code.split()).upper().replace("-", "")


def join(*, user: User, code: str) -> ClassSession:
    """The session the student joins (again, if already a member: joining twice is harmless). Every attempt counts
    against the user's rate of join attempts, so codes cannot be guessed by trying. Raises JoinRefused, RateLimited."""
    check_limit(action="join", subject=str(user.pk))
    session = ClassSession.objects.filter(code=normalised_code(code)).first()
    if session is None:
        raise JoinRefused(JoinRefused.UNKNOWN)
    if session.teacher_id == user.pk:
        raise JoinRefused(JoinRefused.TEACHER)
    if ClassMember.objects.filter(session=session, student=user).exists():
        return session
    if session.status == ClassSession.Status.ENDED:
        raise JoinRefused(JoinRefused.ENDED)
    _admit(session, lambda locked: ClassMember.objects.get_or_create(session=locked, student=user))
    return session


def _admit(session: ClassSession, make_member: Callable[[ClassSession], object]) -> None:
    """`make_member` runs with the session's row locked, and only while it has room (JoinRefused.FULL)."""
    with transaction.atomic():
        locked = ClassSession.objects.select_for_update().get(pk=session.pk)
        if locked.members.count() >= locked.max_students:
            raise JoinRefused(JoinRefused.FULL)
        make_member(locked)
    notify_class_changed(session.pk)


GUEST_PREFIX = "guest-"  # a name-only student's account name: the prefix and random letters (never typed)
MAX_GUEST_NAME = 60


RETURN_LENGTH = 8  # 31**8 ≈ 8.5e11 codes, tried at most a few times per 15 minutes per address


def new_return_code() -> str:
    """A name-only student's return code, as shown ("K7P2-QXM4"): the session's alphabet, read without doubt."""
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(RETURN_LENGTH))
    return f"{raw[:4]}-{raw[4:]}"


def return_key(session: ClassSession, return_code: str) -> str:
    """What is kept of a return code: keyed with the site's secret and the session, so the database alone gives
    no code back and one code opens one session's guest only."""
    typed = "".join(ch for ch in return_code.upper() if ch.isalnum())
    return salted_hmac("class-return-code", f"{session.pk}:{typed}").hexdigest()


def join_as_guest(*, name: str, code: str, address: str) -> tuple[ClassSession, User, str]:
    """A student who joins with a name only: an account of the session's own (no password: it logs in only here),
    a member like any other, and the return code that lets them log in again (`return_as_guest`; shown to them
    once, kept only as a keyed hash). Attempts count against the address's join rate, like codes tried by the
    logged-in. Raises JoinRefused (also for a name with nothing readable), RateLimited."""
    check_limit(action="join", subject=f"address:{address}")
    try:
        name = normalise_line(name.strip())
    except UnreadableText as exc:
        raise JoinRefused(JoinRefused.NAME) from exc
    if len(name) > MAX_GUEST_NAME:
        raise JoinRefused(JoinRefused.NAME)
    session = ClassSession.objects.filter(code=normalised_code(code)).first()
    if session is None:
        raise JoinRefused(JoinRefused.UNKNOWN)
    if session.status == ClassSession.Status.ENDED:
        raise JoinRefused(JoinRefused.ENDED)
    user = User(username=GUEST_PREFIX + secrets.token_hex(8), first_name=name[:150])
    user.set_unusable_password()
    return_code = new_return_code()

    def make_guest(locked: ClassSession) -> None:
        user.save()
        key = return_key(locked, return_code)
        ClassGuest.objects.create(user=user, session=locked, name=name, return_key=key)
        ClassMember.objects.create(session=locked, student=user)

    _admit(session, make_guest)
    return session, user, return_code


def return_as_guest(*, code: str, return_code: str, address: str) -> tuple[ClassSession, User]:
    """A name-only student coming back (another browser, after logging out): the session's code and their return
    code give back their own account, and with it their game; also once the session has ended (their review).
    Tries count against the address's join rate. Raises JoinRefused, RateLimited."""
    check_limit(action="join", subject=f"address:{address}")
    session = ClassSession.objects.filter(code=normalised_code(code)).first()
    if session is None:
        raise JoinRefused(JoinRefused.UNKNOWN)
    guest = (
        ClassGuest.objects.select_related("user")
        .filter(session=session, return_key=return_key(session, return_code))  # never "": no old guest
        .first()
    )
    if guest is None:
        raise JoinRefused(JoinRefused.RETURN)
    return session, guest.user


def reissue_return_code(session: ClassSession, guest_id: int) -> tuple[str, str]:
    """A new return code for one of the session's name-only students, for the teacher to hand over (the old one
    stops working): (their name, the code). Raises ClassGuest.DoesNotExist for another session's guest."""
    guest = ClassGuest.objects.get(pk=guest_id, session=session)
    code = new_return_code()
    guest.return_key = return_key(session, code)
    guest.save(update_fields=["return_key"])
    return guest.name, code


def guest_session(user: User | AnonymousUser) -> int | None:
    """The class session a name-only student belongs to (None for everyone else)."""
    if not user.is_authenticated or not user.get_username().startswith(GUEST_PREFIX):
        return None
    return ClassGuest.objects.filter(user_id=user.pk).values_list("session_id", flat=True).first()


def display_name(user: User) -> str:
    """How the teacher's room names a student: a name-only student by the name they gave."""
    if user.get_username().startswith(GUEST_PREFIX) and user.first_name:
        return f"{user.first_name} (name only)"
    return user.get_username()


def start(session: ClassSession, *, seed: int | None = None) -> list[Game]:
    """The session runs; with groups, their games are made (returned), each drive queued. `seed`: the groups'
    first game's seed (the next get seed + 1, …; None: drawn), and the seats drawn from it."""
    if session.status != ClassSession.Status.WAITING:
        return []
    with transaction.atomic():
        session.status, session.started_at = ClassSession.Status.RUNNING, timezone.now()
        session.save(update_fields=["status", "started_at"])
        games = _group_games(session, secrets.randbelow(2**31) if seed is None else seed)
    give_budget(session)
    for game in games:
        queue_drive_if_ai_next(game)
    notify_class_changed(session.pk)
    return games


def give_budget(session: ClassSession) -> None:
    """The session's model budget on its games that have none yet (a group's at the start, a student's own as it
    begins)."""
    if session.token_budget:
        session_games(session).filter(token_budget__isnull=True).update(token_budget=session.token_budget)


def _group_games(session: ClassSession, seed: int) -> list[Game]:
    size = session.students_per_group
    if size <= 1:
        return []
    members = list(session.members.select_related("student").order_by("joined_at", "pk"))
    students = [m.student for m in members]
    chosen = [seat for seat in session.seat_list.split(",") if seat]
    seats = group_seats(session.scenario)
    games = []
    for n, first in enumerate(range(0, len(students), size)):
        group = students[first : first + size]
        # The teacher's seats in order, or the students' own wishes, or seats drawn at random from the scenario's.
        if chosen:
            taken = chosen[: len(group)]
        else:
            wishes = [m.wanted_seat if session.students_choose else "" for m in members[first : first + size]]
            taken = _seats_for(wishes, seats, random.Random(seed + n))
        games.append(
            create_game(
                scenario_version=session.scenario, seed=seed + n, owner=group[0], model=session.model or None,
                options={"seats": taken}, others=group[1:], session_id=session.pk,
            )
        )  # fmt: skip
    return games


def _seats_for(wishes: list[str], seats: list[str], draw: random.Random) -> list[str]:
    """Each student's wished seat where it is the scenario's and nobody before them in the group took it; the
    others drawn from the seats left."""
    taken: list[str] = []
    for wish in wishes:
        taken.append(wish if wish in seats and wish not in taken else "")
    left = [seat for seat in seats if seat not in taken]
    drawn = iter(draw.sample(left, taken.count("")))
    return [seat or next(drawn) for seat in taken]


def want_seat(session: ClassSession, user: User, seat: str) -> bool:
    """A student of a session whose students choose asks for a seat before it starts (False: not theirs to ask,
    or not a seat of the scenario)."""
    if not session.students_choose or session.status != ClassSession.Status.WAITING:
        return False
    if seat and seat not in group_seats(session.scenario):
        return False
    return ClassMember.objects.filter(session=session, student=user).update(wanted_seat=seat) > 0


def end(session: ClassSession) -> None:
    if session.status != ClassSession.Status.ENDED:
        session.status, session.ended_at = ClassSession.Status.ENDED, timezone.now()
        session.save(update_fields=["status", "ended_at"])
        notify_class_changed(session.pk)


def pause(session: ClassSession, game: Game | None = None) -> None:
    """Stop the AI of the session's unfinished games (or of one): no AI step, so no model call, until `resume`.
    A drive under way stops before its next step; students may still make their own moves."""
    if game is None:
        session.paused = True
        session.save(update_fields=["paused"])
    games = session_games(session).filter(finished_at__isnull=True)
    (games.filter(pk=game.pk) if game is not None else games).update(paused=True)
    notify_class_changed(session.pk)


def resume(session: ClassSession, game: Game | None = None) -> None:
    """The AI of the session's games (or of one) plays on: each game whose next step is an AI's is queued."""
    if game is None:
        session.paused = False
        session.save(update_fields=["paused"])
    games = session_games(session).filter(paused=True)
    games = games.filter(pk=game.pk) if game is not None else games
    ids = list(games.values_list("pk", flat=True))
    Game.objects.filter(pk__in=ids).update(paused=False)
    for waiting in Game.objects.filter(pk__in=ids).select_related("scenario"):
        queue_drive_if_ai_next(waiting)
    notify_class_changed(session.pk)


MAX_NOTICE = 300


def send_notice(session: ClassSession, text: str) -> str:
    """The teacher's notice to every student: kept on the session (waiting pages and games opened later show it)
    and pushed to every open page of its games. Returns it as stored; raises ValueError with a sentence for the
    teacher's form (empty, too long, unreadable)."""
    try:
        text = normalise_line(text.strip())
    except UnreadableText as exc:
        raise ValueError(FIELD_SENTENCES.get(exc.reason, exc.reason)) from exc
    if len(text) > MAX_NOTICE:
        raise ValueError(f"A notice is {MAX_NOTICE} characters at most.")
    session.notice = text
    session.save(update_fields=["notice"])
    for game_id in session_games(session).filter(finished_at__isnull=True).values_list("pk", flat=True):
        send_to_game(game_id, {"type": "class.notice", "text": text})
    notify_class_changed(session.pk)
    return text


def notice_for(game: Game) -> str:
    """The last notice of a running class session `game` belongs to ("" if none)."""
    if game.owner_id is None:
        return ""
    sessions = ClassSession.objects.filter(
        status=ClassSession.Status.RUNNING, scenario_id=game.scenario_id, members__student=game.owner_id,
        started_at__lte=game.created_at,
    ).exclude(notice="")  # fmt: skip
    return sessions.values_list("notice", flat=True).first() or ""


def hand_seat(session: ClassSession, game: Game, seat: str, *, to_ai: bool) -> bool:
    """The teacher hands a group's student's seat to the AI's stand-in, or back: the game's drive is queued (the
    stand-in may act at once). False if no student holds that seat in the game."""
    if not hand_to_ai(game, seat, to_ai=to_ai):
        return False
    queue_drive_if_ai_next(Game.objects.select_related("scenario").get(pk=game.pk))
    notify_class_changed(session.pk)
    return True


def session_games(session: ClassSession) -> QuerySet[Game]:
    """Its members' games of its scenario version made while it ran (none before it started); a group's game is its
    first student's."""
    if session.started_at is None:
        return Game.objects.none()
    games = Game.objects.filter(
        scenario=session.scenario,
        owner__class_memberships__session=session,
        created_at__gte=session.started_at,
    )
    if session.ended_at is not None:
        games = games.filter(created_at__lte=session.ended_at)
    return games.select_related("scenario", "owner").defer("state", "scenario__document")


def student_games(session: ClassSession, user_id: int | None) -> QuerySet[Game]:
    """The session's games `user_id` plays: their own, and the group's game they hold a seat in."""
    return session_games(session).filter(Q(owner=user_id) | Q(seats__student=user_id)).distinct()


@dataclass(frozen=True)
class StudentRow:
    """One student of the session, as the teacher's room and the results show them."""

    name: str
    joined_at: str
    game: Game | None  # their latest game of the session
    phase: str  # where it stands, in the kind's words
    waiting_on: str  # "this student", "the AI: <who>", "another student (<seat>)", "" when over
    updated_at: str
    seat: str = ""  # the seat they hold in it
    stand_in: bool | None = None  # a group's seat: handed to the AI's stand-in (None: not a group's game)
    on_page: bool = False  # their game's page is open (services/pages/presence.py)
    # A name-only student's ClassGuest (the teacher may give them a new return code).
    guest_id: int | None = None


def roster(session: ClassSession) -> list[StudentRow]:
    """Every member with their latest game of the session (its phase, and whom it waits for): their own, or the
    group's game they hold a seat in."""
    latest: dict[int, Game] = {}
    seat_of: dict[int, str] = {}
    handed: dict[int, bool] = {}
    made = list(session_games(session).order_by("created_at"))
    for own in made:
        latest[own.owner_id] = own  # type: ignore[index]
    by_pk = {g.pk: g for g in made}
    for held in GameSeat.objects.filter(game__in=made).order_by("game__created_at"):
        latest[held.student_id] = by_pk[held.game_id]  # type: ignore[index]
        seat_of[held.student_id] = held.role  # type: ignore[index]
        handed[held.student_id] = held.stand_in  # type: ignore[index]
    kind = get_kind(session.scenario.kind)
    # Whom a running game waits for is read from its state, which `session_games` leaves out: one query for all.
    running = Game.objects.select_related("scenario").in_bulk(
        [g.pk for g in latest.values() if g.finished_at is None and not g.paused]
    )
    rows = []
    steps: dict[int, NextStep] = {}
    members = list(session.members.select_related("student"))
    guests = dict(ClassGuest.objects.filter(session=session).values_list("user_id", "pk"))
    open_pages = present((latest[m.student_id].pk, m.student_id) for m in members if m.student_id in latest)
    for member in members:
        game = latest.get(member.student_id)
        phase = waiting_on = updated = ""
        if game is not None:
            phase, updated = kind.pages.phase_label(game.phase), game.updated_at.isoformat(timespec="seconds")
            if game.paused and game.finished_at is None:
                waiting_on = "the teacher (paused)"
            elif game.finished_at is None:
                if game.pk not in steps:  # once a game: its students share it
                    steps[game.pk] = kind.next_step(running[game.pk])
                step = steps[game.pk]
                # Side by side (a negotiation's Round 2): what this student's own lane waits for.
                lane = next(
                    (lane for lane in step.lanes if lane.seat == seat_of.get(member.student_id)), None
                )
                if lane is not None:
                    waiting_on = lane.doing
                elif step.actor is Actor.AI:
                    waiting_on = f"the AI: {step.speaker}"
                elif step.seat and step.seat != seat_of.get(member.student_id, step.seat):
                    waiting_on = f"another student ({step.speaker})"
                else:
                    waiting_on = "this student"
        seat = seat_of.get(member.student_id) or (game.human_role if game is not None else "")
        rows.append(
            StudentRow(
                display_name(member.student),
                member.joined_at.isoformat(timespec="seconds"),
                game,
                phase,
                waiting_on,
                updated,
                seat,
                handed.get(member.student_id),
                game is not None and (game.pk, member.student_id) in open_pages,
                guests.get(member.student_id),
            )  # fmt: skip
        )
    return rows
