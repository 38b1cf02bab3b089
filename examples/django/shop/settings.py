"""Settings of the example project: just enough for the orders app and Taskboard."""

import os

from psycopg.conninfo import conninfo_to_dict

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "example-only")
DEBUG = False
ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
INSTALLED_APPS = ["orders"]
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"

# DATABASE_URL (postgresql://user:password@host:port/name) as Django's settings.
_db = conninfo_to_dict(os.environ["DATABASE_URL"])
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",  # psycopg 3
        "NAME": _db.get("dbname", ""),
        "USER": _db.get("user", ""),
        "PASSWORD": _db.get("password", ""),
        "HOST": _db.get("host", ""),
        "PORT": _db.get("port", ""),
    }
}

# Django configures its own loggers only: show Taskboard's ("taskboard") and the app's.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "taskboard": {"handlers": ["console"], "level": "INFO"},
        "orders": {"handlers": ["console"], "level": "INFO"},
    },
}
