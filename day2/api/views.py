"""Campaigns over REST: thin; the pacing lives in day2.campaigns."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from knox.models import AuthToken
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from inventory.api.scoping import check_each
from inventory.permissions import ACT, actor_of

from .. import campaigns, planning, selectors
from ..filtersets import CampaignFilterSet
from . import serializers as s

CONFLICT = OpenApiResponse(description="The campaign's status does not allow it (allowed: …).")


def _actor(request) -> str:
    return actor_of(request.user, via_token=isinstance(request.auth, AuthToken))


class CampaignViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Rolling campaigns (a reimage, a converge): plan one, create one over nodes, a rack,
    a site or the drifted nodes; pause, resume or cancel it. Needs the role that runs
    actions, on every node."""

    queryset = selectors.campaign_queryset()
    filterset_class = CampaignFilterSet
    ordering_fields = ["created", "status", "name"]
    write_capability = ACT
    places = True  # create checks every node it will reimage (check_each)

    def get_serializer_class(self):
        if self.action == "create":
            return s.CampaignCreateSerializer
        if self.action == "plan":
            return s.CampaignPlanRequestSerializer
        if self.action == "retrieve":
            return s.CampaignDetailSerializer
        return s.CampaignSerializer

    def _body(self, request, serializer) -> tuple[dict, list]:
        body = serializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        data["selection"] = dict(data["selection"])
        nodes = campaigns.select_nodes(data["selection"])
        check_each(request, ACT, nodes)
        return data, nodes

    @extend_schema(request=s.CampaignCreateSerializer, responses={201: s.CampaignDetailSerializer})
    def create(self, request, *args, **kwargs):
        data, nodes = self._body(request, s.CampaignCreateSerializer)
        campaign = campaigns.create(
            name=data["name"],
            kind=data["kind"],
            image_ref=data["image"],
            selection=data["selection"],
            actor=_actor(request),
            max_unavailable_pct=data["max_unavailable_pct"],
            pause_failed_pct=data["pause_failed_pct"],
            max_failures=data["max_failures"],
            reason=data["reason"],
            nodes=nodes,
        )
        fresh = selectors.campaign_queryset().get(pk=campaign.pk)
        return Response(s.CampaignDetailSerializer(fresh).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=s.CampaignPlanRequestSerializer, responses={200: s.CampaignPlanSerializer}
    )
    @action(detail=False, methods=["post"])
    def plan(self, request):
        """What a campaign would do, changing nothing: each node with what would change
        (component, from, to) and about how long, the nodes it would leave out and why,
        and the whole campaign's estimate at its pacing. Creating it starts this plan."""
        data, nodes = self._body(request, s.CampaignPlanRequestSerializer)
        found = planning.plan(data["kind"], data["image"], nodes, data["max_unavailable_pct"])
        return Response(s.CampaignPlanSerializer(found.as_api()).data)

    def _move(self, request, verb):
        campaign = self.get_object()
        check_each(request, ACT, [m.node for m in campaign.members.all()])
        body = s.CampaignMoveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        verb(campaign, _actor(request), body.validated_data["reason"])
        fresh = selectors.campaign_queryset().get(pk=campaign.pk)
        return Response(s.CampaignSerializer(fresh).data)

    @extend_schema(
        request=s.CampaignMoveSerializer, responses={200: s.CampaignSerializer, 409: CONFLICT}
    )
    @action(detail=True, methods=["post"])
    def pause(self, request, pk=None):
        """Start no more nodes; those under way finish."""
        return self._move(request, campaigns.pause)

    @extend_schema(
        request=s.CampaignMoveSerializer, responses={200: s.CampaignSerializer, 409: CONFLICT}
    )
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        """Carry on where it paused."""
        return self._move(request, campaigns.resume)

    @extend_schema(
        request=s.CampaignMoveSerializer, responses={200: s.CampaignSerializer, 409: CONFLICT}
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """End it: waiting nodes are not started; recycles under way run to their end."""
        return self._move(request, campaigns.cancel)
