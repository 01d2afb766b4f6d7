# Image for web, worker and beat (see docker-compose.yml).

# The engine's hot modules compiled with mypyc (scripts/compile_engine.py): mypyc comes with
# mypy from the dev lock, the C compiler with the full Debian image; the built engine package
# (sources, extensions, manifest) replaces the runtime image's below (same Python 3.11, same
# Debian release).
FROM python:3.11-bookworm AS engine-build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md requirements-dev.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements-dev.lock
COPY advisor ./advisor
COPY scripts/compile_engine.py ./scripts/
RUN python scripts/compile_engine.py

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# every process (gunicorn, celery) imports the project from /app, where the compiled engine is
ENV PYTHONPATH=/app
WORKDIR /app
COPY pyproject.toml README.md requirements.lock ./
# Dependencies from the hashed lock only (pip refuses any file whose hash differs), then the
# project itself without dependencies.
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY advisor ./advisor
COPY api ./api
COPY frontend ./frontend
RUN pip install --no-cache-dir --no-deps .
COPY . .
COPY --from=engine-build /src/advisor/engine/ ./advisor/engine/
RUN DJANGO_ENV=production SECRET_KEY=build-only-collectstatic-key-0123456789-abcdefghijklmnop \
    ALLOWED_HOSTS=localhost API_PUBLIC_BASE_URL=http://localhost \
    python manage.py collectstatic --noinput -v 0
RUN useradd --create-home --uid 1000 advisor
USER advisor
EXPOSE 8000
# workers, threads and the preloaded warm-up: gunicorn.conf.py
CMD ["gunicorn", "advisor.wsgi:application", "-c", "gunicorn.conf.py", "--bind", "0.0.0.0:8000"]
