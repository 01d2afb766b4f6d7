"""The questionnaire wizard: one page per step, answers saved on every move."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from advisor.engine.facts.catalog import Catalog
from advisor.engine.input.scenario import DEFAULT_SEQUENCE_LENGTH, default_global_batch_tokens
from advisor.scenarios.catalog_store import catalog_current
from advisor.scenarios.engine_calls import InvalidScenario, validate_inputs
from advisor.scenarios.services import (
    RunInProgress,
    run_start,
    scenario_submit,
    scenario_update,
)
from frontend import questionnaire as qn
from frontend.access import (
    draft_may_write_scenario,
    draft_or_404,
    remember_created_draft,
    remember_created_scenario,
    remember_draft,
    remember_scenario,
)
from frontend.models import QuestionnaireDraft
from frontend.services import draft_create, draft_save
from frontend.throttle import anonymous_allowed, too_many

# When the person switches between one server and several, a GPU count that was only our
# default is replaced by the other path's default.
ONE_SERVER_FALLBACK_GPUS = 8
MANY_SERVERS_DEFAULT_GPUS = "64"


def _answers(draft: QuestionnaireDraft, steps: tuple[qn.Step, ...]) -> qn.Answers:
    answers = qn.default_answers(steps)
    answers.update({str(k): str(v) for k, v in (draft.answers or {}).items()})
    return answers


def _adjust_for_scale(answers: qn.Answers, catalog: Catalog, previous: qn.Answers) -> None:
    """Keep the GPU count consistent with 'one server or many' when it was still a default."""
    if answers["scale"] == previous["scale"]:
        return
    gpu = catalog.gpu(answers["gpu"])
    per_server = gpu.gpus_per_server if gpu else ONE_SERVER_FALLBACK_GPUS
    if answers["scale"] == "one":
        try:
            current = int(answers["gpus"] or 0)
        except ValueError:
            current = 0
        if current == 0 or current > per_server:
            answers["gpus"] = str(per_server)
    elif answers["scale"] == "many":
        try:
            current = int(answers["gpus"] or 0)
        except ValueError:
            current = 0
        if current <= per_server:
            answers["gpus"] = MANY_SERVERS_DEFAULT_GPUS


# Dropdown choices longer than this are shown as radio cards (a phone clips a long <select>).
SELECT_LABEL_MAX = 32
# Fine-tuning adapts a trained model on a curated set: about a billion tokens (Tülu 3's SFT mix
# is ~0.9 M examples, arXiv 2411.15124), not the trillions of pre-training that are the
# training default.
FINE_TUNING_TOKENS_B = "1"
# The model the wizard chose itself (not the person): it may be replaced when step 1 changes.
AUTO_MODEL = "_auto_model"


def _fitting_model(answers: qn.Answers, catalog: Catalog, preferred: str) -> str:
    """The preferred model if it fits the hardware these answers give, else the largest that
    does (so a default never fails two steps later)."""
    others = sorted(
        (m for m in catalog.models if m.id != preferred),
        key=lambda m: -m.params_b,
    )
    for model_id in [preferred, *(m.id for m in others)]:
        trial = {**answers, "model_choice": model_id}
        try:
            validate_inputs(qn.answers_to_inputs(trial, catalog), catalog=catalog)
        except InvalidScenario:
            continue
        return model_id
    return preferred


def _adjust_defaults(
    answers: qn.Answers,
    catalog: Catalog,
    previous: qn.Answers,
    steps: tuple[qn.Step, ...],
) -> None:
    """Defaults that follow step 1: a fine-tuning-sized token count, a model that fits."""
    if (answers["workload"], answers["scale"]) == (
        previous["workload"],
        previous["scale"],
    ):
        return
    defaults = qn.default_answers(steps)
    training_tokens = defaults["total_tokens_b"]
    tokens = answers["total_tokens_b"]
    if answers["workload"] == "fine_tuning" and tokens in ("", training_tokens):
        answers["total_tokens_b"] = FINE_TUNING_TOKENS_B
    elif (
        answers["workload"] == "training"
        and previous["workload"] == "fine_tuning"
        and tokens == FINE_TUNING_TOKENS_B
    ):
        answers["total_tokens_b"] = training_tokens
    default_model = defaults["model_choice"]
    auto = answers[AUTO_MODEL] or default_model
    if answers["model_choice"] == auto and default_model:
        chosen = _fitting_model(answers, catalog, default_model)
        answers["model_choice"] = chosen
        answers[AUTO_MODEL] = chosen


def _posted(step: qn.Step, request: HttpRequest, answers: qn.Answers) -> qn.Answers:
    out = qn.Answers(answers)
    for question in qn.visible_questions(step, answers):
        if question.name in request.POST:
            out[question.name] = request.POST.get(question.name, "").strip()
    return out


def _inputs(draft: QuestionnaireDraft, answers: qn.Answers, catalog: Catalog) -> dict[str, Any]:
    """The scenario v1 these answers give: over the edited scenario's own inputs when the
    draft changes one (fields the form does not show are kept, qn.edited_inputs)."""
    base = draft.scenario.inputs if draft.scenario is not None else None
    return qn.edited_inputs(base, answers, catalog)


def _engine_errors(
    draft: QuestionnaireDraft,
    answers: qn.Answers,
    catalog: Catalog,
    steps: tuple[qn.Step, ...],
    upto: str,
) -> dict[str, list[str]]:
    """The engine's own checks, kept for the questions on this step or before it."""
    try:
        validate_inputs(_inputs(draft, answers, catalog), catalog=catalog)
    except InvalidScenario as exc:
        mapped = qn.errors_by_question(exc.field_errors, steps, answers)
    else:
        return {}
    order = qn.step_slugs(steps)
    limit = order.index(upto)
    kept: dict[str, list[str]] = {}
    for name, msgs in mapped.items():
        slug = qn.step_of_question(steps, name) if name else "review"
        if slug is not None and order.index(slug) <= limit:
            kept[name] = msgs
    return kept


