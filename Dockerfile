# One image for web, worker and beat (docker-compose.yml picks the command).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends ipmitool \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /app corral
WORKDIR /app
COPY pyproject.toml constraints.txt ./
RUN pip install -c constraints.txt .
COPY . .
RUN STATICFILES_BACKEND=whitenoise.storage.CompressedManifestStaticFilesStorage \
    SECRET_KEY=build-only python manage.py collectstatic --noinput -v0
USER corral
EXPOSE 8000
CMD ["gunicorn", "fleet.wsgi", "-b", "0.0.0.0:8000", "-w", "4", "--threads", "4", "--access-logfile", "-"]
