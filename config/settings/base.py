"""Settings shared by every environment. Values come from the environment (config.env)."""
from __future__ import annotations

import os
from pathlib import Path

from config.env import BASE_DIR, env_bool, env_broker, env_int, env_list, env_str
from core.paths import shared_data_dir

VAR_DIR = Path(env_str("SIMILIA_VAR_DIR", str(BASE_DIR / "var")))
DATA_DIR = Path(env_str("SIMILIA_DATA_DIR", str(BASE_DIR / "data")))
# An operator's extra data folder (e.g. a checkout's ../shared/data): pilots may pick verses files from its dbbe/.
# $SIMILIA_SHARED_DATA_DIR, read by core.paths, the same helper the pure packages use.
SHARED_DATA_DIR = shared_data_dir()
MODELS_DIR = Path(env_str("SIMILIA_MODELS_DIR", str(VAR_DIR / "models")))
# Whether a model id 'org/name' missing from MODELS_DIR may be downloaded from a hub by a worker: the operator's
# decision, off by default. Off, the hub libraries' own offline switches are set for this process and the
# processes it starts (web, workers), so nothing a researcher names is ever fetched (detection.methods.infrastructure.model_store).
ALLOW_HUB_DOWNLOADS = env_bool("SIMILIA_ALLOW_HUB_DOWNLOADS", False)
if not ALLOW_HUB_DOWNLOADS:
    os.environ["SIMILIA_ALLOW_HUB_DOWNLOADS"] = "0"
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"  # trained/registered models: the only local model files used

DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "core",
    "jobs",
    "annotation",
    "benchmarks",
    "detection",
    "frontend",
    "workbench",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "core.middleware.RejectNulMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.middleware.UploadLimitMiddleware",  # 413 for an oversized upload, before any view's CSRF check
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.middleware.FriendlyErrorPagesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.roles",
            ],
        },
    },
]

# The session's user is read with its roles in one statement (core.authentication); ModelBackend stays listed
# for sessions recorded before, which Django would otherwise log out.
AUTHENTICATION_BACKENDS = ["core.authentication.UserWithRolesBackend", "django.contrib.auth.backends.ModelBackend"]
# Django's database sessions (same table and encoding), read by one plain statement.
SESSION_ENGINE = "core.sessions"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT", str(VAR_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
MEDIA_ROOT = VAR_DIR / "media"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
# The per-file limit (SIMILIA_MAX_UPLOAD_MB) is enforced while the body streams in, not after (core/upload_limit.py).
FILE_UPLOAD_HANDLERS = [
    "core.upload_limit.LimitedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# --- limits on user input: beyond them a request gets a 4xx naming the limit and its setting ------
SIMILIA_MAX_UPLOAD_BYTES = env_int("SIMILIA_MAX_UPLOAD_MB", 20, minimum=1) * 1024 * 1024
SIMILIA_IMPORT_MAX_ROWS = env_int("SIMILIA_IMPORT_MAX_ROWS", 100_000, minimum=1)
SIMILIA_IMPORT_MAX_COLUMNS = env_int("SIMILIA_IMPORT_MAX_COLUMNS", 50, minimum=2)
# Up to SIMILIA_BATCH_JOB_PAIRS pairs (20,000 = 200 candidates) a batch is created in the request;
# above, by an `annotation.batch_create` job; above SIMILIA_MAX_BATCH_PAIRS (500,000 = 1,000 candidates) refused.
SIMILIA_BATCH_JOB_PAIRS = env_int("SIMILIA_BATCH_JOB_PAIRS", 20_000, minimum=1)
SIMILIA_MAX_BATCH_PAIRS = env_int("SIMILIA_MAX_BATCH_PAIRS", 500_000, minimum=1)
# Bootstrap refits the scores export computes in one request when it cannot use the stored analytics result.
SIMILIA_EXPORT_MAX_REFITS = env_int("SIMILIA_EXPORT_MAX_REFITS", 2_000, minimum=0)
# Threads of the analytics job fitting batches side by side (numpy releases the GIL in its solvers).
ANALYTICS_WORKERS = env_int("SIMILIA_ANALYTICS_THREADS", 2, minimum=1)
SIMILIA_JSON_MAX_DEPTH = env_int("SIMILIA_JSON_MAX_DEPTH", 64, minimum=2)

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "core.authentication.ExpiringTokenAuthentication",
    ],
    # Behind a reverse proxy set SIMILIA_NUM_PROXIES so throttles see the client's address, not the proxy's.
    "NUM_PROXIES": env_int("SIMILIA_NUM_PROXIES", 0, minimum=0),
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.DepthLimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "core.pagination.Pagination",  # ?page, ?page_size; one response shape
    "PAGE_SIZE": 100,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.exceptions.exception_handler",  # services' DomainError -> {"detail"}, its status
}

