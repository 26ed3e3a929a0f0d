"""The boot server: what machines are answered at /boot/, and how fast.

    endpoints.py  the /boot/ views: iPXE script, chain script, GRUB, NoCloud, phone-home
    serve.py      /boot/ipxe from memory (fleet.asgi's event loop) or from the database
    answers.py    the subject, its scripts and the one local-or-deploy decision both use
    cache.py      the per-process node copy that memory answers from (boot storms)
    records.py    boot-request records, batched in a boot storm; pruning
    origin.py     which addresses a node's phone-home may come from

Imports run one way, endpoints -> serve -> cache -> answers -> records, so no module of
the package imports one that imports it back. Rendering itself is provisioning.boot.
"""
