"""API shapes. Field names are part of the integration contract: change them only with a
new API version. Writes go through inventory.services."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers as drf

from core import egress
from core import strict as serializers

from .. import services
from ..actions import available_actions
from ..choices import BMCProtocol
from ..macs import MAC_PATTERN
from ..models import BMC, LifecycleEvent, NetworkInterface, Node, Rack, Site
from ..models.nodes import OBSERVED_FIELDS
from ..permissions import ADMIN, can
from ..validators import (
    MAX_LABELS,
    RACK_NAME_PATTERN,
    TOO_MANY_LABELS,
    normalise_mac,
    validate_rack_name,
)
from .operations import OperationSerializer  # noqa: F401  (the API's name for it)


@extend_schema_field({"type": "string", "pattern": MAC_PATTERN, "example": "52:54:00:ab:cd:ef"})
class MACField(serializers.CharField):
    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            return normalise_mac(value)
        except ValueError:
            raise serializers.ValidationError(
                f"'{value}' is not a MAC address; use six hex pairs such as 52:54:00:ab:cd:ef."
            )


class LabelListField(serializers.ListField):
    child = serializers.RegexField(r"^[A-Za-z0-9_.:/=-]+\Z", max_length=64)

    def __init__(self, **kwargs):
        super().__init__(max_length=MAX_LABELS, **kwargs)

    def to_internal_value(self, data):
        # Counted before each label is checked: a huge list is refused at once.
        if isinstance(data, list) and len(data) > MAX_LABELS:
            raise serializers.ValidationError(TOO_MANY_LABELS)
        return super().to_internal_value(data)

    def to_representation(self, data):
        return [label.name for label in data.all()]


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "pattern": egress.NETWORK_PATTERN, "maxLength": 49},
        "maxItems": egress.MAX_BMC_NETWORKS,
    }
)
class NetworkListField(serializers.ListField):
    """The model's rule (core.egress.clean_networks), declared so clients know it."""

    def to_internal_value(self, data):
        try:
            return egress.clean_networks(data)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.messages) from None


CAPACITY_FIELDS = ("rack_max_out_percent", "rack_min_out", "site_max_out_percent", "site_min_out")
# A site's policies are admin decisions; others may send the current value back unchanged.
ADMIN_ONLY = {
    "attestation": "Only an admin may change a site's attestation policy (docs/attestation.md).",
    "bmc_networks": "Only an admin may change a site's BMC networks (docs/egress.md).",
    "boot_media": "Only an admin may change how a site's deploys boot (docs/boot-modes.md).",
    **{
        name: "Only an admin may change a site's capacity limits (docs/health.md)."
        for name in CAPACITY_FIELDS
    },
}


class SiteSerializer(serializers.ModelSerializer):
    bmc_networks = NetworkListField(
        required=False,
        help_text="Networks this site's BMC addresses must be in (docs/egress.md); empty: "
        "any address the fleet-wide egress policy allows. Admins only.",
    )

    class Meta:
        model = Site
        fields = [
            "id",
            "name",
            "slug",
            "description",
            "attestation",
            "boot_media",
            "bmc_networks",
            *CAPACITY_FIELDS,
            "created",
        ]

    def validate(self, attrs: dict) -> dict:
        """Whether unattested nodes may join, where a site's BMCs may be and how many of its
        nodes automatic work may take out are trust and safety decisions: admins only."""
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if user is not None and can(user, ADMIN):
            return attrs
        errors = {}
        for name, message in ADMIN_ONLY.items():
            if name in attrs and attrs[name] != self._current(name):
                errors[name] = [message]
        if errors:
            raise drf.ValidationError(errors)
        return attrs

    def _current(self, name: str) -> object:
        if self.instance is not None:
            return getattr(self.instance, name)
        return Site._meta.get_field(name).get_default()


@extend_schema_field({"type": "string", "pattern": RACK_NAME_PATTERN, "maxLength": 100})
class RackNameField(serializers.CharField):
    """The model's rule (validators.validate_rack_name), declared so clients know it."""


class RackSerializer(serializers.ModelSerializer):
    name = RackNameField(max_length=100, validators=[validate_rack_name])
    site_slug = serializers.CharField(source="site.slug", read_only=True)
    # A list of switch names (the model stores any JSON; the API says what it means).
    leaf_switches = serializers.ListField(
        child=serializers.CharField(max_length=100), max_length=64, required=False
    )

    class Meta:
        model = Rack
        fields = [
            "id",
            "site",
            "site_slug",
            "name",
            "row",
            "position",
            "u_height",
            "power_budget_kw",
            "leaf_switches",
            "fabric",
            "delivered",
            "created",
        ]

    def validate_site(self, value: Site) -> Site:
        """A rack whose nodes hold BMC passwords stays in its site (BMC.rack_move_problem)."""
        problem = self.instance and BMC.rack_move_problem(self.instance, value)
        if problem:
            raise drf.ValidationError(problem)
        return value


class BMCSerializer(serializers.ModelSerializer):
    password = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        style={"input_type": "password"},
        trim_whitespace=False,
    )
    protocol = serializers.ChoiceField(choices=BMCProtocol.choices)
    has_password = serializers.SerializerMethodField()

    class Meta:
        model = BMC
        fields = [
            "protocol",
            "address",
            "port",
            "username",
            "password",
            "has_password",
            "verify_tls",
            "system_id",
            "gpu_system_id",
        ]

    def get_has_password(self, obj: BMC) -> bool:
        return bool(obj.password)