# Password guessing: after this many wrong passwords from one address within SIMILIA_FAILURE_WINDOW
# seconds, the login page / the token endpoint answer 429 until the window ends (core.throttling).
SIMILIA_LOGIN_FAILURE_LIMIT = env_int("SIMILIA_LOGIN_FAILURE_LIMIT", 15, minimum=1)
SIMILIA_TOKEN_FAILURE_LIMIT = env_int("SIMILIA_TOKEN_FAILURE_LIMIT", 25, minimum=1)
SIMILIA_FAILURE_WINDOW = env_int("SIMILIA_FAILURE_WINDOW", 15 * 60, minimum=1)
# API tokens older than this many hours are refused (401; 30 days by default); 0 = tokens do not expire.
SIMILIA_TOKEN_TTL_HOURS = env_int("SIMILIA_TOKEN_TTL_HOURS", 30 * 24, minimum=0)

SPECTACULAR_SETTINGS = {
    "TITLE": "Similia API",
    "DESCRIPTION": "Pairwise verse-similarity annotation, agreement statistics, similarity scores, "
    "benchmarks and detection jobs.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # one name per choice set that shares a field name with another (drf-spectacular warned at each schema load)
    "ENUM_NAME_OVERRIDES": {"StudyItemKindEnum": "annotation.models.StudyItem.Kind", "JobQueueEnum": "jobs.models.Job.Queue",
                            "JobStatusEnum": "jobs.models.Job.Status", "BatchStatusEnum": "annotation.models.Batch.Status",
                            "ScoresSourceEnum": ["stored", "live"]},
}

# --- Celery -------------------------------------------------------------------------------------
# Queues: "interactive" for the work a person waits for (jobs.registry.INTERACTIVE_KINDS), "cpu" for the bulk lane's
# lexical/statistical work, "gpu" for torch models. Tasks take IDs only and all go through jobs.runner, which keeps the
# Job row's status truthful.
CELERY_BROKER_URL = env_broker("CELERY_BROKER_URL", "filesystem://")
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 6 * 3600, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 6 * 3600 + 300, minimum=1)
# Seconds a job of the interactive lane may run before it is asked to stop (then stopped 300 s later), unless
# JOB_TIME_LIMITS names its kind: work a person waits for never holds the lane's slot for hours.
JOB_INTERACTIVE_TIME_LIMIT = env_int("JOB_INTERACTIVE_TIME_LIMIT", 30 * 60, minimum=1)
# Soft limits (seconds) per job kind, sent with each job's message (jobs.registry.time_limits; the hard limit is 300 s
# later, neither beyond CELERY_TASK_SOFT_TIME_LIMIT / CELERY_TASK_TIME_LIMIT, every other bulk kind's limits).
JOB_TIME_LIMITS = {"annotation.batch_create": 30 * 60, "benchmarks.detect.shard": 2 * 3600,
                   "detection.build_corpus_index": 2 * 3600}
