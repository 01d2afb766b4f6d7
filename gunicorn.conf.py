"""gunicorn's settings for every server of this app: docker-compose.yml, the Dockerfile,
`make load` (scripts/load.sh) and `make bench-whatif`. Flags on the command line win.
https://docs.gunicorn.org/en/stable/settings.html
"""

# Import advisor/wsgi.py, with its warm-up (engine, PDF libraries, pages: frontend.warm), once
# in the master and fork the workers from it: each starts warm (~3 s of CPU it would otherwise
# spend inside its first requests, on every thread at once) and shares the master's memory.
# The warm-up closes its database connections before the fork. A code change needs a restart
# (not a HUP) to take effect.
preload_app = True

# Three processes on a 2-core machine, each serving four requests at once: a slow request (a
# first PDF, ~2.4 s; an in-request evaluation) holds one thread, not a whole worker.
workers = 3
worker_class = "gthread"
threads = 4
keepalive = 5


def post_fork(server, worker):  # type: ignore[no-untyped-def]
    """Each worker opens its PostgreSQL connections (one per thread, from its pool:
    advisor.db_pool) before it accepts a request, instead of every thread opening one inside
    its first request as the first users arrive together; then serves one request of each
    page (frontend.warm: advisor.warm.serve_once) and runs the API's warm-up steps again
    (api.warm), so its first visitors do not pay the copies of the memory pages those touch."""
    if not server.cfg.preload_app:
        return  # the app (and Django) is loaded later, in the worker; it opens connections then
    from advisor.db_pool import fill_pools
    from api.warm import warm_worker as warm_api
    from frontend.warm import warm_worker as warm_pages

    fill_pools(server.cfg.threads)
    warm_pages(server.app.wsgi())  # the app preloaded in the master, now this worker's
    warm_api()
