"""The "Teachers" group: staff who read the games of their classes' students (admin and reviews), nothing else."""

from __future__ import annotations

from typing import Any

from django.db import migrations

GROUP = "Teachers"
CODENAMES = ("view_game", "view_transcriptentry", "view_vote", "view_classroom")


def create_group(apps: Any, schema_editor: Any) -> None:
    from django.contrib.auth.management import create_permissions

    app_config = apps.get_app_config("simulations")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    Group, Permission = apps.get_model("auth", "Group"), apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="simulations", codename__in=CODENAMES)
    )


def remove_group(apps: Any, schema_editor: Any) -> None:
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [("simulations", "0012_classroom")]

    operations = [migrations.RunPython(create_group, remove_group)]
