"""What class an event belongs to, from its kind and code: the policy matches rows on it.

For XIDs it is NVIDIA's resolution bucket as the XID catalog classes it (the same table
the gates judge by, so a gate and the live policy never disagree about an XID). Pure: no
Django, so it is tested without a database.
"""

from __future__ import annotations

from validation.parsers.xid_catalog import classify as classify_xid

# ECC codes an agent may send for an error the hardware could not correct: NVIDIA's
# double-bit (DBE) / uncorrectable, which the XID catalog handles as XID 48 (rma).
UNCORRECTABLE = frozenset({"uncorrectable", "dbe", "double_bit", "double-bit", "ue"})

# XID numbers the catalog may ever know (NVIDIA's are below 200); past this, a typo.
MAX_XID = 9999

# The longest code stored (HealthEvent.code, and event_class, which is the code for most kinds).
MAX_CODE = 64


class CodeError(ValueError):
    """The code does not fit the kind (an XID that is not a number)."""


def normalise_code(kind: str, code: str) -> str:
    code = code.strip()
    if kind == "xid":
        if not code.isascii() or not code.isdigit() or int(code) > MAX_XID:
            raise CodeError(f"An XID is a number from 0 to {MAX_XID}; got {code!r}.")
        return str(int(code))
    # Lower case can lengthen text ("İ" becomes two characters), so the bound is checked
    # on what is stored, not only on what was sent.
    lowered = code.lower()
    if len(lowered) > MAX_CODE:
        raise CodeError(f"A code is at most {MAX_CODE} characters (in lower case).")
    return lowered


def event_class(kind: str, code: str) -> tuple[str, str]:
    """(class, name) of an event whose code was normalised: ("reboot",
    "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS") for XID 79; ("uncorrectable", "") for a
    double-bit ECC error; the code itself for the other kinds ("critical" from a BMC)."""
    if kind == "xid":
        info = classify_xid(int(code))
        return info.action, info.name
    if kind == "ecc":
        return ("uncorrectable" if code in UNCORRECTABLE else "correctable"), ""
    return code, ""
