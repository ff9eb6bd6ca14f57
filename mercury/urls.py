from __future__ import annotations

from django.contrib import admin
from django.urls import path

from simulations.views import home

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", home.index, name="home"),
]
