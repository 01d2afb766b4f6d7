from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "advisor.settings")
application = get_wsgi_application()

# a fresh web worker pays the engine's process constants now, not in its first what-if
from advisor.scenarios.engine_calls import warm_up  # noqa: E402
from advisor.scenarios.reports import warm_up as warm_up_reports  # noqa: E402

warm_up()
# and its PDF imports (matplotlib) and first drawing, not in its first report request
warm_up_reports()
