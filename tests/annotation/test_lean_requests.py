"""The plain-SQL paths of the two requests annotators make all day (issue 16) give what the ORM and DRF gave:
the judgement input check, the token authentication, rows turned into model instances, compiled query
templates, the batch read with the membership lock."""
import uuid

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher
from django.http import QueryDict
from rest_framework.exceptions import ValidationError

from annotation.api import JudgementInputSerializer, judgement_input

U = "0b0e5f8c-5c34-4a34-9f5e-2f3c1d6a7b80"
GOOD = {"assignment_id": 7, "chosen_verse": 3, "client_uuid": U}

BODIES = [
    GOOD,
    {**GOOD, "response_ms": 900, "pair_id": 12},
    {**GOOD, "response_ms": None, "pair_id": None},
    {**GOOD, "response_ms": 0}, {**GOOD, "response_ms": 86_400_000}, {**GOOD, "extra": "ignored"},
    {**GOOD, "client_uuid": U.replace("-", "")}, {**GOOD, "client_uuid": "{" + U + "}"},
    {**GOOD, "client_uuid": "urn:uuid:" + U}, {**GOOD, "client_uuid": U.upper()},
    # refused, or accepted by the serializer's own conversions
    {}, {"assignment_id": 7}, {"assignment_id": 7, "chosen_verse": 3},
    {**GOOD, "assignment_id": None}, {**GOOD, "assignment_id": "7"}, {**GOOD, "assignment_id": "7.0"},
    {**GOOD, "assignment_id": " 7 "}, {**GOOD, "assignment_id": 7.0}, {**GOOD, "assignment_id": 7.5},
    {**GOOD, "assignment_id": True}, {**GOOD, "assignment_id": [7]}, {**GOOD, "assignment_id": "x" * 2000},
    {**GOOD, "chosen_verse": "three"}, {**GOOD, "chosen_verse": False},
    {**GOOD, "client_uuid": "not-a-uuid"}, {**GOOD, "client_uuid": None}, {**GOOD, "client_uuid": 5},
    {**GOOD, "client_uuid": ""}, {**GOOD, "client_uuid": U + "0"},
    {**GOOD, "response_ms": -1}, {**GOOD, "response_ms": 86_400_001}, {**GOOD, "response_ms": 10**19},
    {**GOOD, "response_ms": "900"}, {**GOOD, "response_ms": True}, {**GOOD, "response_ms": 1.5},
    {**GOOD, "pair_id": "12"}, {**GOOD, "pair_id": False}, {**GOOD, "pair_id": {"id": 1}},
    [GOOD], "a string", None, 5,
]


def _outcome(check, data):
    try:
        return "ok", dict(check(data))
    except ValidationError as exc:
        return "refused", exc.detail


def _serializer(data):
    serializer = JudgementInputSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_judgement_input_is_the_serializers(body):
    assert _outcome(judgement_input, body) == _outcome(_serializer, body)


def test_judgement_input_from_a_form_body_goes_through_the_serializer():
    form = QueryDict(mutable=True)
    form.update({"assignment_id": "7", "chosen_verse": "3", "client_uuid": U})
    assert judgement_input(form) == {"assignment_id": 7, "chosen_verse": 3, "client_uuid": uuid.UUID(U)}
    assert _outcome(judgement_input, QueryDict("assignment_id=x")) == _outcome(_serializer, QueryDict("assignment_id=x"))


# --- over the API, on the database ----------------------------------------------------------------

@pytest.fixture
def world(users, small_project):
    from annotation.services.projects import membership_add

    project, batch = small_project
    membership_add(project=project, username=users["annotator"].username)
    return project, batch


def _first_item(client, batch):
    return client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()["set"]["items"][0]


