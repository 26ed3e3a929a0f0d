import django_filters

from .models import Attestation, AttestationStatus


class AttestationFilterSet(django_filters.FilterSet):
    """One filterset for the API and the pages: by node (id or hostname) and status."""

    node = django_filters.NumberFilter(field_name="node_id")
    hostname = django_filters.CharFilter(field_name="node__hostname")
    status = django_filters.MultipleChoiceFilter(choices=AttestationStatus.choices)

    class Meta:
        model = Attestation
        fields = ["node", "hostname", "status"]
