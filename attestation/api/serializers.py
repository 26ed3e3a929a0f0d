from rest_framework import serializers

from ..models import Attestation, FirmwareReference, TPMIdentity


class AttestationSerializer(serializers.ModelSerializer):
    node_hostname = serializers.CharField(source="node.hostname", read_only=True)
    image = serializers.CharField(source="deployment.image.__str__", read_only=True)

    class Meta:
        model = Attestation
        # The nonce, credential secret and raw evidence stay out: the checks and PCRs are
        # the evidence a person reads; the blobs are kept for re-judging.
        fields = [
            "id",
            "node",
            "node_hostname",
            "deployment",
            "image",
            "status",
            "reason",
            "checks",
            "pcrs",
            "measurements",
            "challenged",
            "received",
            "verified",
        ]
        read_only_fields = fields


class FirmwareReferenceSerializer(serializers.ModelSerializer):
    class Meta:
        model = FirmwareReference
        fields = [
            "id",
            "platform",
            "pcrs",
            "loader",
            "source",
            "signed_off_by",
            "signed_off",
            "note",
        ]
        read_only_fields = fields


class SignOffSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")


class TPMIdentitySerializer(serializers.ModelSerializer):
    class Meta:
        model = TPMIdentity
        fields = ["node", "ek_fingerprint", "ek_issuer", "recorded", "last_attested"]
        read_only_fields = fields
