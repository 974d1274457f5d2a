#!/usr/bin/env python3
"""Signs one S3 request with botocore's SigV4 (an independent implementation) and prints its
Authorization header; the photo tests compare it with the backend's own signature.
usage: sigv4_check.py METHOD URL AMZDATE PAYLOAD_SHA256 ACCESS_KEY SECRET REGION [NAME:VALUE ...]"""
import datetime
import sys

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

method, url, amz_date, payload, key, secret, region = sys.argv[1:8]
headers = dict(h.split(":", 1) for h in sys.argv[8:])
headers["x-amz-content-sha256"] = payload
request = AWSRequest(method=method, url=url, headers=headers)


class GivenPayload(S3SigV4Auth):
    """Signs the given payload hash (the body itself is not passed to this script)."""

    def payload(self, request):
        return payload


auth = GivenPayload(Credentials(key, secret), "s3", region)
when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")


class Fixed(datetime.datetime):
    @classmethod
    def utcnow(cls):
        return when

    @classmethod
    def now(cls, tz=None):
        return when.replace(tzinfo=tz) if tz else when


import botocore.auth
botocore.auth.datetime.datetime = Fixed
auth.add_auth(request)
print(request.headers["Authorization"])
