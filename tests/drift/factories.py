import factory

from drift.models import Baseline


class BaselineFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Baseline

    name = factory.Sequence(lambda n: f"baseline-{n}")
    node_model = factory.Sequence(lambda n: f"model-{n}")
    gpu_model = ""
    components = factory.LazyFunction(lambda: {"firmware.BMC": "1.45", "driver": "550.90.07"})
