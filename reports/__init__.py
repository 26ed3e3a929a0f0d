"""Managers' reports built from the lifecycle event log, and the synthetic history
(`manage.py seed_history`) that lets them be shown and benchmarked at fleet scale."""
