"""Sign-up that does not tell whether a username is already taken.

Django's ``UserCreationForm`` answers "A user with that username already exists", so the
sign-up form was a free oracle for account names (bounded only by its throttle). Here the
uniqueness check is kept out of the form's errors: a taken username gets exactly the same
errors as a free one for everything else (password mismatch, password rules, username
characters), and when nothing else is wrong the answer is one neutral sentence instead of
the account. The only way left to learn that a name exists is a complete, valid sign-up
attempt, which the sign-up throttle counts.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

NOT_CREATED = (
    "We could not create an account with these details. Check them and try again, "
    "or sign in if you already have an account."
)


class QuietSignUpForm(UserCreationForm[User]):
    """A ``UserCreationForm`` whose username uniqueness check leaves no field error."""

    taken: bool = False

    def clean_username(self) -> Any:
        username = self.cleaned_data.get("username")
        self.taken = bool(username) and User.objects.filter(username__iexact=username).exists()
        return username

    def validate_unique(self) -> None:
        # The only unique field a user fills in is the username, checked quietly above;
        # a race between two sign-ups of one free name is caught by the caller at save().
        return None
