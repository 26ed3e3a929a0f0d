from core import strict as serializers

from ..models import FirmwareArtifact


class FirmwareArtifactSerializer(serializers.ModelSerializer):
    download_url = serializers.SerializerMethodField(
        help_text="Where BMCs fetch it once accepted (Corral's artifact server)."
    )

    class Meta:
        model = FirmwareArtifact
        fields = [
            "id",
            "name",
            "version",
            "component",
            "fits",
            "activation",
            "url",
            "sha256",
            "signature",
            "size",
            "state",
            "reason",
            "created",
            "created_by",
            "download_url",
        ]
        read_only_fields = ["size", "state", "reason", "created", "created_by"]

    def get_download_url(self, artifact: FirmwareArtifact) -> str:
        from ..views import download_path

        return download_path(artifact)


class FirmwareUploadSerializer(serializers.ModelSerializer):
    """An upload: the package's bytes and what it is (multipart form fields)."""

    file = serializers.FileField(
        help_text="The firmware package; at most CORRAL_FIRMWARE_MAX_BYTES."
    )

    class Meta:
        model = FirmwareArtifact
        fields = [
            "file",
            "name",
            "version",
            "component",
            "fits",
            "activation",
            "sha256",
            "signature",
        ]
