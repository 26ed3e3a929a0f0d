import factory
from django.utils import timezone

from drift.models import Baseline, DriftEvent
from tests.factories import ModelFactory, NodeFactory


class BaselineFactory(ModelFactory):
    class Meta:
        model = Baseline

    name = factory.Sequence(lambda n: f"baseline-{n}")
    node_model = factory.Sequence(lambda n: f"model-{n}")
    gpu_model = ""
    components = factory.LazyFunction(lambda: {"firmware.BMC": "1.45", "driver": "550.90.07"})


class DriftEventFactory(ModelFactory):
    class Meta:
        model = DriftEvent

    node = factory.SubFactory(NodeFactory)
    component = "firmware.BMC"
    kind = "detected"
    expected = "1.45"
    observed = "1.40"
    at = factory.LazyFunction(timezone.now)
