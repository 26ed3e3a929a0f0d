from core import strict as serializers

from ..models import BootRequest, Deployment, Image, Subnet


class ImageSerializer(serializers.ModelSerializer):
    nodes_running = serializers.IntegerField(
        read_only=True,
        default=None,
        allow_null=True,
        help_text="Nodes running this image; null where not counted (publish, deprecate).",
    )

    class Meta:
        model = Image
        fields = [
            "id",
            "name",
            "version",
            "state",
            "kernel_url",
            "initrd_url",
            "deploy_mode",
            "rootfs_url",
            "kernel_sha256",
            "initrd_sha256",
            "rootfs_sha256",
            "uki_url",
            "uki_sha256",
            "measurements",
            "signature",
            "cmdline",
            "baseline",
            "created",
            "published",
            "verify_error",
            "nodes_running",
        ]
        read_only_fields = ["state", "measurements", "created", "published", "verify_error"]


class DeploymentSerializer(serializers.ModelSerializer):
    image_name = serializers.CharField(source="image.__str__", read_only=True)

    class Meta:
        model = Deployment
        fields = [
            "id",
            "node",
            "image",
            "image_name",
            "operation",
            "status",
            "deadline",
            "created",
            "boot_started",
            "phoned_home",
            "booted",
            "error",
        ]


class BootRequestSerializer(serializers.ModelSerializer):
    class Meta:
        model = BootRequest
        fields = ["id", "node", "mac", "state", "answer", "client", "remote_addr", "created"]


class SubnetSerializer(serializers.ModelSerializer):
    # IPv4 addresses, as the DHCP export and the boot answers need them (the model stores
    # any JSON; refused here rather than when a node boots).
    dns_servers = serializers.ListField(
        child=serializers.IPAddressField(protocol="IPv4"), max_length=8, required=False
    )

    class Meta:
        model = Subnet
        fields = [
            "id",
            "site",
            "cidr",
            "gateway",
            "dns_servers",
            "pool_start",
            "pool_end",
            "boot_base_url",
            "next_server",
        ]
