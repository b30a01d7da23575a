"""Point the Celery app at another broker for a test (a silent or a refused one), then back."""
from contextlib import contextmanager

from config.celery import app


@contextmanager
def broker_at(url: str):
    """Real sends (not eager) to `url` inside the block. Celery also reads CELERY_BROKER_URL from the environment
    into the write URL (CI: Redis): both are set."""
    conf = app.conf
    saved = (conf.broker_url, conf.broker_write_url, conf.task_always_eager)
    conf.broker_url = conf.broker_write_url = url
    conf.task_always_eager = False
    app._pool = None
    app.amqp._producer_pool = None
    try:
        yield
    finally:
        conf.broker_url, conf.broker_write_url, conf.task_always_eager = saved
        app._pool = None
        app.amqp._producer_pool = None
