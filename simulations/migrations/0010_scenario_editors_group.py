"""The "Scenario editors" group: may draft and publish scenarios; other staff can only read them."""

from __future__ import annotations

from typing import Any

from django.db import migrations

GROUP = "Scenario editors"
CODENAMES = (
    "add_scenariodraft",
    "change_scenariodraft",
    "delete_scenariodraft",
    "view_scenariodraft",
    "publish_scenariodraft",
    "view_scenarioversion",
)


def create_group(apps: Any, schema_editor: Any) -> None:
    from django.contrib.auth.management import create_permissions

    # Permissions are normally created after all migrations; the group needs them now.
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
    dependencies = [
        ("simulations", "0009_scenario_draft"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_group, remove_group)]
