import pytest


@pytest.fixture(autouse=True)
def _audited(audited_scene):
    """The trail's own tests read the entries of the rows their factories make."""