# A broker that accepts TCP and never answers must not hang a web request: every blocking socket
# operation gives up after BROKER_SOCKET_TIMEOUT seconds, and a publish is retried a bounded number
# of times (jobs.services marks the Job failed with the reason when it still cannot be sent).
BROKER_SOCKET_TIMEOUT = env_int("BROKER_SOCKET_TIMEOUT", 3, minimum=1)
CELERY_BROKER_CONNECTION_TIMEOUT = BROKER_SOCKET_TIMEOUT
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {
    # Redis: a message taken by a worker that died is handed out again after this many seconds. It
    # must exceed the hard time limit, or a long job still running would be delivered a second time.
    "visibility_timeout": CELERY_TASK_TIME_LIMIT + 3600,
    "socket_timeout": BROKER_SOCKET_TIMEOUT,
    "socket_connect_timeout": BROKER_SOCKET_TIMEOUT,
    "max_retries": 1,
}
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_URL = "filesystem://localhost/"  # a host named: kombu warns on every connection without one
    _broker_dir = VAR_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS.update({
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    })
CELERY_TASK_PUBLISH_RETRY = True
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_DEFAULT_QUEUE = "cpu"
# Late acknowledgement: a message is acknowledged only when its task ends, and a worker that dies
# mid-task gives it back. Redelivery is harmless: jobs.runner claims the row queued → running once,
# and a message for a job that is running or finished does nothing.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# On SIGTERM a worker waits this long for running tasks, then stops them (their messages go back).
CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT = float(env_int("CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT", 5, minimum=0))
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# A running job whose worker has not written a heartbeat for this long is marked failed.
JOB_HEARTBEAT_INTERVAL = env_int("JOB_HEARTBEAT_INTERVAL", 5, minimum=1)
JOB_HEARTBEAT_TIMEOUT = env_int("JOB_HEARTBEAT_TIMEOUT", 60, minimum=2)
# A queued job no worker has claimed for this many seconds is sent again (its message was lost, e.g.
# the worker that took it was killed before claiming the row); after JOB_MAX_DELIVERIES sends the
# job is marked failed with the reason instead.
JOB_REDELIVER_AFTER = env_int("JOB_REDELIVER_AFTER", 600, minimum=1)
JOB_MAX_DELIVERIES = env_int("JOB_MAX_DELIVERIES", 4, minimum=1)
# A person (not staff) with this many jobs queued or running gets 429 for the next one (0: no limit).
SIMILIA_MAX_ACTIVE_JOBS = env_int("SIMILIA_MAX_ACTIVE_JOBS", 10, minimum=0)
# A shard of a sharded job (jobs.sharding) whose worker was lost is sent again, up to this many deliveries.
JOB_SHARD_ATTEMPTS = env_int("JOB_SHARD_ATTEMPTS", 3, minimum=1)
# Called in every worker process before it takes a job (a prefork child as it starts, a solo worker once), so the
# first job on a fresh process does not pay for them: simplemma's Latin dictionary (1.2 s, ~107 MiB) and the default
# detector run once on two tiny texts (imports, word vectors, compiled kernels; perf/first_detection.py).
# SIMILIA_WORKER_PRELOAD=0 turns it off (a worker that only serves Greek or annotation jobs).
JOB_WORKER_PRELOAD = (["detection.latin.lemmatize.preload", "detection.methods.warm_default"]
                      if env_bool("SIMILIA_WORKER_PRELOAD", True) else [])
# Queries per shard of a detection or Loci Similes evaluation job when the request names no shard count
# (jobs.sharding.query_ranges): a 5,000-segment upload runs as 3 shards that the workers share.
JOB_SHARD_QUERIES = env_int("JOB_SHARD_QUERIES", 2000, minimum=1)
# Fitted pool indexes shared by detection and evaluation jobs (detection.methods.infrastructure.index_cache), under
# VAR_DIR/index-cache: at most this many bytes, least recently used entries removed first (0: no cache).
INDEX_CACHE_MAX_BYTES = env_int("SIMILIA_INDEX_CACHE_MAX_BYTES", 2 << 30, minimum=0)

# Caches (login/token failure counts): the process's memory, or a shared Redis when DJANGO_CACHE_URL is set
# (production: redis://redis:6379/1), with socket timeouts so a hung cache never hangs a request.
_cache_url = env_str("DJANGO_CACHE_URL", "")
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if _cache_url:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _cache_url,
                          "OPTIONS": {"socket_timeout": BROKER_SOCKET_TIMEOUT,
                                      "socket_connect_timeout": BROKER_SOCKET_TIMEOUT}}}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "INFO")},
    # Libraries that log every epoch or file at INFO (gensim's Word2Vec prints ~25 lines per model) say only what
    # went wrong; commands print the progress a person needs themselves.
    "loggers": {name: {"level": env_str("SIMILIA_LIBRARY_LOG_LEVEL", "WARNING")}
                for name in ("gensim", "smart_open", "sentence_transformers", "transformers", "faiss", "urllib3",
                             "filelock", "numexpr")},
}
