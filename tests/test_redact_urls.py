"""A secret in a URL's query or fragment (issue 35 item 4): the values of secret-named
parameters are removed in any scheme's URL, wherever the redactor runs; the rest of the URL,
and a URL with no secret parameter, stay readable."""

import pytest

from router.redaction.redactor import REDACTED, Redactor

VALUE = "qz81urlsecret4471"  # lower case and digits: no other layer would take it
SHAPES = {
    "api_key": f"GET https://api.example.com/v1/x?api_key={VALUE}&x=1 200",
    "access_token": f"https://auth.example.com/cb?state=ok&access_token={VALUE}",
    "token in wss": f"connecting to wss://events.example.com/?token={VALUE}",
    "key": f"https://maps.example.com/api?q=paris&key={VALUE}",
    "sig": f"https://blob.example.com/c/x.log?sv=2024-01-01&sig={VALUE}&se=2030",
    "password": f"http://ci.example.com/login?user=deploy&password={VALUE}#top",
    "fragment": f"https://app.example.com/#access_token={VALUE}&expires_in=3600",
    "signed s3": f"https://s3.example.com/b/o?X-Amz-Credential=AKID%2F2024&X-Amz-Signature={VALUE}",
    "postgres": f"postgres://db.internal/app?sslmode=require&password={VALUE}",
    "quoted in json": f'{{"url": "https://api.example.com/x?apikey={VALUE}"}}',
}
READABLE = [
    "https://docs.example.com/merge/gap?section=2&lang=en",
    "https://example.com/search?q=password+reset&page=2",
    "see https://github.com/org/repo/pull/35#issuecomment-123 for the fix",
    "https://api.example.com/v1/x?key=&limit=10",
]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_secret_named_parameters_value_is_removed_and_the_url_kept(shape):
    redactor = Redactor(environ={})
    out = redactor.text(SHAPES[shape])
    assert VALUE not in out and f"={REDACTED}" in out, out
    assert out.split("?")[0].split("#")[0] == SHAPES[shape].split("?")[0].split("#")[0]  # scheme, host, path


def test_only_the_secret_parameters_go():
    out = Redactor(environ={}).text(SHAPES["sig"])
    assert out == f"https://blob.example.com/c/x.log?sv=2024-01-01&sig={REDACTED}&se=2030"


@pytest.mark.parametrize("url", READABLE)
def test_a_url_without_a_secret_parameter_stays_readable(url):
    redactor = Redactor(environ={})
    assert redactor.text(url) == url
    assert redactor.removed == {}
