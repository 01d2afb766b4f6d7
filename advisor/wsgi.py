from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "advisor.settings")
application = get_wsgi_application()

# A fresh web process pays its one-off costs now, not in its first requests. With gunicorn's
# preload_app (gunicorn.conf.py) this runs once, in the master, and the workers fork warm.
from advisor.heap import freeze_heap  # noqa: E402
from advisor.scenarios.engine_calls import warm_up  # noqa: E402
from advisor.scenarios.reports import warm_up as warm_up_reports  # noqa: E402
from api.warm import warm_up as warm_up_api  # noqa: E402
from frontend.warm import warm_up as warm_up_pages  # noqa: E402

# the engine's process constants, not in its first what-if
warm_up()
# the PDF's imports (matplotlib), not in its first report request
warm_up_reports()
# the API's first read (token lookup, list queries and serializers, the served catalog)
warm_up_api()
# the pages' imports, templates and process-wide figures, not in their first views
warm_up_pages()
# and then keep the garbage collector off everything alive now: a full collection walking the
# warm heap stalled every thread of a worker (advisor.heap)
freeze_heap()
