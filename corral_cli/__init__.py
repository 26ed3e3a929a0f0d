"""`corral`: the operator's command line, a client of Corral's REST API only (docs/cli.md).

It talks to a Corral over HTTP with an API token, as any integration does: it imports
nothing of the server (no Django, no app), only the standard library, `requests` and
PyYAML, so it runs on an operator's laptop or in a CI job without the server's code.
"""

__version__ = "0.1.0"
