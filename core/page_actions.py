"""The one shape of a page view that runs a service call: the call, the refusal turned into what the page shows,
and the answer after it. The API needs none of this (its exception handler answers a `DomainError`); a page must
either show the refusal next to the form it came from, or say it in a message and go back.

- `form_action`: a form POST. A valid form runs the call; a refusal becomes the form's error and the view renders
  the page again with it (the function returns None); success answers with `done(result)` (a redirect).
- `page_action`: a button, a link, or a form the view has checked itself. A refusal becomes an error message and a
  redirect to `back`, or (with `again`) the page shown again with the reason, answered by `again(refusal)`;
  success answers with `done(result)`.
- `say_done`: the usual `done`: a success message and a redirect.
- `say_queued`: the message after a job was created: queued, or not started and why.

A refusal is one of `errors` (default: every `DomainError`, whose message is written for users); anything else
is a bug and propagates."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect

from core.errors import DomainError

Refusals = type[BaseException] | tuple[type[BaseException], ...]


def form_action(request, form, action: Callable[[dict], Any], *, done: Callable[[Any], HttpResponse],
                errors: Refusals = DomainError) -> HttpResponse | None:
    """On a POST whose `form` is valid, `action(form.cleaned_data)` and `done(result)`. None on a GET, an invalid
    form or a refusal (then the form carries the reason as a non-field error): the view renders its page."""
    if request.method != "POST" or not form.is_valid():
        return None
    try:
        result = action(form.cleaned_data)
    except errors as exc:
        form.add_error(None, str(exc))
        return None
    return done(result)


def page_action(request, action: Callable[[], Any], *, back: str | None = None,
                again: Callable[[BaseException], HttpResponse] | None = None,
                done: Callable[[Any], HttpResponse] | None = None, refused: str = "",
                errors: Refusals = DomainError) -> HttpResponse:
    """`done(action())` (without `done`: the action's own answer, e.g. a download). On a refusal: `again(refusal)`
    (the view's page again, which shows the reason itself: its status is the view's), or the error message and a
    redirect to `back` (a URL). The message is `refused` with `{reason}` filled in, `"{refused}: {reason}"` when
    `refused` has no `{reason}`, or the reason alone."""
    if (back is None) == (again is None):
        raise TypeError("page_action takes one of back (a URL) and again (a page)")
    try:
        result = action()
    except errors as exc:
        if again is not None:
            return again(exc)
        messages.error(request, _refusal_message(refused, exc))
        return redirect(back)
    return result if done is None else done(result)


def _refusal_message(refused: str, exc: BaseException) -> str:
    if "{reason}" in refused:
        return refused.replace("{reason}", str(exc))
    return f"{refused}: {exc}" if refused else str(exc)


def say_done(request, to: str, text: str | Callable[[Any], str] | None = None) -> Callable[[Any], HttpResponse]:
    """A `done` for `page_action`: the success message and a redirect to `to` (a URL). The message is `text`,
    `text(result)`, or without `text` the result itself (a service that answers with its own message)."""

    def done(result) -> HttpResponse:
        messages.success(request, str(result) if text is None else text(result) if callable(text) else text)
        return redirect(to)

    return done


def say_queued(request, what: str, enqueue_error: str | None, *, job_id: int | None = None) -> None:
    """`"{what} queued (job N)."`, or `"{what} was not started: {why}"` when its job could not be sent (the job
    is then failed, never left looking queued; `jobs.services.job_enqueue_error` gives the reason)."""
    if enqueue_error:
        messages.error(request, f"{what} was not started: {enqueue_error}")
    else:
        messages.success(request, f"{what} queued{f' (job {job_id})' if job_id is not None else ''}.")
