from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.urls import reverse

from core import egress

SHA256 = RegexValidator(r"^[0-9a-f]{64}\Z", "A sha256 is 64 lower-case hex digits.")
NAME = RegexValidator(
    r"^[a-z0-9][a-z0-9._-]{0,62}\Z", "Lower-case letters, digits, '.', '_' and '-' (max 63)."
)


class ImageState(models.TextChoices):
    DRAFT = "draft", "Draft"
    PUBLISHED = "published", "Published"
    DEPRECATED = "deprecated", "Deprecated"


class DeployMode(models.TextChoices):
    """How a node runs the image (docs/boot-modes.md)."""

    DISK = "disk", "Installed to disk"
    STATELESS = "stateless", "Stateless: runs from RAM"


class Image(models.Model):
    """A golden image. Once published it is immutable: a change is a new version."""

    name = models.CharField(max_length=63, validators=[NAME])
    version = models.CharField(max_length=63, validators=[NAME])
    state = models.CharField(
        max_length=12, choices=ImageState.choices, default=ImageState.DRAFT, editable=False
    )
    # Stateless: the initrd fetches the root image (rootfs, a squashfs), checks its sha256
    # and runs it from RAM under a tmpfs overlay; a reboot is a reimage.
    deploy_mode = models.CharField(
        max_length=10,
        choices=DeployMode.choices,
        default=DeployMode.DISK,
        help_text="disk: the image is installed; stateless: nodes run its root image (rootfs, "
        "a squashfs) from RAM, and every boot is a deploy.",
    )
    kernel_url = models.URLField(max_length=500)
    initrd_url = models.URLField(max_length=500)
    rootfs_url = models.URLField(max_length=500, blank=True)
    kernel_sha256 = models.CharField(max_length=64, validators=[SHA256])
    initrd_sha256 = models.CharField(max_length=64, validators=[SHA256])
    rootfs_sha256 = models.CharField(max_length=64, validators=[SHA256], blank=True)
    # A unified kernel image (systemd-stub + kernel + initrd in one EFI binary): UEFI nodes
    # boot it, so firmware measures kernel and initrd and a TPM quote can prove them
    # (docs/attestation.md). Its expected measurements are computed when it is published.
    uki_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="Unified kernel image (EFI) booted by UEFI nodes: measured boot, attestable.",
    )
    uki_sha256 = models.CharField(max_length=64, validators=[SHA256], blank=True)
    measurements = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="What UEFI measures when it boots the UKI (set on publish).",
    )
    signature = models.TextField(
        blank=True, help_text="Base64 detached ed25519 signature of the image manifest."
    )
    cmdline = models.CharField(
        max_length=1024,
        default="console=tty0 console=ttyS0,115200n8 corral.hostname={hostname} "
        "corral.callback={callback_url} corral.token={token} corral.image={image_name} "
        "corral.version={image_version}",
        help_text="Kernel command line; {callback_url} and {token} are filled per deploy.",
    )
    baseline = models.JSONField(
        default=dict,
        blank=True,
        help_text='Expected versions: {"kernel": .., "driver": .., "cuda": .., "nccl": .., '
        '"dcgm": .., "firmware": {component: version}}',
    )
    created = models.DateTimeField(auto_now_add=True)
    published = models.DateTimeField(null=True, blank=True, editable=False)
    verify_error = models.TextField(blank=True, editable=False)
    # Publishing kept every artifact in CORRAL_IMAGE_STORE (provisioning/imagestore.py):
    # nodes fetch them from Corral's own web server, not from the artifacts' URLs.
    stored = models.BooleanField(default=False, editable=False)

    class Meta:
        ordering = ["name", "-created"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="image_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.name}:{self.version}"

    def get_absolute_url(self) -> str:
        return reverse("provisioning:image_detail", args=[self.pk])

    def artifacts(self) -> list[tuple[str, str, str]]:
        """(name, url, sha256) of every artifact the image has."""
        items = [
            ("kernel", self.kernel_url, self.kernel_sha256),
            ("initrd", self.initrd_url, self.initrd_sha256),
        ]
        if self.rootfs_url:
            items.append(("rootfs", self.rootfs_url, self.rootfs_sha256))
        if self.uki_url:
            items.append(("uki", self.uki_url, self.uki_sha256))
        return items

    def clean(self) -> None:
        for field in ("kernel_url", "initrd_url", "rootfs_url", "uki_url"):
            url = getattr(self, field)
            try:
                # Publishing downloads it: the egress policy's (core.egress), checked again
                # at every hop of the download.
                if url:
                    egress.check_url(url, egress.IMAGE)
            except egress.Refused as exc:
                raise egress.validation_error(field, exc) from None
        if self.rootfs_url and not self.rootfs_sha256:
            raise ValidationError({"rootfs_sha256": "Give the sha256 of the root image."})
        if self.deploy_mode == DeployMode.STATELESS and not self.rootfs_url:
            raise ValidationError(
                {
                    "rootfs_url": "A stateless image runs from its root image: give rootfs_url "
                    "(a squashfs) and its rootfs_sha256."
                }
            )
        if self.uki_url and not self.uki_sha256:
            raise ValidationError({"uki_sha256": "Give the sha256 of the unified kernel image."})
        if self.uki_sha256 and not self.uki_url:
            raise ValidationError({"uki_url": "Give the URL of the unified kernel image."})
