from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.module_loading import import_string

from core import egress

from ..choices import BMCProtocol
from ..fields import EncryptedTextField


class BMC(models.Model):
    """Out-of-band controller of one node. The password is ciphertext in the database.

    Its settings are checked by the driver's own schema (`clean()`), so a node cannot be
    enrolled with a BMC its driver would later refuse.
    """

    node = models.OneToOneField("inventory.Node", on_delete=models.CASCADE, related_name="bmc")
    protocol = models.CharField(max_length=10, choices=BMCProtocol.choices)
    address = models.CharField(
        max_length=255,
        help_text="Host, IP or URL (https://10.0.0.21:8443, 10.0.0.21, bmc1.example).",
    )
    port = models.PositiveIntegerField(null=True, blank=True)
    username = models.CharField(max_length=64)
    password = EncryptedTextField(blank=True)
    verify_tls = models.BooleanField(default=True)
    system_id = models.CharField(
        max_length=200, blank=True, help_text="Redfish system id; empty = the only system."
    )
    gpu_system_id = models.CharField(
        max_length=200,
        blank=True,
        help_text="Redfish system that holds this node's GPUs (a GB200/GH200 tray's "
        "HGX_Baseboard_0); empty = the system itself, or the baseboard its vendor profile finds.",
    )

    class Meta:
        verbose_name = "BMC"

    # Where the credential goes. Changing any of these sends the password somewhere new,
    # so the password must be given again (`give_password`): otherwise anyone who may edit
    # inventory could point a node's BMC at their own host and collect its password at the
    # next action. Turning TLS verification off counts too (the new peer is unverified).
    DESTINATION = ("protocol", "address", "port", "username", "system_id", "verify_tls")
    CREDENTIAL_REQUIRED = (
        "The BMC's {fields} changed: give the password again (the stored password is "
        "never sent to a new destination)."
    )

    # The site is where the credential goes too: a site's worker runs the node's BMC
    # actions on that site's own BMC network (Node.queue; no rack: the central queue's).
    SITE_MOVE_REQUIRED = (
        "{hostname} moves from {old} to {new}: give the BMC password again (that site's "
        "worker would send the stored password on its own BMC network)."
    )
    RACK_MOVE_REFUSED = (
        "{count} node(s) in this rack hold a stored BMC password ({names}): in {new} that "
        "site's worker would send them on its own BMC network. Move those nodes to a rack "
        "in {new} one by one, giving each its BMC password again."
    )

    def __str__(self) -> str:
        return f"{self.protocol}://{self.address}"

    def __repr__(self) -> str:
        # Never let the password reach a log through repr().
        return f"<BMC node={self.node_id} {self.protocol} {self.address}>"

    def save(self, *args, **kwargs) -> None:
        # The last line of defence, for code paths that never call full_clean().
        self.check_credential()
        super().save(*args, **kwargs)
        self._stored_destination = self.destination()
        self._password_given = False

    @classmethod
    def from_db(cls, db, field_names, values):
        bmc = super().from_db(db, field_names, values)
        bmc._stored_destination = bmc.destination()
        return bmc

    def destination(self) -> dict:
        # Loaded fields only: reading a deferred one here would cost a query per row.
        return {name: self.__dict__[name] for name in self.DESTINATION if name in self.__dict__}

    def give_password(self, password: str) -> None:
        """Set the password as given by a person or client for the current destination."""
        self.password = password
        self._password_given = True

    def moved_credential(self) -> list[str]:
        """The destination fields changed since the row was read, while the stored password
        was kept rather than given again (empty: nothing is sent anywhere new)."""
        stored = getattr(self, "_stored_destination", None)
        if stored is None or getattr(self, "_password_given", False) or not self.password:
            return []
        changed = [name for name in stored if getattr(self, name) != stored[name]]
        if changed == ["verify_tls"] and self.verify_tls:
            return []  # turning verification on only makes the same peer safer
        return changed

    def check_credential(self) -> None:
        changed = self.moved_credential()
        if changed:
            fields = ", ".join(name.replace("_", " ") for name in changed)
            raise ValidationError({"password": self.CREDENTIAL_REQUIRED.format(fields=fields)})

    @classmethod
    def site_move_problem(cls, node, rack, password_given: bool) -> str | None:
        """Why putting the stored `node` into `rack` (None: no rack) needs its BMC password
        given again, or None: the move leaves its site, and a password is stored."""
        if node.pk is None or password_given:
            return None
        Node = cls._meta.get_field("node").related_model
        stored = Node.objects.select_related("rack__site").get(pk=node.pk).rack
        old = stored.site if stored is not None else None
        new = rack.site if rack is not None else None
        if old == new:
            return None
        bmc = cls.objects.filter(node_id=node.pk).first()
        if bmc is None or not bmc.password:
            return None
        return cls.SITE_MOVE_REQUIRED.format(
            hostname=node.hostname,
            old=f"site {old}" if old else "no site",
            new=f"site {new}" if new else "no site",
        )

    @classmethod
    def rack_move_problem(cls, rack, site) -> str | None:
        """Why the stored `rack` cannot move to `site`, or None: one request cannot give
        the password of each of its nodes, so a rack whose nodes hold one stays; and a BMC
        address the new site's egress policy refuses keeps it where it is."""
        Rack = cls._meta.get_field("node").related_model._meta.get_field("rack").related_model
        if rack.pk is None or Rack.objects.filter(pk=rack.pk, site=site).exists():
            return None
        bmcs = list(cls.objects.filter(node__rack_id=rack.pk).select_related("node"))
        holders = [b.node.hostname for b in bmcs if b.password]
        if holders:
            names = ", ".join(sorted(holders)[:5]) + (", ..." if len(holders) > 5 else "")
            return cls.RACK_MOVE_REFUSED.format(count=len(holders), names=names, new=site)
        for bmc in bmcs:
            why = bmc.egress_problem(site)
            if why:
                return cls.RACK_EGRESS_REFUSED.format(hostname=bmc.node.hostname, why=why)
        return None

    EGRESS_REFUSED = "Refused by the egress policy (docs/egress.md): {why}."
    MOVE_EGRESS_REFUSED = "{hostname} cannot move to site {site}: its BMC address {why}."
    RACK_EGRESS_REFUSED = "The rack cannot move there: {hostname}'s BMC address {why}."

    def site(self):
        """The site whose worker talks to this BMC (its node's rack's), or None: no rack, or
        no node yet (an enrolment checks its site in inventory.enrolment)."""
        node = self._state.fields_cache.get("node") if self.node_id is None else self.node
        rack = node.rack if node is not None and node.rack_id is not None else None
        return rack.site if rack is not None else None

    def egress_problem(self, site) -> str | None:
        """Why the egress policy (core.egress) refuses this BMC's address in `site`, or None.
        Only addresses are judged here: a name is resolved by the site's worker, on its own
        network, which checks it before every connection (provisioning.services)."""
        try:
            egress.check_destination(self.address, egress.BMC, site, resolve_names=False)
        except egress.Refused as exc:
            return str(exc)
        return None

    def settings_mapping(self) -> dict:
        """The fields as the driver's settings schema names them. IPMI has no TLS, so its
        verify_tls (a column every row has) is left out; a system_id is passed only when
        set, so asking an IPMI BMC for one blade is refused rather than ignored."""
        mapping = {
            "protocol": self.protocol,
            "address": self.address,
            "port": self.port,
            "username": self.username,
            "password": self.password,
        }
        if self.protocol != BMCProtocol.IPMI:
            mapping["verify_tls"] = self.verify_tls
        if self.protocol != BMCProtocol.IPMI or self.system_id:
            mapping["system_id"] = self.system_id
        if self.gpu_system_id:
            mapping["gpu_system_id"] = self.gpu_system_id
        return mapping

    def clean(self) -> None:
        errors: dict[str, str] = {}
        changed = self.moved_credential()
        if changed:
            fields = ", ".join(name.replace("_", " ") for name in changed)
            errors["password"] = self.CREDENTIAL_REQUIRED.format(fields=fields)
        if self.protocol in BMCProtocol.values:  # else the field's own choices check names it
            check = import_string(settings.CORRAL_BMC_SETTINGS_CHECK)
            for name, message in check(self.protocol, self.settings_mapping()).items():
                errors.setdefault(
                    name,
                    message
                    if message[0].isupper()
                    else f"{name.replace('_', ' ').capitalize()} {message}.",
                )
        if self.address and "address" not in errors:
            why = self.egress_problem(self.site())
            if why:
                errors["address"] = self.EGRESS_REFUSED.format(why=why)
        if errors:
            raise ValidationError(errors)
