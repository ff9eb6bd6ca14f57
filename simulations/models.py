"""Mercury's tables. Rows are written only by `simulations.services`; models carry no game logic.

Transcript entries, events, checkpoints, votes and model calls are append-only: the ledger of a game is never
rewritten, so an export is always a faithful account of what happened.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django_tasks_db.models import DBTaskResult


class AppendOnlyError(Exception):
    """An append-only row was about to be changed."""


class AppendOnly(models.Model):
    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        # An integrity guard, not logic: ledgers are written once.
        if not self._state.adding:
            raise AppendOnlyError(f"{type(self).__name__} rows are append-only")
        super().save(*args, **kwargs)


class ScenarioVersion(models.Model):
    """One immutable version of a scenario's content; games pin the version they started with."""

    slug = models.SlugField(max_length=64)
    kind = models.CharField(
        max_length=32,
        default="negotiation",
        help_text="The simulation kind that plays it (simulations/kinds/).",
    )
    version = models.PositiveIntegerField()
    title = models.CharField(max_length=200)
    content_hash = models.CharField(max_length=64)
    document = models.JSONField(help_text="The whole validated scenario, as loaded.")
    source = models.CharField(max_length=500, blank=True)
    listed = models.BooleanField(
        default=True, help_text="Offered in the lobby. An admin's rehearsal of a draft is stored unlisted."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["slug", "version"], name="scenario_version_unique"),
            models.UniqueConstraint(fields=["slug", "content_hash"], name="scenario_content_unique"),
        ]
        ordering = ["slug", "-version"]

    def __str__(self) -> str:
        return f"{self.slug} v{self.version}"


class ScenarioDraft(models.Model):
    """A scenario being written in admin: changed freely, validated by its kind's schema on every save, and
    published as a new ScenarioVersion (which games can then pin). Nothing plays a draft."""

    kind = models.CharField(max_length=32, help_text="The simulation kind whose schema the document follows.")
    slug = models.SlugField(max_length=64, editable=False, help_text="From the document (its slug or id).")
    title = models.CharField(max_length=200, editable=False)
    document = models.JSONField(help_text="The whole scenario, valid for its kind.")
    based_on = models.ForeignKey(
        ScenarioVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="drafts",
        help_text="The version this draft was cloned from (its diff is shown against it).",
    )  # fmt: skip
    published = models.ForeignKey(
        ScenarioVersion, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+",
        help_text="The version its last publication stored (or found: the same content is the same version).",
    )  # fmt: skip
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug", "-updated_at"]
        permissions = [("publish_scenariodraft", "Can publish a scenario draft as a new version")]

    def __str__(self) -> str:
        return f"{self.slug} (draft)"


class Classroom(models.Model):
    """A class: its teachers read its students' games (in admin and their reviews) and no one else's."""

    name = models.CharField(max_length=120, unique=True)
    teachers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="classes_taught", blank=True)
    students = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="classes", blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ClassSession(models.Model):
    """A class played together: a teacher opens it on one scenario version, students join with its code, the
    teacher starts it and each student then plays their own game of it; the teacher watches them live and reads
    the class's results. Its games are its members' games of its scenario made while it ran."""

    class Status(models.TextChoices):
        WAITING = "waiting", "waiting for students"
        RUNNING = "running", "running"
        ENDED = "ended", "ended"

    teacher = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sessions_taught"
    )
    scenario = models.ForeignKey(ScenarioVersion, on_delete=models.PROTECT, related_name="class_sessions")
    title = models.CharField(max_length=120)
    code = models.CharField(max_length=12, unique=True, help_text="What students type to join.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.WAITING)
    max_students = models.PositiveSmallIntegerField(default=30)
    students_per_group = models.PositiveSmallIntegerField(
        default=1,
        help_text="Students who share one game (1: each plays their own). Kinds with several seats only.",
    )
    seat_list = models.CharField(
        max_length=200, blank=True,
        help_text="The seats a group's students take, in the order they joined (e.g. CAN,EU,TZA); empty: drawn at random.",
    )  # fmt: skip
    students_choose = models.BooleanField(
        default=False,
        help_text="A group's students choose their seats while they wait (else drawn, or listed).",
    )
    results_shared = models.BooleanField(
        default=False, help_text="Students may read the class's results, without names."
    )
    notice = models.CharField(
        max_length=300, blank=True, help_text="The teacher's last notice to every student of the session."
    )
    token_budget = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="The model budget of each of its games, in tokens; empty: the site's (MERCURY_MAX_TOKENS_PER_GAME).",
    )  # fmt: skip
    turn_seconds = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="A group's student who has not moved this long after their seat got the floor: the seat's AI "
        "stand-in plays that turn. Empty: no limit.",
    )  # fmt: skip
    paused = models.BooleanField(
        default=False, help_text="Its games' AI waits (no model calls) until resumed."
    )
    model = models.CharField(
        max_length=64, blank=True, help_text="The model option the games use; blank: the default."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.title} ({self.code})"