def _placeholder(question: qn.Question, answers: qn.Answers) -> str:
    """What an empty answer means for these answers: the global batch the engine would use
    for this cluster (published practice grows it with the GPU count)."""
    if question.name != "global_batch_sequences":
        return question.placeholder
    try:
        gpus = int(answers["gpus"] or 0)
        sequence = int(answers["sequence_length"] or DEFAULT_SEQUENCE_LENGTH)
    except ValueError:
        return question.placeholder
    if gpus <= 0 or sequence <= 0:
        return question.placeholder
    tokens = default_global_batch_tokens(gpus, _pretrains_moe(answers))
    sequences = max(1, round(tokens / sequence))
    return f"usual for {gpus:,} GPUs: {sequences:,} ({tokens / 1e6:,.1f}M tokens)"


def _pretrains_moe(answers: qn.Answers) -> bool:
    """Pretraining of a mixture-of-experts model (a preset's or the custom shape's experts):
    the engine's default batch is then the MoE one (``default_global_batch_tokens``)."""
    if answers.workload != "training":
        return False
    choice = answers["model_choice"]
    if choice == "custom":
        try:
            experts, top_k = (
                int(answers["custom_moe_experts"] or 0),
                int(answers["custom_moe_top_k"] or 0),
            )
        except ValueError:
            return False
        return experts > 1 and top_k > 0
    model = catalog_current().model(choice) if choice else None
    return model is not None and model.is_moe


def _step_context(
    request: HttpRequest,
    draft: QuestionnaireDraft,
    steps: tuple[qn.Step, ...],
    step: qn.Step,
    answers: qn.Answers,
    errors: dict[str, list[str]],
    *,
    saved: bool = False,
) -> dict[str, Any]:
    order = qn.step_slugs(steps)
    index = order.index(step.slug)
    error_steps = {qn.step_of_question(steps, n) for n in errors if n} | (
        {"review"} if "" in errors else set()
    )
    questions = []
    for question in qn.visible_questions(step, answers):
        questions.append(
            {
                "q": question,
                "value": answers[question.name],
                "errors": errors.get(question.name, []),
                "show_if_values": ",".join(question.show_if[1]) if question.show_if else "",
                "placeholder": _placeholder(question, answers),
                # A dropdown whose choices are sentences is clipped on a phone: shown as cards.
                "as_cards": question.kind == "select"
                and any(len(c.label) > SELECT_LABEL_MAX for c in question.choices),
            }
        )
    return {
        "nav": "new",
        "draft": draft,
        "steps": steps,
        "step": step,
        "index": index,
        "number": index + 1,
        "total": len(steps),
        "is_first": index == 0,
        "is_last": index == len(steps) - 1,
        "step_states": [
            {
                "slug": s.slug,
                "title": s.title,
                "state": "current" if s.slug == step.slug else ("done" if i < index else ""),
                "has_error": s.slug in error_steps,
            }
            for i, s in enumerate(steps)
        ],
        "questions": questions,
        "general_errors": errors.get("", []),
        "summary": qn.summary(steps, answers) if step.slug == "review" else [],
        "resume_url": request.build_absolute_uri(reverse("draft_resume", args=[draft.pk])),
        "saved": saved,
        "editing": draft.scenario,
    }


