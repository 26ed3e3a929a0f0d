# One image for web, worker and beat (docker-compose.yml picks the command). GRUB's ISO
# tools build the boot ISOs of virtual-media deploys (docs/boot-modes.md).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends ipmitool tpm2-tools \
      grub-pc-bin grub-efi-amd64-bin xorriso mtools \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /app corral \
 && install -d -o corral /var/lib/corral/artifacts /var/lib/corral/metrics \
      /var/lib/corral/vmedia /var/lib/corral/images
WORKDIR /app
COPY pyproject.toml constraints.txt ./
COPY corral_cli ./corral_cli
RUN pip install -c constraints.txt .
COPY . .
RUN STATICFILES_BACKEND=whitenoise.storage.CompressedManifestStaticFilesStorage \
    SECRET_KEY=build-only python manage.py collectstatic --noinput -v0
USER corral
EXPOSE 8000
# fleet.serve runs granian on fleet.asgi; GRANIAN_* variables tune it (README).
# Boot-storm mode on: /boot/ipxe answered from memory, boot records written in batches.
# Firmware artifacts, boot ISOs and published images' artifacts, served to nodes by
# granian's static files (volumes web and workers share: docker-compose.yml).
ENV CORRAL_ARTIFACT_DIR=/var/lib/corral/artifacts CORRAL_VMEDIA_DIR=/var/lib/corral/vmedia \
    CORRAL_IMAGE_STORE=/var/lib/corral/images
ENV GRANIAN_HOST=0.0.0.0 GRANIAN_PORT=8000 GRANIAN_LOG_ACCESS_ENABLED=true \
    CORRAL_BOOT_CACHE_SECONDS=0.5 CORRAL_BOOT_LOG_FLUSH_SECONDS=0.5
CMD ["python", "-m", "fleet.serve"]