class ClassMember(models.Model):
    """A student who joined a class session."""

    session = models.ForeignKey(ClassSession, on_delete=models.CASCADE, related_name="members")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="class_memberships"
    )
    joined_at = models.DateTimeField(auto_now_add=True)
    wanted_seat = models.CharField(
        max_length=16,
        blank=True,
        help_text="The seat they asked for while waiting (a session whose students choose).",
    )

    class Meta:
        ordering = ["joined_at"]
        constraints = [
            models.UniqueConstraint(fields=["session", "student"], name="one_membership_a_session")
        ]

    def __str__(self) -> str:
        return f"{self.student} in {self.session}"


class ClassGuest(models.Model):
    """A student who joined a class session with a name only: an account made for that session, with no password,
    that reaches nothing outside it (simulations/views/guests.py)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="class_guest"
    )
    session = models.ForeignKey(ClassSession, on_delete=models.CASCADE, related_name="guests")
    name = models.CharField(max_length=60)
    # A keyed hash of the return code shown to the student when they joined: with it and the session's code they
    # log in again from any browser (class_sessions.return_as_guest). Empty for guests from before return codes.
    return_key = models.CharField(max_length=64, blank=True, default="", db_index=True)

    def __str__(self) -> str:
        return f"{self.name} (name only) in {self.session}"


class ScenarioRole(models.Model):
    """A seat of a scenario version, broken out of the document for browsing in the admin."""

    scenario = models.ForeignKey(ScenarioVersion, on_delete=models.CASCADE, related_name="roles")
    role_id = models.CharField(max_length=16)
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=16)
    votes = models.BooleanField()
    public_brief = models.TextField()
    position = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["scenario", "role_id"], name="scenario_role_unique")]
        ordering = ["scenario", "position"]

    def __str__(self) -> str:
        return f"{self.name} ({self.role_id})"


class ScenarioIssue(models.Model):
    scenario = models.ForeignKey(ScenarioVersion, on_delete=models.CASCADE, related_name="issues")
    issue_id = models.CharField(max_length=16)
    title = models.CharField(max_length=200)
    options = models.JSONField()
    position = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["scenario", "issue_id"], name="scenario_issue_unique")]
        ordering = ["scenario", "position"]

    def __str__(self) -> str:
        return f"{self.issue_id} {self.title}"


class ModelChoice(models.Model):
    """A model an admin offers for new games. Keys stay in the environment: a row names the variable only."""

    label = models.CharField(
        max_length=80, unique=True, help_text="What the teacher sees when starting a game."
    )
    model = models.CharField(max_length=200, help_text="The litellm model string, e.g. openai/gpt-4o-mini.")
    api_base = models.CharField(
        max_length=300, blank=True, help_text="The server's address, if not the default."
    )
    api_key_env = models.CharField(
        max_length=100, blank=True,
        help_text="Name of the environment variable holding the key (never the key itself); empty: no key.",
    )  # fmt: skip
    kwargs = models.JSONField(
        default=dict, blank=True, help_text="Anything else litellm accepts (a JSON object)."
    )
    judge_model = models.CharField(
        max_length=200, blank=True, help_text="A separate model for the judge; empty: the same model judges."
    )
    judge_api_base = models.CharField(max_length=300, blank=True)
    judge_api_key_env = models.CharField(max_length=100, blank=True)
    judge_kwargs = models.JSONField(default=dict, blank=True)
    enabled = models.BooleanField(default=True)
    ordering = models.IntegerField(default=0, help_text="Lower first in the list.")

    class Meta:
        ordering = ["ordering", "label"]

    def __str__(self) -> str:
        return f"{self.label} ({self.model})"


class Game(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        FINISHED = "finished"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="games",
        help_text="The player. Empty for games played from the command line.",
    )  # fmt: skip
    scenario = models.ForeignKey(ScenarioVersion, on_delete=models.PROTECT, related_name="games")
    seed = models.BigIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    phase = models.CharField(max_length=40, help_text="The machine state the game rests in.")
    human_role = models.CharField(max_length=16, blank=True)
    state = models.JSONField(help_text="The authoritative state document (equals the latest checkpoint).")
    version = models.PositiveIntegerField(default=0, help_text="Bumped by every committed turn.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    driver = models.CharField(max_length=64, blank=True, help_text="Who holds the lease to play AI turns.")
    driver_until = models.DateTimeField(null=True, blank=True, help_text="When that lease lapses.")
    paused = models.BooleanField(
        default=False,
        help_text="Paused by its class's teacher: no AI step (no model call) is played until resumed.",
    )
    share_token = models.CharField(
        max_length=43,
        null=True,
        blank=True,
        unique=True,
        help_text="Read-only review link for an instructor.",
    )
    share_expires_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the share link stops working (MERCURY_SHARE_LINK_DAYS after it is made).",
    )
    # The model the game is pinned to when it starts (empty: a game from before per-game models, which plays
    # whatever the settings say). Snapshots, so editing or deleting the admin's choice never changes a game.
    model_choice = models.ForeignKey(
        ModelChoice, on_delete=models.SET_NULL, null=True, blank=True, related_name="games"
    )
    model = models.CharField(max_length=200, blank=True, help_text="The model string that plays.")
    judge_model = models.CharField(max_length=200, blank=True, help_text="The model string that judges.")
    model_access = models.JSONField(
        default=dict, blank=True, help_text="api_base, key variable name and kwargs snapshots; never a key."
    )
    token_budget = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Its class session's model budget, in tokens (the lower of it and the site's applies).",
    )
    # Headless games only: `play --resume` continues with the student stand-in the game was started with.
    human_policy = models.JSONField(
        default=dict, blank=True, help_text="The scripted student playing this game from the command line."
    )

    # Not stored: the seat the page being rendered is for, when a class group's student other than the owner
    # looks (services.ledger.seats.seen_by); None renders the owner's view, as for every game of one student.
    viewer_seat: str | None = None

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return f"Game {self.pk} ({self.scenario}, {self.phase})"


class GameSeat(models.Model):
    """A seat a student holds in a game several students play (a class group's): the owner's seat and the others'.
    A game of one student has none (its owner holds `Game.human_role`)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats")
    role = models.CharField(max_length=16)
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="game_seats")
    session = models.ForeignKey(
        ClassSession, on_delete=models.SET_NULL, null=True, blank=True, related_name="seats",
        help_text="The class session whose group plays the game (its turn limit applies).",
    )  # fmt: skip
    stand_in = models.BooleanField(
        default=False,
        help_text="Handed to the AI by the teacher: its stand-in plays the seat until handed back.",
    )

    class Meta:
        ordering = ["game", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["game", "role"], name="one_student_a_seat"),
            models.UniqueConstraint(fields=["game", "student"], name="one_seat_a_student"),
        ]

    def __str__(self) -> str:
        return f"{self.student} as {self.role} in game {self.game_id}"


