from __future__ import annotations

from django.contrib.auth.views import LogoutView, PasswordChangeDoneView
from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from frontend import compare, measurements, results, views, whatif, wizard


class _Favicon(RedirectView):
    """/favicon.ico for clients that ask for it by name; pages link the SVG directly."""

    permanent = False

    def get_redirect_url(self, *args: object, **kwargs: object) -> str:
        return static("frontend/favicon.svg")


urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", _Favicon.as_view(), name="favicon"),
    # The questionnaire
    path("start/", wizard.start, name="start"),
    path("q/<uuid:draft_id>/", wizard.resume, name="draft_resume"),
    path("q/<uuid:draft_id>/<slug:step>/", wizard.step_view, name="wizard_step"),
    path("q/<uuid:draft_id>/<slug:step>/check", wizard.check_view, name="wizard_check"),
    # A scenario: progress, answer, actions, exports
    path("s/<uuid:scenario_id>/", results.scenario_detail, name="scenario_detail"),
    path("s/<uuid:scenario_id>/progress", results.scenario_progress, name="scenario_progress"),
    path("s/<uuid:scenario_id>/rerun", results.scenario_rerun, name="scenario_rerun"),
    path("s/<uuid:scenario_id>/edit", results.scenario_edit, name="scenario_edit"),
    path("s/<uuid:scenario_id>/clone", results.scenario_clone_view, name="scenario_clone"),
    path("s/<uuid:scenario_id>/notes", results.scenario_notes, name="scenario_notes"),
    path("s/<uuid:scenario_id>/whatif", whatif.scenario_whatif, name="scenario_whatif"),
    path(
        "s/<uuid:scenario_id>/whatif/save", whatif.scenario_whatif_save, name="scenario_whatif_save"
    ),
    path("s/<uuid:scenario_id>/report.pdf", results.export_pdf, name="export_pdf"),
    path("s/<uuid:scenario_id>/bom.csv", results.export_bom_csv, name="export_bom_csv"),
    path("s/<uuid:scenario_id>/result.json", results.export_json, name="export_json"),
    # Customer measurements, calibrated runs, acceptance plans (frontend/measurements.py)
    path("measurements/", measurements.measurement_index, name="measurement_index"),
    path(
        "measurements/<uuid:measurement_id>/",
        measurements.measurement_detail,
        name="measurement_detail",
    ),
    path(
        "s/<uuid:scenario_id>/calibrate", measurements.scenario_calibrate, name="scenario_calibrate"
    ),
    path(
        "s/<uuid:scenario_id>/quote-run",
        measurements.scenario_quote_run,
        name="scenario_quote_run",
    ),
    path(
        "s/<uuid:scenario_id>/acceptance.md",
        measurements.acceptance_markdown,
        name="acceptance_markdown",
    ),
    path("s/<uuid:scenario_id>/acceptance.pdf", measurements.acceptance_pdf, name="acceptance_pdf"),
    # Lists, comparison, accuracy
    path("scenarios/", views.scenario_list_view, name="scenario_list"),
    path("compare/", compare.compare_view, name="compare"),
    path("compare/comparison.csv", compare.compare_csv, name="compare_csv"),
    path("compare/comparison.pdf", compare.compare_pdf, name="compare_pdf"),
    path("accuracy/", views.accuracy, name="accuracy"),
    # Accounts
    path("accounts/login/", views.SignInView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/password/", views.PasswordChangeView.as_view(), name="password_change"),
    path(
        "accounts/password/done/",
        PasswordChangeDoneView.as_view(template_name="registration/password_change_done.html"),
        name="password_change_done",
    ),
]
