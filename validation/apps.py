from django.apps import AppConfig


class ValidationConfig(AppConfig):
    name = "validation"
    site_scopes = {  # inventory.scope
        "gateprofile": "fleet",
        "gaterun": "node__rack__site",
        "checkresult": "run__node__rack__site",
        "nodehostkey": "node__rack__site",
    }
    verbose_name = "Validation"

    def ready(self) -> None:
        from engine import plans, sweep
        from inventory.panels import Panel
        from inventory.panels import register as register_panel

        from . import actions, events, steps
        from .plans import gate_steps

        actions.register_actions()  # its node action (inventory/actions.py)
        plans.register_steps("validate", gate_steps)

        sweep.register(
            "gate_steps.due",
            steps.send_due_steps,
            None,
            "Sends the gate steps that waited for their node and whose time has come.",
        )
        sweep.register(
            "gate_steps.republish",
            steps.republish_steps,
            "CORRAL_REPUBLISH_SECONDS",
            "Sends the gate steps that never reached a worker, or whose worker died "
            "mid-step (a step runs once: its number says whether it ran).",
        )
        events.register()  # the webhook event types it sends
        # Its panel on the node page.
        register_panel(Panel("node", "gates", "validation:node_gates_panel", 10))
