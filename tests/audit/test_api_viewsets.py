from tests.api import specs
from tests.api.base import ViewSetTests


class TestAuditLog(ViewSetTests):
    spec = specs.AUDIT_LOG