@require_http_methods(["GET", "POST"])
def start(request: HttpRequest) -> HttpResponse:
    """GET: the start page (writes nothing, so link checkers and prefetchers make no rows).
    POST: a fresh questionnaire with sensible defaults (anonymous visitors: throttled)."""
    if request.method == "GET":
        return render(request, "frontend/start.html", {"nav": "new"})
    if not anonymous_allowed(request, "draft"):
        return too_many(request)
    steps = qn.build_steps(catalog_current())
    draft = draft_create(owner=request.user, answers=qn.default_answers(steps))
    remember_created_draft(request, draft)
    return redirect("wizard_step", draft_id=draft.pk, step="job")


def resume(request: HttpRequest, draft_id: uuid.UUID) -> HttpResponse:
    draft = draft_or_404(request, draft_id)
    return redirect("wizard_step", draft_id=draft.pk, step=draft.step or "job")


@require_http_methods(["GET", "POST"])
def step_view(request: HttpRequest, draft_id: uuid.UUID, step: str) -> HttpResponse:
    draft = draft_or_404(request, draft_id)
    catalog = catalog_current()
    steps = qn.build_steps(catalog)
    order = qn.step_slugs(steps)
    if step not in order:
        return redirect("wizard_step", draft_id=draft.pk, step=order[0])
    current = steps[order.index(step)]
    stored = _answers(draft, steps)

    if request.method == "GET":
        # Read-only: the step a draft resumes at is saved by the POSTs that move it.
        errors = {k: v for k, v in (draft.errors or {}).items()}
        return render(
            request,
            "frontend/wizard.html",
            _step_context(request, draft, steps, current, stored, errors),
        )

    answers = _posted(current, request, stored)
    _adjust_for_scale(answers, catalog, stored)
    _adjust_defaults(answers, catalog, stored, steps)
    action = request.POST.get("nav", "next")
    # Errors already filed for other steps stay until those steps are answered again.
    other_errors = {
        k: v
        for k, v in (draft.errors or {}).items()
        if k and qn.step_of_question(steps, k) not in (None, step)
    }

    if action == "back":
        target = order[max(0, order.index(step) - 1)]
        draft_save(draft=draft, answers=answers, step=target, errors=other_errors)
        return redirect("wizard_step", draft_id=draft.pk, step=target)
    if action.startswith("goto:") and action[5:] in order:
        target = action[5:]
        draft_save(draft=draft, answers=answers, step=target, errors=other_errors)
        return redirect("wizard_step", draft_id=draft.pk, step=target)
    if action == "save":
        draft_save(draft=draft, answers=answers, step=step, errors=other_errors)
        remember_draft(request, draft)
        context = _step_context(request, draft, steps, current, answers, other_errors, saved=True)
        return render(request, "frontend/wizard.html", context)

    errors = qn.check_step(current, answers, catalog)
    if not errors:
        errors = _engine_errors(draft, answers, catalog, steps, step)
    here = {k for k in errors if qn.step_of_question(steps, k) == step}
    if errors and not here:
        # This answer makes an earlier one impossible (e.g. a split model needs more GPUs):
        # go back to that question, with the reason beside it.
        target = qn.first_step_with_errors(errors, steps)
        draft_save(draft=draft, answers=answers, step=target, errors={**other_errors, **errors})
        messages.error(request, "With that answer, an earlier one needs another look.")
        return redirect("wizard_step", draft_id=draft.pk, step=target)
    if errors:
        draft_save(draft=draft, answers=answers, step=step, errors={**other_errors, **errors})
        context = _step_context(request, draft, steps, current, answers, errors)
        # 200, not 422: the page with its errors is the normal answer to a form post, and a
        # 4xx would be logged as a console error by the browser.
        return render(request, "frontend/wizard.html", context)

    if action == "submit" or current.slug == order[-1]:
        return _submit(request, draft, steps, answers, catalog)
    target = order[order.index(step) + 1]
    draft_save(draft=draft, answers=answers, step=target, errors=other_errors)
    return redirect("wizard_step", draft_id=draft.pk, step=target)


