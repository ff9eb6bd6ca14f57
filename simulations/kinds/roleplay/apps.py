from django.apps import AppConfig


class RoleplayConfig(AppConfig):
    """Installed (settings.MERCURY_KINDS) so Django finds the kind's templates."""

    name = "simulations.kinds.roleplay"
    label = "roleplay"
