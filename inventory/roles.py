"""The roles and what each allows (inventory.permissions answers with them; the SiteRole
model names them), apart so models can name roles without importing the permission code."""

VIEW, ACT, WRITE, ADMIN = "view", "act", "write", "admin"

ROLE_CAPABILITIES: dict[str, frozenset[str]] = {
    "manager": frozenset({VIEW}),
    "technician": frozenset({VIEW, ACT}),
    "integration": frozenset({VIEW, ACT, WRITE}),
    "admin": frozenset({VIEW, ACT, WRITE, ADMIN}),
}
ROLES = tuple(ROLE_CAPABILITIES)
