from django.db import models

from ..fields import EncryptedTextField


class ImportUpload(models.Model):
    """The CSV of an import that a worker carries out, kept with its operation.

    In the database, not on a disk, because the worker that takes the task may be on
    another machine; encrypted, because the file holds BMC passwords; deleted when the
    import ends, whatever the outcome (the nodes' BMCs keep their own encrypted copies).
    """

    operation = models.OneToOneField(
        "engine.Operation", on_delete=models.CASCADE, primary_key=True, related_name="upload"
    )
    content = EncryptedTextField()
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"upload of operation {self.operation_id}"

    def __repr__(self) -> str:
        # Never let the file (BMC passwords) reach a log through repr().
        return f"<ImportUpload operation={self.operation_id}>"
