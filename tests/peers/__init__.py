"""Real peer processes (BMC emulators, misbehaving servers) for tests.

Every fixture here starts a real process or server bound to 127.0.0.1 and always
stops it on teardown; nothing is mocked.
"""
