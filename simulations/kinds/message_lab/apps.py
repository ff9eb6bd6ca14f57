from django.apps import AppConfig


class MessageLabConfig(AppConfig):
    """Installed (settings.MERCURY_KINDS) so Django finds the kind's templates."""

    name = "simulations.kinds.message_lab"
    label = "message_lab"
