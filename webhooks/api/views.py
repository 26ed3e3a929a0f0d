"""Webhook subscription endpoints: thin; rules in webhooks.services, shapes in serializers.

Permissions (RolePermission): reads need `view`; every write is admin's, because a
subscription decides where the fleet's events (node names, addresses) are sent."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.actors import request_actor

from .. import services
from ..models import Delivery, WebhookSubscription
from . import serializers as s


class WebhookViewSet(viewsets.ModelViewSet):
    queryset = WebhookSubscription.objects.all()
    serializer_class = s.WebhookSubscriptionSerializer
    ordering_fields = ["id", "created", "url"]
    search_fields = ["url", "description"]
    filterset_fields = ["enabled", "failing"]
    write_capability = "admin"  # core imports no app: inventory.permissions.ADMIN

    @extend_schema(responses={201: s.CreatedWebhookSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = self.get_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        sub, secret = services.create_subscription(
            actor=request_actor(request), **body.validated_data
        )
        data = s.CreatedWebhookSerializer(sub).data
        data["secret"] = secret
        return Response(data, status=status.HTTP_201_CREATED)

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        sub = self.get_object()
        body = self.get_serializer(sub, data=request.data, partial=kwargs.get("partial", False))
        body.is_valid(raise_exception=True)
        sub = services.update_subscription(sub, body.validated_data, request_actor(request))
        return Response(self.get_serializer(sub).data)

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        services.delete_subscription(self.get_object(), request_actor(request))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses=s.SecretSerializer)
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request: Request, pk: str | None = None) -> Response:
        """A new secret, used from the next attempt on; the old one stops working."""
        secret = services.rotate_secret(self.get_object(), request_actor(request))
        return Response(s.SecretSerializer({"secret": secret}).data)

    @extend_schema(
        responses=s.DeliverySerializer(many=True),
        parameters=[OpenApiParameter("status", str, enum=["pending", "succeeded", "failed"])],
    )
    @action(detail=True, methods=["get"], filterset_fields=[], search_fields=[])
    def deliveries(self, request: Request, pk: str | None = None) -> Response:
        """This subscription's deliveries, newest first."""
        sub = self.get_object()
        query = s.DeliveryFilterSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = Delivery.objects.filter(subscription=sub).select_related("event")
        if "status" in query.validated_data:
            rows = rows.filter(status=query.validated_data["status"])
        page = self.paginate_queryset(rows.order_by("-id"))
        return self.get_paginated_response(s.DeliverySerializer(page, many=True).data)

    @extend_schema(request=None, responses={202: s.DeliverySerializer})
    @action(
        detail=True,
        methods=["post"],
        url_path=r"deliveries/(?P<delivery_id>[0-9]+)/redeliver",
    )
    def redeliver(
        self, request: Request, pk: str | None = None, delivery_id: str | None = None
    ) -> Response:
        """Send this delivery again now, with the same webhook-id."""
        sub = self.get_object()
        delivery = get_object_or_404(
            Delivery.objects.select_related("event", "subscription"),
            pk=delivery_id,
            subscription=sub,
        )
        delivery = services.redeliver(delivery, request_actor(request))
        return Response(s.DeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)