class InterfaceSerializer(serializers.ModelSerializer):
    mac = MACField(max_length=23)

    class Meta:
        model = NetworkInterface
        fields = ["id", "name", "mac", "ip", "boot", "fabric_rail"]
        validators: list = []  # uniqueness is checked by the service on normalised values
        extra_kwargs = {"ip": {"validators": []}}


class NodeInterfaceSerializer(InterfaceSerializer):
    """An interface on its own (/api/v1/interfaces/), naming its node."""

    class Meta(InterfaceSerializer.Meta):
        fields = [*InterfaceSerializer.Meta.fields, "node"]


NODE_READ_ONLY = OBSERVED_FIELDS  # clients read these, never write them


class NodeSerializer(serializers.ModelSerializer):
    bmc = BMCSerializer(
        required=False,
        allow_null=True,
        help_text="null: a node without a BMC. An update cannot remove a node's BMC "
        "(null is a 400 then); an admin deletes it in the Django admin.",
    )
    interfaces = InterfaceSerializer(many=True, required=False)
    labels = LabelListField(required=False)
    site = serializers.SlugRelatedField(
        source="rack.site",
        slug_field="slug",
        read_only=True,
        allow_null=True,
        help_text="The rack's site; null for a node in no rack.",
    )
    state = serializers.CharField(read_only=True)
    url = serializers.HyperlinkedIdentityField(view_name="api:node-detail")

    class Meta:
        model = Node
        fields = [
            "id",
            "url",
            "hostname",
            "serial",
            "model",
            "gpu_model",
            "gpu_count",
            "role",
            "site",
            "rack",
            "rack_unit",
            "u_height",
            "fabric",
            "labels",
            "state",
            *NODE_READ_ONLY,
            "bmc",
            "interfaces",
            "created",
            "updated",
        ]
        read_only_fields = list(NODE_READ_ONLY)

    def validate_bmc(self, value: dict | None) -> dict | None:
        """null on an update was taken and ignored, so a client meant to remove the BMC
        believed it had; the BMC (and its password) stays, and the answer says so."""
        node = self.instance if isinstance(self.instance, Node) else None
        if value is None and node is not None and BMC.objects.filter(node=node).exists():
            raise serializers.ValidationError(
                "null does not remove a node's BMC: omit bmc to keep it as it is; an "
                "admin removes a BMC in the Django admin (/admin/, the node's BMC)."
            )
        return value

    def validate_interfaces(self, value: list[dict]) -> list[dict]:
        macs = [i["mac"] for i in value]
        dupes = sorted({m for m in macs if macs.count(m) > 1})
        if dupes:
            raise serializers.ValidationError(f"MAC listed twice: {', '.join(dupes)}.")
        if sum(1 for i in value if i.get("boot")) > 1:
            raise serializers.ValidationError("Only one interface can have boot=true.")
        return value

    def create(self, validated_data: dict) -> Node:
        return services.create_node(**validated_data)

    def update(self, instance: Node, validated_data: dict) -> Node:
        if "interfaces" in validated_data:
            raise serializers.ValidationError(
                {"interfaces": "Change interfaces through /api/v1/interfaces/."}
            )
        with transaction.atomic():
            node = services.update_node(instance, **validated_data)
        # The answer shows what was stored: the BMC the view loaded with the node is the
        # one before the change (a PATCH of bmc answered the old system_id).
        node.refresh_from_db()
        return node


@extend_schema_field(
    {
        "type": "object",
        "description": "The action's parameters. `deploy`: `image`, an id or "
        '"name:version" of a published image. `recycle`: `image` (by default the image '
        'the node last ran) and `then` ("rma": drain, then open an RMA case).',
        "properties": {
            "image": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "then": {"type": "string"},
        },
        "additionalProperties": {},
    }
)
class ActionParamsField(serializers.DictField):
    pass


class NodeActionSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    params = ActionParamsField(required=False, default=dict)


class BulkActionSerializer(NodeActionSerializer):
    nodes = serializers.ListField(child=serializers.IntegerField(), min_length=1, max_length=10000)
    state = serializers.ChoiceField(
        choices=["on", "off", "cycle"], required=False, help_text="With the `power` action."
    )


class NodeImportSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="CSV, UTF-8, at most 20 MiB. Columns: site, rack, rack_unit, serial, "
        "hostname, model, gpu_model, gpu_count, bmc_protocol, bmc_address, bmc_username, "
        'bmc_password, boot_mac; optional u_height, role, fabric, labels ("h100;prod"), '
        "boot_ip, bmc_port, bmc_verify_tls, system_id, gpu_system_id."
    )
    # A multipart form field is text ("true"), so DRF's own reading of a boolean, not the
    # strict JSON one.
    update = drf.BooleanField(
        required=False,
        default=False,
        help_text="A row whose serial is already enrolled updates that node (its fields, BMC "
        "and labels) instead of being refused as a duplicate.",
    )


class ActionInfoSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    needs_reason = serializers.BooleanField()
    confirm = serializers.CharField()


def actions_for(node: Node) -> list[dict]:
    return [
        {"name": a.name, "label": a.label, "needs_reason": a.needs_reason, "confirm": a.confirm}
        for a in available_actions(node.state, node.role)
    ]


class LifecycleEventSerializer(serializers.ModelSerializer):
    hostname = serializers.CharField(source="node.hostname", read_only=True)

    class Meta:
        model = LifecycleEvent
        fields = [
            "id",
            "node",
            "hostname",
            "from_state",
            "to_state",
            "event",
            "actor",
            "reason",
            "operation",
            "created",
        ]
