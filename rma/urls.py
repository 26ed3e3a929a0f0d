from django.urls import path

from .views import case, queue

app_name = "rma"

urlpatterns = [
    path("rma/", queue.case_list, name="case_list"),
    path("rma/assign/", queue.case_assign, name="case_assign"),
    path("rma/nodes/<int:node_pk>/cases/", queue.node_cases, name="node_cases"),
    path("rma/<int:pk>/", case.case_detail, name="case_detail"),
    path("rma/<int:pk>/transitions/<slug:name>/", case.case_transition, name="case_transition"),
    path("rma/<int:pk>/notes/", case.case_note, name="case_note"),
    path("rma/<int:pk>/edit/", case.case_edit, name="case_edit"),
    path("rma/<int:pk>/parts/", case.case_part, name="case_part"),
]
