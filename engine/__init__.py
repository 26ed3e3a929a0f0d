"""The work engine: what every multi-step flow shares, and nothing of any domain.

Today it holds the one retry policy (`policy`) and the one sweep (`sweep`) that re-drives
work: each app registers its parts at start-up (sending deferred work when due, re-sending
lost messages, deadlines, waits), and one beat entry runs them all. docs/architecture.md
has the engine in a screen.
"""
