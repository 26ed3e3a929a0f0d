"""RMA: the break-fix loop for hardware the gates (or a technician) convicted.

A case is opened with its evidence when a node enters `rma`, moves through a vendor
workflow (rma/workflow.py, one table), and on closing sends the node back through the loop
or out of the fleet. This app sits on top: it reads inventory, provisioning and validation
(the evidence); they reach it only through the node actions' dotted-path effects.
"""
