"""Reads for the RMA pages, the API and the evidence bundle: the queue's sort orders and
choice lists, the navigation count, a case's history, and its evidence (the run that
convicted it, its failing checks, its XID lines) the page and the bundle both show."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.db.models import Case as When_
from django.db.models import Exists, IntegerField, OuterRef, Q, QuerySet, Value, When

from inventory.models import Site, SiteRole
from inventory.permissions import site_of
from inventory.roles import ACT, ROLE_CAPABILITIES
from validation.models import CheckResult, GateRun
from validation.parsers.base import ParseError
from validation.parsers.xid import XidEvent, parse_xid

from .choices import OPEN_STATUSES, CaseStatus
from .models import Case, CaseEvent

FAILED = "fail"  # a CheckResult's status when the check failed


def case_queryset() -> QuerySet[Case]:
    return Case.objects.select_related("node__rack__site", "assignee").prefetch_related("parts")


def open_count() -> int:
    return Case.objects.filter(status__in=OPEN_STATUSES).count()


def cases_of_node(node_id: int) -> QuerySet[Case]:
    return Case.objects.filter(node_id=node_id).select_related("assignee").order_by("-opened")


def history(case: Case) -> QuerySet[CaseEvent]:
    return CaseEvent.objects.filter(case=case).order_by("created", "id")


# The `sort` values the queue accepts (a whitelist: nothing else reaches order_by). Status
# sorts in workflow order, not alphabetically; priority p1 (critical) first.
_STATUS_ORDER = When_(
    *(When(status=s, then=Value(i)) for i, s in enumerate(CaseStatus.values)),
    output_field=IntegerField(),
)
SORTS: dict[str, tuple] = {
    "sla_due": ("sla_due", "id"),
    "opened": ("opened", "id"),
    "priority": ("priority", "sla_due", "id"),
    "status": (_STATUS_ORDER, "sla_due", "id"),
    "updated": ("updated", "id"),
}
DEFAULT_SORT = "sla_due"


def sorted_cases(queryset: QuerySet[Case], sort: str) -> tuple[QuerySet[Case], str]:
    """Order by a whitelisted key (`-key` descending); anything else falls back to SLA due.
    Returns the queryset and the sort actually applied."""
    key = sort.lstrip("-")
    if key not in SORTS:
        sort, key = DEFAULT_SORT, DEFAULT_SORT
    descending = sort.startswith("-")
    order = [
        (f"-{term}" if descending else term)
        if isinstance(term, str)
        else (term.desc() if descending else term.asc())
        for term in SORTS[key]
    ]
    return queryset.order_by(*order), sort


# The roles whose holders work cases (ACT): technician, integration, admin.
WORKING_ROLES = [role for role, caps in ROLE_CAPABILITIES.items() if ACT in caps]
ANYWHERE = "anywhere"  # assignable_users(): a working role in any site will do


def assignable_users(site: int | None | str = ANYWHERE) -> QuerySet:
    """Who a case can be given to, by username: the one rule of the case page, the queue's
    bulk assign and the API. A case goes to someone who may work it (inventory.permissions'
    ACT, through a group, as a superuser, or a site role in `site`; None, an unracked
    node's case, takes a fleet-wide role) and can log in: an account that is inactive, or
    has no usable password (the token-only service accounts `corral_token` makes), is a
    script, not a person who will pull the GPU."""
    users = get_user_model().objects
    may = Q(is_superuser=True) | Q(
        Exists(
            users.model.groups.through.objects.filter(
                user_id=OuterRef("pk"), group__name__in=WORKING_ROLES
            )
        )
    )
    if site is not None:
        roles = SiteRole.objects.filter(user_id=OuterRef("pk"), role__in=WORKING_ROLES)
        may |= Q(Exists(roles if site == ANYWHERE else roles.filter(site_id=site)))
    return (
        users.filter(may, is_active=True)
        .exclude(password__startswith=UNUSABLE_PASSWORD_PREFIX)
        .exclude(password="")
        .order_by("username")
    )


def unworkable(user, cases: list[Case]) -> list[Case]:
    """The cases `user` may not be given (assignable_users() for each case's site), in one
    query per site among them."""
    by_site: dict[int | None, list[Case]] = {}
    for case in cases:
        by_site.setdefault(site_of(case.node), []).append(case)
    return [
        case
        for site, group in by_site.items()
        if not assignable_users(site).filter(pk=user.pk).exists()
        for case in group
    ]


def refusal(user, cases: list[Case]) -> str | None:
    """Why `user` may not be given these cases (the form's and the API's error), or None."""
    refused = unworkable(user, cases)
    if not refused:
        return None
    shown = ", ".join(str(case) for case in refused[:10])
    more = f" and {len(refused) - 10} more" if len(refused) > 10 else ""
    return (
        f"{user.get_username()} cannot work {shown}{more}: cases go to an active person "
        f"(not an API-token account) holding the {' or '.join(WORKING_ROLES)} role "
        "fleet-wide or in the case's site."
    )


def sites() -> QuerySet[Site]:
    return Site.objects.order_by("name")


# --- the case page's evidence ----------------------------------------------------------

EXCERPT_LINES = 40


@dataclass
class XidRow:
    line: str
    event: XidEvent | None = None
    error: str = ""


@dataclass
class FailingCheck:
    result: CheckResult
    stdout_tail: str
    stderr_tail: str
    stdout_cut: int  # lines left out of the excerpt (the full output is one link away)
    stderr_cut: int


@dataclass
class Evidence:
    run: GateRun | None
    convicting: bool  # the run named on the case, not a stand-in
    failing: list[FailingCheck] = field(default_factory=list)
    xids: list[XidRow] = field(default_factory=list)


def evidence_run(case: Case) -> tuple[GateRun | None, bool]:
    """The run that convicted the case, or (opened by hand) the node's latest finished run,
    and whether it is the convicting one: what the case page shows and the bundle holds."""
    runs = GateRun.objects.select_related("profile")
    if case.gate_run_id:
        run = runs.filter(pk=case.gate_run_id).first()
        if run is not None:
            return run, True
    latest = (
        runs.filter(node_id=case.node_id, finished__isnull=False)
        .order_by("-finished", "-pk")
        .first()
    )
    return latest, False


def _tail(text: str) -> tuple[str, int]:
    lines = text.splitlines()
    return "\n".join(lines[-EXCERPT_LINES:]), max(0, len(lines) - EXCERPT_LINES)


def xid_lines(texts: list[str]) -> list[str]:
    """Every `NVRM: Xid` line of the outputs, in order; a line repeated across checks (each
    reads the same kernel log) once."""
    return list(
        dict.fromkeys(
            line.strip()
            for text in texts
            for line in text.splitlines()
            if "nvrm: xid" in line.lower()
        )
    )


def xid_rows(texts: list[str]) -> list[XidRow]:
    """The XID lines parsed one by one, so one garbled line is shown as garbled instead of
    hiding the others."""
    rows: list[XidRow] = []
    for line in xid_lines(texts):
        try:
            events = parse_xid(line).xids
        except ParseError as exc:
            rows.append(XidRow(line, error=str(exc)))
            continue
        rows.extend(XidRow(line, event=e) for e in events)
    return rows


def case_evidence(case: Case) -> Evidence:
    run, convicting = evidence_run(case)
    if run is None:
        return Evidence(run=None, convicting=False)
    results = list(run.results.order_by("created", "id"))
    failing = []
    for result in results:
        if result.status != FAILED:
            continue
        out, out_cut = _tail(result.stdout)
        err, err_cut = _tail(result.stderr)
        failing.append(FailingCheck(result, out, err, out_cut, err_cut))
    xids = xid_rows([r.stdout for r in results])
    return Evidence(run=run, convicting=convicting, failing=failing, xids=xids)
