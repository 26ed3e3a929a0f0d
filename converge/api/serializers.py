from core import strict as serializers

from .. import pins
from ..models import BaselineArtifact, FirmwareArtifact


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


class BaselineArtifactSerializer(serializers.ModelSerializer):
    """The artifact a baseline names for one of its firmware components (docs/converge.md):
    checked against the baseline's expected versions and model, and the artifact's
    component pattern, when named."""

    class Meta:
        model = BaselineArtifact
        fields = ["id", "baseline", "component", "artifact", "created", "created_by"]
        read_only_fields = ["created", "created_by"]

    def validate(self, data: dict) -> dict:
        # A create has all three (required); a PATCH changes some of the instance's.
        given = {f: data[f] if f in data else getattr(self.instance, f) for f in pins.NAMED}
        found = pins.problems(given["baseline"], given["component"], given["artifact"])
        if found:
            raise serializers.ValidationError(found)
        return data
