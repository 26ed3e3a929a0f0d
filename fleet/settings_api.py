"""The API's settings: DRF (authentication, roles, parsers, filters, pagination, errors)
and the OpenAPI schema; apart to keep fleet.settings readable, which imports them."""

from __future__ import annotations

from fleet.env import env

DEBUG = env.bool("DEBUG", default=False)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "fleet.authn.TokenAuthentication",  # knox: hashed, expiring; lockout
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["fleet.api.RolePermission"],
    "DEFAULT_FILTER_BACKENDS": [
        "inventory.api.scoping.SiteScope",  # reads narrowed to the caller's sites (issue 36)
        "core.filters.FilterBackend",  # strict booleans and integers; unknown parameters: 400
        "rest_framework.filters.OrderingFilter",
        "core.filters.SearchFilter",  # declared only where a view searches
    ],
    # JSON only, bounded and storable (fleet.parsers); the CSV import adds multipart.
    "DEFAULT_PARSER_CLASSES": ["fleet.parsers.SafeJSONParser"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "DEFAULT_PAGINATION_CLASS": "fleet.api.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "fleet.exceptions.exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"]
    + (["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Corral API",
    "DESCRIPTION": "Inventory, lifecycle actions and operations of a GPU fleet.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Choice sets used under more than one field name get one component each.
    "ENUM_NAME_OVERRIDES": {
        "HealthKindEnum": "health.choices.Kind",
        "HealthDecisionEnum": "health.choices.Decision",
        "CampaignStatusEnum": "day2.models.campaigns.CampaignStatus",
        "CampaignMemberStatusEnum": "day2.models.campaigns.MemberStatus",
        "CampaignKindEnum": "day2.kinds.CHOICES",  # filled as the apps register kinds
    },
    # Error answers every operation can give, declared once (fleet/schema.py); each
    # operation tagged with its domain, each domain described (fleet/schema_tags.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "fleet.schema.add_error_responses",
        "fleet.schema.query_strings_refuse_nul",
        "fleet.schema_tags.tag_by_domain",
    ],
}