def _submit(
    request: HttpRequest,
    draft: QuestionnaireDraft,
    steps: tuple[qn.Step, ...],
    answers: qn.Answers,
    catalog: Catalog,
) -> HttpResponse:
    all_errors: dict[str, list[str]] = {}
    for step in steps:
        all_errors.update(qn.check_step(step, answers, catalog))
    inputs = _inputs(draft, answers, catalog)
    if not all_errors:
        try:
            validate_inputs(inputs, catalog=catalog)
        except InvalidScenario as exc:
            all_errors = qn.errors_by_question(exc.field_errors, steps, answers)
    if all_errors:
        target = qn.first_step_with_errors(all_errors, steps)
        draft_save(draft=draft, answers=answers, step=target, errors=all_errors)
        messages.error(request, "Some answers need another look before we can compute.")
        return redirect("wizard_step", draft_id=draft.pk, step=target)

    name = answers["name"].strip() or _default_name(answers, catalog)
    customer = answers["customer"].strip()
    if draft.scenario is not None and not draft_may_write_scenario(draft):
        # The scenario changed hands (its creator signed up): an old draft link, which
        # anybody may hold, no longer renames or recomputes it.
        messages.error(
            request,
            "This scenario now belongs to an account, so these answers can no longer change "
            "it. Open the scenario and choose 'Copy and edit' to keep working on them.",
        )
        return redirect("scenario_detail", scenario_id=draft.scenario.pk)
    if not anonymous_allowed(request, "scenario"):
        return too_many(request)
    try:
        if draft.scenario is not None:
            with transaction.atomic():
                scenario = scenario_update(
                    scenario=draft.scenario, inputs=inputs, name=name, customer=customer
                )
                run_start(scenario=scenario)
            created = False
        else:
            run = scenario_submit(name=name, inputs=inputs, owner=request.user, customer=customer)
            scenario = run.scenario
            created = True
    except RunInProgress as busy:
        messages.info(
            request,
            "This scenario is still being computed; change it once that run has finished.",
        )
        return redirect("scenario_detail", scenario_id=busy.run.scenario_id)
    except InvalidScenario as exc:
        errors = qn.errors_by_question(exc.field_errors, steps, answers)
        target = qn.first_step_with_errors(errors, steps)
        draft_save(draft=draft, answers=answers, step=target, errors=errors)
        return redirect("wizard_step", draft_id=draft.pk, step=target)
    draft_save(draft=draft, answers=answers, step="review", errors={}, scenario=scenario)
    if created:
        remember_created_scenario(request, scenario)
    else:
        remember_scenario(request, scenario)
    return HttpResponseRedirect(reverse("scenario_detail", args=[scenario.pk]))


def _default_name(answers: qn.Answers, catalog: Catalog) -> str:
    model = catalog.model(answers["model_choice"])
    model_name = model.name if model else "Custom model"
    gpu = catalog.gpu(answers["gpu"])
    gpu_name = gpu.name if gpu else answers["gpu"] or "GPU"
    work = {
        "training": "training",
        "fine_tuning": "fine-tuning",
        "inference": "serving",
        "rag": "RAG serving",
    }.get(answers["workload"], "job")
    return f"{model_name} {work} on {answers['gpus'] or '?'} × {gpu_name}"


@require_POST
def check_view(request: HttpRequest, draft_id: uuid.UUID, step: str) -> HttpResponse:
    """htmx: check this step's answers as they change; return errors out-of-band.

    Read-only on purpose: the person may press Next while a check is in flight, and two
    writers of one draft would race (answers are saved by every Next, Back, Save and step).
    """
    draft = draft_or_404(request, draft_id)
    catalog = catalog_current()
    steps = qn.build_steps(catalog)
    order = qn.step_slugs(steps)
    if step not in order:
        return HttpResponse(status=404)
    current = steps[order.index(step)]
    stored = _answers(draft, steps)
    answers = _posted(current, request, stored)
    errors = qn.check_step(current, answers, catalog)
    # Only questions the person has touched are judged while typing.
    touched = {q.name for q in qn.visible_questions(current, answers) if q.name in request.POST}
    errors = {k: v for k, v in errors.items() if k in touched}
    fields = [
        {"name": q.name, "errors": errors.get(q.name, [])}
        for q in qn.visible_questions(current, answers)
    ]
    return render(request, "frontend/_field_errors_oob.html", {"fields": fields})
