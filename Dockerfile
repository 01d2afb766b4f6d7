# Image for web, worker and beat (see docker-compose.yml).
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
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
RUN DJANGO_ENV=production SECRET_KEY=build-only-collectstatic-key-0123456789-abcdefghijklmnop \
    ALLOWED_HOSTS=localhost API_PUBLIC_BASE_URL=http://localhost \
    python manage.py collectstatic --noinput -v 0
RUN useradd --create-home --uid 1000 advisor
USER advisor
EXPOSE 8000
# workers, threads and the preloaded warm-up: gunicorn.conf.py
CMD ["gunicorn", "advisor.wsgi:application", "-c", "gunicorn.conf.py", "--bind", "0.0.0.0:8000"]
