"""A questionnaire in progress: saved after every page so it can be resumed from its link."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class QuestionnaireDraft(models.Model):
    """The answers so far (a flat dict of strings, exactly as the form posted them).

    Like a scenario, the UUID is the unguessable link: an anonymous person's draft opens by
    its link alone; a signed-in person's only for them (and sales engineers).
    `scenario` is set when the draft edits an existing scenario or once it was submitted.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="questionnaire_drafts",
    )
    answers = models.JSONField(default=dict)
    step = models.CharField(max_length=32, default="job")
    errors = models.JSONField(default=dict, blank=True)
    scenario = models.ForeignKey(
        "scenarios.Scenario",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="drafts",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return f"draft {self.id} at {self.step}"