class TranscriptEntry(AppendOnly):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="entries")
    seq = models.PositiveIntegerField()
    round = models.PositiveSmallIntegerField()
    phase = models.CharField(max_length=40)
    issue = models.CharField(max_length=16, blank=True)
    speaker = models.CharField(max_length=16)
    kind = models.CharField(max_length=16)
    visibility = models.CharField(max_length=8)
    audience = models.JSONField(default=list)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["game", "seq"], name="entry_seq_unique")]
        ordering = ["game", "seq"]

    def __str__(self) -> str:
        return f"#{self.seq} {self.speaker} ({self.kind})"


class Event(AppendOnly):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    name = models.CharField(max_length=40)
    from_state = models.CharField(max_length=40)
    to_state = models.CharField(max_length=40)
    actor = models.CharField(max_length=40)
    payload = models.JSONField(default=dict)
    stance_changes = models.JSONField(
        default=list, help_text="Stance changes this transition caused, with reasons."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["game", "seq"], name="event_seq_unique")]
        ordering = ["game", "seq"]

    def __str__(self) -> str:
        return f"#{self.seq} {self.name}"


class Checkpoint(AppendOnly):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="checkpoints")
    seq = models.PositiveIntegerField()
    after_event = models.PositiveIntegerField()
    transcript_seq = models.PositiveIntegerField()
    schema_version = models.PositiveSmallIntegerField()
    # A keyframe holds the whole state; the checkpoints between keyframes hold only what their turn changed
    # (services/ledger/checkpoints.py: `state_at` gives any checkpoint's whole state).
    state = models.JSONField(null=True, blank=True, help_text="The whole state (keyframes only).")
    changes = models.JSONField(
        null=True,
        blank=True,
        help_text="What this checkpoint changed from the one before (between keyframes).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["game", "seq"], name="checkpoint_seq_unique"),
            models.CheckConstraint(
                condition=models.Q(state__isnull=False) | models.Q(changes__isnull=False),
                name="checkpoint_state_or_changes",
            ),
        ]
        ordering = ["game", "seq"]

    def __str__(self) -> str:
        return f"checkpoint {self.seq} after event {self.after_event}"