@pytest.mark.django_db
def test_bad_submits_answer_what_they_answered_before(world, client_for):
    """400 bodies are the serializer's; a missing assignment is 404, a number past 64 bits 400; a retry with the same UUID is
    the stored row (200); the same UUID with another choice, or for another pair, 409; a verse not in the pair 400."""
    from annotation.models import Judgement

    _, batch = world
    client = client_for("annotator")
    item = _first_item(client, batch)
    body = {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"], "client_uuid": str(uuid.uuid4())}
    for bad in ({k: v for k, v in body.items() if k != "chosen_verse"}, {**body, "assignment_id": "seven"},
                {**body, "client_uuid": "x"}, {**body, "response_ms": -5}):
        response = client.post("/api/v1/judgements/", bad, format="json")
        assert response.status_code == 400 and response.json() == _outcome(_serializer, bad)[1]
    response = client.post("/api/v1/judgements/", {**body, "assignment_id": 10**6}, format="json")
    assert response.status_code == 404 and response.json() == {"detail": f"No assignment {10**6}."}
    for huge in (2**63, 10**25):  # past a 64-bit integer: the guarded JSON reader refuses it, naming the field
        for field in ("assignment_id", "chosen_verse"):
            response = client.post("/api/v1/judgements/", {**body, field: huge}, format="json")
            assert response.status_code == 400 and field in str(response.json()), response.json()
    response = client.post("/api/v1/judgements/", {**body, "chosen_verse": 10**6}, format="json")
    assert response.status_code == 400 and "not one of the two candidates" in response.json()["detail"]
    first = client.post("/api/v1/judgements/", body, format="json")
    again = client.post("/api/v1/judgements/", body, format="json")
    assert (first.status_code, again.status_code) == (201, 200) and first.json() == again.json()
    other = item["right"]["id"]
    response = client.post("/api/v1/judgements/", {**body, "chosen_verse": other}, format="json")
    assert response.status_code == 409 and "another choice" in response.json()["detail"]
    response = client.post("/api/v1/judgements/", {**body, "client_uuid": str(uuid.uuid4()), "pair_id": 10**6},
                           format="json")
    assert response.status_code == 409 and "nothing was stored" in response.json()["detail"]
    assert Judgement.objects.filter(assignment_id=item["assignment_id"]).count() == 1


@pytest.mark.django_db
def test_next_set_for_a_missing_batch_or_a_non_member(world, client_for, users):
    _, batch = world
    for missing in (10**6, 2**63, 10**25):
        response = client_for("annotator").post(f"/api/v1/batches/{missing}/next-set/")
        assert response.status_code == 404 and response.json() == {"detail": "No Batch matches the given query."}
    from annotation.models import Membership

    Membership.objects.filter(user=users["annotator"]).delete()
    response = client_for("annotator").post(f"/api/v1/batches/{batch.pk}/next-set/")
    assert response.status_code == 403 and response.json() == {"detail": "You are not an annotator of this project."}


@pytest.mark.django_db
def test_the_batch_read_with_the_membership_lock_is_the_orms(world, users):
    from annotation.models import Batch
    from annotation.services.scheduling import _member_batch

    _, batch = world
    mine = _member_batch(batch.pk, users["annotator"])
    orm = Batch.objects.select_related("project", "reference").get(pk=batch.pk)
    for got, want in ((mine, orm), (mine.project, orm.project), (mine.reference, orm.reference)):
        fields = [f.attname for f in type(want)._meta.concrete_fields]
        assert [getattr(got, f) for f in fields] == [getattr(want, f) for f in fields]
        assert not got._state.adding
    assert mine.created.tzinfo is not None and mine.reference.metadata == orm.reference.metadata


# --- token authentication -------------------------------------------------------------------------

@pytest.mark.django_db
def test_token_user_reads_user_and_roles_in_one_statement(users, django_assert_num_queries):
    from django.contrib.auth import get_user_model

    from core.authentication import token_user
    from core.models import ApiToken
    from core.roles import has_role, user_roles
    from core.services import user_create_or_update
    from tests.conftest import api_key

    both, _ = user_create_or_update(username="both", password="x" * 12, roles=("annotator", "lead"))
    for user in (users["annotator"], users["norole"], both, users["staff"]):
        key = api_key(user)
        with django_assert_num_queries(1):
            got, token = token_user(key)
            roles = user_roles(got)
            has_role(got, "annotator")
        orm = get_user_model().objects.get(pk=user.pk)
        fields = [f.attname for f in get_user_model()._meta.concrete_fields]
        assert [getattr(got, f) for f in fields] == [getattr(orm, f) for f in fields]
        assert roles == set(orm.groups.values_list("name", flat=True)) & {"annotator", "lead", "researcher"}
        stored = ApiToken.objects.get(user=user)
        assert token.digest == stored.digest == ApiToken.digest_of(key) and token.hint == stored.hint == key[:6]
        assert token.user is got and token.created == stored.created and token.created.tzinfo is not None
    assert user_roles(token_user(api_key(both))[0]) == {"annotator", "lead"}
    assert token_user("no-such-key") is None


@pytest.mark.django_db
def test_bad_tokens_are_refused_as_drf_refused_them(users, api_client):
    """403 with DRF's messages (session authentication comes first, so DRF answers 403, not 401)."""
    from tests.conftest import api_key

    api_client.credentials(HTTP_AUTHORIZATION="Token nope")
    response = api_client.get("/api/v1/me/")
    assert response.status_code == 403 and response.json() == {"detail": "Invalid token."}
    user = users["annotator"]
    user.is_active = False
    user.save(update_fields=["is_active"])
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
    response = api_client.get("/api/v1/me/")
    assert response.status_code == 403 and response.json() == {"detail": "User inactive or deleted."}


# --- core.rawsql ----------------------------------------------------------------------------------

@pytest.mark.django_db
def test_query_template_rows_are_the_querysets(small_project, annotators):
    from django.db.models import F

    from annotation.models import Pair
    from core.rawsql import QueryTemplate

    _, batch = small_project
    Pair.objects.filter(batch=batch, rank__lt=4).update(taken=1, first_annotator=annotators[0])

    def build(batch, user):
        return (Pair.objects.filter(batch_id=batch, taken__lt=F("planned") + 1).exclude(first_annotator_id=user)
                .order_by("rank").values_list("id", "rank", "taken")[:3])

    template = QueryTemplate(build, {"batch": batch.pk, "user": annotators[0].pk})
    for ids in ({"batch": batch.pk, "user": annotators[0].pk}, {"batch": batch.pk, "user": annotators[1].pk},
                {"batch": 10**6, "user": annotators[0].pk}):
        assert template.rows(**ids) == list(build(**ids))
    assert template.rows(batch=batch.pk, user=annotators[1].pk)  # some rows, not just empty equal empty


@pytest.mark.django_db
def test_query_template_refuses_sql_that_depends_on_more_than_the_ids(small_project, annotators):
    from annotation.models import Pair
    from core.rawsql import QueryTemplate

    _, batch = small_project

    def ran_a_query(batch, user):  # the ids of pairs read now, written into the SQL: not a template
        return Pair.objects.filter(pk__in=list(Pair.objects.filter(batch_id=batch).values_list("pk", flat=True)))

    with pytest.raises(ValueError, match="depends on more than its ids"):
        QueryTemplate(ran_a_query, {"batch": batch.pk, "user": annotators[0].pk})


@pytest.mark.django_db
def test_instance_from_a_row_is_the_orms(small_project):
    from django.db import connection

    from annotation.models import Verse
    from core import rawsql

    project, _ = small_project
    verse = Verse.objects.filter(project=project).first()
    Verse.objects.filter(pk=verse.pk).update(metadata={"a": [1, "β"]}, verse_number=3)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {rawsql.columns(Verse, 'v')} FROM {Verse._meta.db_table} v WHERE v.id = %s", [verse.pk])
        got = rawsql.instance(Verse, cursor.fetchone())
    want = Verse.objects.get(pk=verse.pk)
    assert [getattr(got, f.attname) for f in Verse._meta.concrete_fields] == [
        getattr(want, f.attname) for f in Verse._meta.concrete_fields]
    assert got.metadata == {"a": [1, "β"]} and not got._state.adding


# --- session authentication -----------------------------------------------------------------------

@pytest.mark.django_db
def test_a_session_reads_its_user_with_the_roles(users, client):
    """A logged-in request: the session, then the user with its roles in one statement; a session recorded by
    ModelBackend before still works (one statement more) and answers the same."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    user = users["annotator"]
    counts, bodies = {}, {}
    for backend in ("core.authentication.UserWithRolesBackend", "django.contrib.auth.backends.ModelBackend"):
        client.force_login(user, backend=backend)
        with CaptureQueriesContext(connection) as captured:
            response = client.get("/api/v1/me/")
        counts[backend], bodies[backend] = len(captured), response.json()
        client.logout()
    assert bodies["core.authentication.UserWithRolesBackend"] == bodies["django.contrib.auth.backends.ModelBackend"]
    assert bodies["core.authentication.UserWithRolesBackend"]["roles"] == ["annotator"]
    assert counts["django.contrib.auth.backends.ModelBackend"] - counts["core.authentication.UserWithRolesBackend"] == 1
    assert counts["core.authentication.UserWithRolesBackend"] == 2  # the session; the user with its roles


class CountingHasher(MD5PasswordHasher):
    """The test settings' hasher, counting the passwords it hashes."""

    calls = 0

    def encode(self, password, salt):
        type(self).calls += 1
        return super().encode(password, salt)


@pytest.mark.django_db
def test_session_logins_and_refusals(users, client, settings):
    from django.contrib.auth import authenticate
    from django.contrib.auth.signals import user_login_failed

    from core.authentication import user_with_roles

    user = users["annotator"]
    user.set_password("right-password-1")
    user.save()
    failed = []

    def record(sender, credentials, **kwargs):
        failed.append(credentials["username"])

    user_login_failed.connect(record, dispatch_uid="t", weak=False)
    settings.PASSWORD_HASHERS = [f"{__name__}.CountingHasher"]
    CountingHasher.calls = 0
    try:
        assert authenticate(None, username=user.username, password="wrong") is None
        assert authenticate(None, username="nobody-at-all", password="wrong") is None
    finally:
        user_login_failed.disconnect(dispatch_uid="t")
    assert failed == [user.username, "nobody-at-all"]
    assert CountingHasher.calls == 2  # one hash per refused login: ModelBackend, listed second, does not repeat it
    logged = authenticate(None, username=user.username, password="right-password-1")
    assert logged == user and logged.backend == "core.authentication.UserWithRolesBackend"
    assert user_with_roles(str(user.pk)) == user and user_with_roles("x") is None and user_with_roles(10**30) is None
    client.force_login(user)
    assert client.get("/api/v1/me/").json()["username"] == user.username
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert client.get("/api/v1/me/").status_code == 403  # an inactive user's session is anonymous


@pytest.mark.django_db
def test_sessions_read_by_one_statement_are_djangos(users, client, django_assert_num_queries):
    import datetime as dt

    from django.contrib.sessions.backends.db import SessionStore as DjangoStore
    from django.contrib.sessions.models import Session

    from core.sessions import SessionStore

    client.force_login(users["annotator"])
    key = client.session.session_key
    with django_assert_num_queries(1):
        mine = SessionStore(key).load()
    assert mine == DjangoStore(key).load() and "_auth_user_id" in mine
    theirs = DjangoStore()
    theirs["k"] = [1, "β"]
    theirs.save()  # written by Django's backend, read by ours
    assert SessionStore(theirs.session_key).load() == {"k": [1, "β"]}
    Session.objects.filter(session_key=key).update(expire_date=Session.objects.get(session_key=key).expire_date
                                                   - dt.timedelta(days=365))
    expired = SessionStore(key)
    assert expired.load() == {} and expired.session_key is None  # as Django's: the key is forgotten
    assert SessionStore("no-such-session-key").load() == {}
    assert client.get("/api/v1/me/").status_code == 403  # the expired session is nobody's


class OneTimeCodeBackend:
    """A backend for other credentials than a username and password, listed after UserWithRolesBackend."""

    def authenticate(self, request, code=None, **kwargs):
        from django.contrib.auth import get_user_model

        return get_user_model().objects.filter(username=code).first() if code else None

    def get_user(self, user_id):
        from django.contrib.auth import get_user_model

        return get_user_model().objects.filter(pk=user_id).first()


@pytest.mark.django_db
def test_credentials_that_are_not_a_password_reach_the_backends_listed_after(users, settings):
    from django.contrib.auth import authenticate

    settings.AUTHENTICATION_BACKENDS = ["core.authentication.UserWithRolesBackend",
                                        f"{__name__}.OneTimeCodeBackend"]
    user = users["annotator"]
    found = authenticate(None, code=user.username)
    assert found == user and found.backend == f"{__name__}.OneTimeCodeBackend"
    assert authenticate(None, code="nobody-at-all") is None
    # a username and password refused by the first backend still stop there: the second is not asked
    assert authenticate(None, username=user.username, password="wrong", code=user.username) is None
