"""Scenarios (what a person asked) and runs (one evaluation of it by the engine)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class Scenario(models.Model):
    """A questionnaire's answers: the engine's scenario v1 in `inputs`.

    The UUID primary key doubles as the unguessable link for anonymous customers.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="scenarios",
    )
    customer = models.CharField(max_length=200, blank=True, default="", db_index=True)
    inputs = models.JSONField()
    notes = models.TextField(blank=True, default="")
    # The sales engineer's quote number, printed on the PDF's cover; never copied by a clone.
    quote_reference = models.CharField(max_length=64, blank=True, default="")
    cloned_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="clones"
    )
    callback_url = models.URLField(max_length=2000, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class ClaimedWork(models.Model):
    """Work a Celery worker claims, heartbeats and finishes: a run, or a sweep chunk.

    QUEUED -> RUNNING (claimed: claim_token, heartbeat_at) -> SUCCEEDED | FAILED. Only the
    holder of the current claim_token finishes the row (advisor.scenarios.claims), however
    often its message is delivered.
    """

    status = models.CharField(
        max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    error = models.TextField(blank=True, default="")
    claim_token = models.UUIDField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in (RunStatus.SUCCEEDED, RunStatus.FAILED)


class ScenarioRun(ClaimedWork):
    """One evaluation of a scenario. Claimed atomically; finished only by its claimant."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="runs")
    progress = models.PositiveSmallIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    error_fields = models.JSONField(null=True, blank=True)
    engine_version = models.CharField(max_length=32, blank=True, default="")
    catalog_version = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # Whether the worker draws the run's figures and stores them as it finishes the run
    # (advisor.scenarios.figures.draw_ahead): a run asked for from the pages, whose person waits
    # on its progress page to see them. The API's runs are drawn on a page's first view, if a
    # page ever shows them (most never are), so no submission waits for figures nobody sees.
    draw_figures = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]

    def __str__(self) -> str:
        return f"{self.scenario_id} run {self.id} ({self.status})"


class RunFigures(models.Model):
    """A succeeded run's Plotly figures, drawn once (by the worker that finished the run, for a
    run asked for from the pages; else by the first page that showed it) and then served by
    every web process, which no longer draws them itself (~100-250 ms of CPU each time).
    ``key`` is what they were drawn from
    (:func:`advisor.scenarios.figures.figures_key`: the run, its finish, its engine and
    catalog versions, this engine and this code); figures of another key are never served,
    they are drawn again and replaced."""

    run = models.OneToOneField(
        ScenarioRun, primary_key=True, on_delete=models.CASCADE, related_name="stored_figures"
    )
    key = models.CharField(max_length=64)
    # JSON text exactly as drawn: a jsonb column would reorder the figures' keys.
    figures = models.TextField()
    drawn_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"figures of run {self.run_id}"


class SweepStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class Sweep(models.Model):
    """A sensitivity sweep: one scenario evaluated over a grid of network designs.

    `axes` holds the values of each swept dimension (servers, fabric, nic_gbps, nics_per_node,
    oversubscription); the design points are their cartesian product, numbered in that order.
    The work is split into SweepChunk rows, one Celery task each. Progress counters are only
    ever changed with F() increments by the chunk that finished, inside its finishing
    transaction, so they are exact however the chunks interleave or get redelivered.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="sweeps")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="sweeps",
    )
    axes = models.JSONField()
    status = models.CharField(
        max_length=16, choices=SweepStatus.choices, default=SweepStatus.QUEUED, db_index=True
    )
    total_points = models.PositiveIntegerField()
    done_points = models.PositiveIntegerField(default=0)
    infeasible_points = models.PositiveIntegerField(default=0)
    total_chunks = models.PositiveIntegerField()
    done_chunks = models.PositiveIntegerField(default=0)
    failed_chunks = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    engine_version = models.CharField(max_length=32, blank=True, default="")
    # Pinned when the sweep is created: every chunk evaluates with the same catalog even if
    # staff publish an edited one while the sweep runs.
    catalog_version = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"sweep {self.id} of {self.scenario_id} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (SweepStatus.SUCCEEDED, SweepStatus.FAILED)

    @property
    def progress_pct(self) -> int:
        if not self.total_points:
            return 100
        return min(100, (100 * self.done_points) // self.total_points)


class SweepChunk(ClaimedWork):
    """Design points [start, stop) of a sweep: claimed, heartbeated and finished like a run."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    sweep = models.ForeignKey(Sweep, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    start = models.PositiveIntegerField()
    stop = models.PositiveIntegerField()
    results = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["sweep", "index"]
        constraints = [
            models.UniqueConstraint(fields=["sweep", "index"], name="scenarios_sweepchunk_index"),
        ]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]

    def __str__(self) -> str:
        return f"{self.sweep_id} chunk {self.index} ({self.status})"
