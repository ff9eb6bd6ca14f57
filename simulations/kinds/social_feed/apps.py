from django.apps import AppConfig


class SocialFeedConfig(AppConfig):
    """Installed (settings.MERCURY_KINDS) so Django finds the kind's templates."""

    name = "simulations.kinds.social_feed"
    label = "social_feed"
