"""The connection options every corral.fleet module shares (module_utils/corral.py)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  url:
    description:
      - Corral's address, C(https://corral.example.net) (with a path prefix if Corral is
        served under one); C(.../api/v1/) is accepted too.
      - If not given, the environment variable E(CORRAL_URL) is used.
      - Redirects are not followed (the token must not go to another address), so give the
        address Corral answers at.
    type: str
    required: true
  token:
    description:
      - An API token (C(manage.py corral_token NAME --group ROLE) on the Corral host), sent
        in the C(Authorization) header. Its role decides what the task may do.
      - If not given, the environment variable E(CORRAL_TOKEN) is used.
    type: str
    required: true
  validate_certs:
    description:
      - Whether Corral's HTTPS certificate is checked. Leave it on outside a lab.
    type: bool
    default: true
  ca_path:
    description:
      - A PEM file of the certificate authorities that signed Corral's certificate, when it
        is not one the system trusts.
    type: path
  request_timeout:
    description:
      - Seconds to wait for Corral's answer to one request.
    type: float
    default: 60
notes:
  - The modules talk to Corral's REST API (C(/api/v1/)) only, and run where the controller
    can reach Corral; run them on C(localhost) (a play of C(localhost), or C(delegate_to)).
  - A BMC password is only ever sent, never read back; Corral's API does not return it.
"""

    # The action group: `module_defaults: {group/corral.fleet.corral: {url: ..., token: ...}}`.
    ACTION_GROUP = r"""
options: {}
attributes:
  action_group:
    description: Use C(group/corral.fleet.corral) in C(module_defaults) to set the
      connection options of every corral.fleet module once.
    support: full
    membership:
      - corral.fleet.corral
"""
