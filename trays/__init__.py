"""Racks built as one unit (a GB200 NVL72): templates of slots, the trays that fill them,
and whether the rack as a whole is ready (docs/racks.md)."""