class Vote(AppendOnly):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="votes")
    issue = models.CharField(max_length=16)
    proposal = models.CharField(max_length=16)
    ballots = models.JSONField()
    adopted = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["game", "issue"], name="vote_issue_unique")]
        ordering = ["game", "id"]

    def __str__(self) -> str:
        return f"issue {self.issue}: {self.proposal} {'adopted' if self.adopted else 'rejected'}"


class Submission(AppendOnly):
    """A student's move, by its idempotency key: the same key is committed at most once."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="submissions")
    key = models.CharField(max_length=64)
    event_seq = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["game", "key"], name="submission_key_unique")]

    def __str__(self) -> str:
        return f"{self.key} -> event {self.event_seq}"


class ModelCall(AppendOnly):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="model_calls")
    seq = models.PositiveIntegerField()
    event_seq = models.PositiveIntegerField(null=True, blank=True, help_text="The event this call produced.")
    role = models.CharField(max_length=16)
    purpose = models.CharField(max_length=24)
    phase = models.CharField(max_length=40)
    context = models.JSONField(default=list, help_text="Transcript sequence numbers given to the model.")
    prompt_version = models.CharField(max_length=32, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    token_count_method = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=200)
    latency_ms = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16)
    error = models.CharField(max_length=300, blank=True)
    outcome = models.CharField(
        max_length=16, blank=True, help_text="Judge calls: used, fallback (to the rules) or failed."
    )
    outcome_reason = models.CharField(
        max_length=300, blank=True, help_text="Why a judge answer was not used."
    )
    cost_usd = models.FloatField(
        null=True, blank=True, help_text="litellm's price of the call; empty: unknown."
    )
    started_at = models.DateTimeField(
        null=True, blank=True, help_text="When the request was sent (calls of a parallel stage overlap)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "seq"]

    def __str__(self) -> str:
        return f"call {self.seq} {self.role} {self.purpose} ({self.status})"


class ClaimedTask(DBTaskResult):
    """A task row as the pooled worker claims it (simulations/driving/pool.py): django-tasks-db's own model, whose
    updates of named columns (the library's `set_successful` and `set_failed`) are statements built once. Through
    the ORM's `save(update_fields=…)` each would compile its UPDATE anew for every drive, most of what the task
    queue costs a drive's thread. The library's methods, their
    columns and their retries stay its own."""

    class Meta:
        proxy = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        names = kwargs.get("update_fields")
        if args or names is None or set(kwargs) != {"update_fields"}:
            super().save(*args, **kwargs)
            return
        from simulations.services.ledger.rows import update_row

        update_row(self, tuple(names))
