from core import strict as serializers
from inventory.choices import BMCProtocol, NodeRole
from inventory.models import Site

from ..models import RackLayout, RackTemplate, Slot, Tray


class SlotSerializer(serializers.ModelSerializer):
    role = serializers.ChoiceField(choices=NodeRole.choices)

    class Meta:
        model = Slot
        fields = ["name", "role", "unit", "height", "within", "gpus"]
        validators: list = []  # names unique in a template: trays.layouts.slot_problems


class RackTemplateSerializer(serializers.ModelSerializer):
    slots = SlotSerializer(many=True, max_length=500)
    racks = serializers.IntegerField(
        source="racks.count", read_only=True, help_text="Racks built to it."
    )

    class Meta:
        model = RackTemplate
        fields = [
            "id",
            "name",
            "description",
            "u_height",
            "slots",
            "racks",
            "created",
            "created_by",
        ]
        read_only_fields = ["created", "created_by"]


class TrayBMCSerializer(serializers.Serializer):
    """A tray's BMC, or the rack's defaults for every tray (each field may come from
    either; the merged BMC is checked as the node API checks one)."""

    protocol = serializers.ChoiceField(choices=BMCProtocol.choices, required=False)
    address = serializers.CharField(max_length=255, required=False)
    port = serializers.IntegerField(min_value=1, max_value=65535, required=False, allow_null=True)
    username = serializers.CharField(max_length=64, required=False)
    password = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        style={"input_type": "password"},
    )
    verify_tls = serializers.BooleanField(required=False)
    system_id = serializers.CharField(max_length=200, required=False, allow_blank=True)
    gpu_system_id = serializers.CharField(max_length=200, required=False, allow_blank=True)


class TrayInSerializer(serializers.Serializer):
    slot = serializers.CharField(max_length=32, help_text="The template's slot it fills.")
    serial = serializers.CharField(max_length=100)
    hostname = serializers.CharField(
        max_length=63, required=False, help_text="Default: <rack>-<slot> (r12-compute-03)."
    )
    model = serializers.CharField(max_length=100, required=False)
    gpu_model = serializers.CharField(max_length=64, required=False)
    gpu_count = serializers.IntegerField(
        min_value=0, max_value=64, required=False, help_text="Default: the slot's GPUs."
    )
    labels = serializers.ListField(child=serializers.CharField(max_length=64), required=False)
    bmc = TrayBMCSerializer(required=False)


class TrayOutSerializer(serializers.ModelSerializer):
    slot = serializers.CharField(source="slot.name", read_only=True)
    role = serializers.CharField(source="slot.role", read_only=True)
    node = serializers.IntegerField(source="node_id", read_only=True)
    hostname = serializers.CharField(source="node.hostname", read_only=True)
    serial = serializers.CharField(source="node.serial", read_only=True)
    state = serializers.CharField(source="node.state", read_only=True)
    bmc_health = serializers.CharField(source="node.bmc_health", read_only=True)

    class Meta:
        model = Tray
        fields = ["slot", "role", "node", "hostname", "serial", "state", "bmc_health"]


class RackLayoutSerializer(serializers.ModelSerializer):
    """A rack built to a template: create enrols every tray of the rack at once."""

    id = serializers.IntegerField(source="pk", read_only=True, help_text="The rack's id.")
    rack = serializers.IntegerField(source="rack_id", read_only=True)
    rack_name = serializers.CharField(
        write_only=True, max_length=100, help_text="The rack: new, or empty (no nodes) in the site."
    )
    site = serializers.SlugRelatedField(
        queryset=Site.objects.all(), slug_field="slug", write_only=True
    )
    template = serializers.SlugRelatedField(queryset=RackTemplate.objects.all(), slug_field="name")
    bmc = TrayBMCSerializer(
        required=False, write_only=True, help_text="What every tray's BMC shares (credentials)."
    )
    trays = TrayInSerializer(many=True, write_only=True, max_length=500)
    filled = TrayOutSerializer(source="trays", many=True, read_only=True)

    class Meta:
        model = RackLayout
        fields = [
            "id",
            "rack",
            "rack_name",
            "site",
            "template",
            "bmc",
            "trays",
            "filled",
            "ready",
            "ready_since",
            "first_ready",
            "waiting",
        ]
        read_only_fields = ["ready", "ready_since", "first_ready", "waiting"]
