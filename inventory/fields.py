"""The encrypted text field moved to `core.fields` (webhook secrets use it too; core is the
app every other one may import). Migrations name `inventory.fields.EncryptedTextField`, so
the names stay importable from here."""

from core.fields import EncryptedTextField, fernet  # noqa: F401
