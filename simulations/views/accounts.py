"""Sign-up and log-in (Django's own views and forms, with rate limits and unambiguous user names)."""

from __future__ import annotations

import ipaddress
import unicodedata
from typing import Any

from django import forms
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm, UsernameField
from django.contrib.auth.models import User
from django.contrib.auth.validators import ASCIIUsernameValidator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from simulations.services.pages.broadcast import notify_session_ended
from simulations.services.policy.rate_limit import RateLimited, check_limit, give_back

ASCII_NAMES = (
    "Use only English letters, digits and @ . + - _ in a user name (letters from other alphabets that look alike "
    "are not accepted)."
)
TAKEN = "A user with that name already exists."


def canonical_username(raw: str) -> str:
    """A posted user name as sign-up stores it and log-in looks it up: outer white space (tabs, no-break spaces)
    removed and compatibility forms folded ("ｐlainuser" is "plainuser"). The log-in limit counts this name, so a
    guesser cannot pass it with spelling variants that authenticate as the same account."""
    return unicodedata.normalize("NFKC", raw.strip()).strip()


def limit_key(raw_name: str) -> str:
    """The per-name log-in limit's subject: the canonical name, whatever its case."""
    return f"name:{canonical_username(raw_name).casefold()}"


class CanonicalUsernameField(UsernameField):
    def to_python(self, value: Any) -> Any:
        return canonical_username(value) if isinstance(value, str) else super().to_python(value)


class SignupForm(UserCreationForm):  # type: ignore[type-arg]
    """User names are ASCII and unique whatever their case: "аlice" (Cyrillic а) or "Alice" cannot pose as alice."""

    def clean_username(self) -> str:
        name = canonical_username(self.cleaned_data.get("username", ""))
        try:
            ASCIIUsernameValidator()(name)
        except forms.ValidationError as exc:
            raise forms.ValidationError(ASCII_NAMES, code="invalid") from exc
        if User.objects.filter(username__iexact=name).exists():
            raise forms.ValidationError(TAKEN, code="unique")
        return name


class LoginForm(AuthenticationForm):
    """Django's log-in form, reading the name as sign-up stored it (`canonical_username`)."""

    username = CanonicalUsernameField(widget=forms.TextInput(attrs={"autofocus": True}))


def client_address(request: HttpRequest) -> str:
    """The peer's address (behind a proxy, configure it to pass the client's as REMOTE_ADDR), in one spelling: an
    IPv4 address mapped into IPv6 or an IPv6 address written out in full counts as the same address."""
    raw = str(request.META.get("REMOTE_ADDR", ""))
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return raw
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST":
        try:
            check_limit(action="signup", subject=client_address(request))
        except RateLimited as exc:
            # An unbound form: a refused sign-up validates nothing (nor says whether the name is taken).
            form = SignupForm(initial={"username": request.POST.get("username", "")})
            return render(request, "registration/signup.html", {"form": form, "error": str(exc)}, status=429)
        if form.is_valid():
            login(request, form.save())
            return redirect("lobby")
    return render(request, "registration/signup.html", {"form": form})


class LoginView(auth_views.LoginView):
    """Django's log-in, counting every attempt per user name before the password check, and the failed ones per
    client address: a class logging in from one school network must not lock itself out, while one address
    guessing many names is stopped. An attempt counts against its address before the password is checked and is
    given back when it succeeds, so parallel guesses cannot pass the limit while their passwords are checked."""

    form_class = LoginForm

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            check_limit(action="login_failure", subject=self._address())  # given back if it succeeds
            check_limit(action="login", subject=limit_key(request.POST.get("username", "")))
        except RateLimited as exc:
            # An unbound form: the posted one would check the password as the page shows its errors, and whether
            # an error shows would tell a refused guesser that the password was right.
            form = self.get_form_class()(request, initial={"username": request.POST.get("username", "")})
            context = self.get_context_data(form=form) | {"error": str(exc)}
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form: Any) -> HttpResponse:
        """The name and password matched: the attempt was no failure of its address."""
        give_back(action="login_failure", subject=self._address())
        return super().form_valid(form)

    def _address(self) -> str:
        return f"addr:{client_address(self.request)}"


class LogoutView(auth_views.LogoutView):
    """Django's log-out; then every websocket this session opened is closed (a page left open in another tab
    must not go on showing or driving the game)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        session_key = request.session.session_key
        response = super().post(request, *args, **kwargs)
        if session_key:
            notify_session_ended(session_key)
        return response
