"""A local stand-in for Sign in with Apple and Google (the real ones cannot be reached from here),
speaking their side of the OpenID Connect redirect flows the web app uses:

- ``GET /apple/authorize`` shows a consent page whose form POSTs ``id_token``, ``state`` and
  ``user`` to ``redirect_uri`` (Apple's ``response_mode=form_post``);
- ``GET /google/authorize`` shows a consent page whose link returns to
  ``redirect_uri#id_token=…&state=…`` (``response_mode=fragment``);
- ``GET /apple/keys`` and ``/google/keys`` serve the JWKS the accounts service verifies against.

Tokens are RS256 JWTs with the providers' issuers, the requested ``client_id`` as audience and
the request's ``nonce`` copied verbatim (Apple's is the SHA-256 the app sent)."""
import base64
import html
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

ISSUERS = {"apple": "https://appleid.apple.com", "google": "https://accounts.google.com"}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class FakeIdentityProviders:
    def __init__(self, port: int):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "fake-" + uuid.uuid4().hex[:8]
        self.requests = []   # the authorize requests seen, for the tests' assertions
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                url = urlparse(self.path)
                provider = url.path.strip("/").split("/")[0]
                if provider not in ISSUERS:
                    return self.send_error(404)
                if url.path.endswith("/keys"):
                    return self.reply(200, "application/json", json.dumps(outer.jwks()))
                if url.path.endswith("/authorize"):
                    q = {k: v[0] for k, v in parse_qs(url.query).items()}
                    outer.requests.append((provider, q))
                    return self.reply(200, "text/html; charset=utf-8", outer.consent(provider, q))
                self.send_error(404)

            def reply(self, status, kind, body):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def jwks(self):
        n = self.key.public_key().public_numbers()
        return {"keys": [{"kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256",
                          "n": b64url(n.n.to_bytes((n.n.bit_length() + 7) // 8, "big")),
                          "e": b64url(n.e.to_bytes(3, "big"))}]}

    def token(self, claims):
        header = b64url(json.dumps({"alg": "RS256", "kid": self.kid, "typ": "JWT"}).encode())
        body = b64url(json.dumps(claims, ensure_ascii=False).encode("utf-8"))   # raw UTF-8, as the providers send
        signature = self.key.sign(f"{header}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{header}.{body}.{b64url(signature)}"

    def consent(self, provider, q):
        now = int(time.time())
        sub = uuid.uuid4().hex
        claims = {"iss": ISSUERS[provider], "aud": q.get("client_id", ""), "sub": sub, "iat": now, "exp": now + 600,
                  "email": f"{provider}-{sub[:10]}@example.com", "nonce": q.get("nonce")}
        if provider == "apple":
            claims["email_verified"] = "true"
            fields = {"id_token": self.token(claims), "state": q.get("state", ""), "code": "unused",
                      "user": json.dumps({"name": {"firstName": "Ada", "lastName": "Apple"}, "email": claims["email"]})}
            inputs = "".join(f'<input type="hidden" name="{k}" value="{html.escape(v)}">' for k, v in fields.items())
            return (f'<!doctype html><title>Sign in with Apple (local)</title><form method="post" action="{html.escape(q.get("redirect_uri", ""))}">'
                    f'{inputs}<button type="submit">Continue as Ada</button></form>')
        claims.update({"email_verified": True, "name": "Gia Müller"})
        back = q.get("redirect_uri", "") + "#" + urlencode({"id_token": self.token(claims), "state": q.get("state", ""),
                                                            "token_type": "Bearer"})
        return (f'<!doctype html><title>Sign in with Google (local)</title>'
                f'<a href="{html.escape(back)}">Continue as Gia</a>')
