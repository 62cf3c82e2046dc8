"""Token and grant management views: parse, call one service or selector, render.

Who may do what is decided by the services and selectors (``rules.py``), with
the caller's grants read now (``current``): a token that just became a scope's
admin is never refused for a stale cache.
"""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.api.cursors import Walk
from powercontext.api.middleware import request_id_of
from powercontext.api.openapi import documented
from powercontext.api.permissions import current, principal_of
from powercontext.api.requests import parse_body, parse_path, parse_query
from powercontext.principals import Role

from . import schemas, selectors, services
from .inputs import (
    GrantInput,
    TokenExpirySet,
    TokenGrantPath,
    TokenListQuery,
    TokenMint,
    TokenPath,
    TokenRotate,
)
from .renderers import minted_body, token_body

TOKENS = ["tokens"]


class TokenCollectionView(APIView):
    @documented(
        "list_tokens",
        tags=TOKENS,
        query=TokenListQuery,
        answers={200: schemas.TokenPage},
        errors=(400, 403, 410),
    )
    def get(self, request: Request) -> Response:
        query = parse_query(TokenListQuery, request.query_params)
        walk = Walk.of("tokens", query.scope_id)
        page = selectors.token_list(
            caller=current(principal_of(request)),
            scope_id=query.scope_id,
            position=walk.position(query.cursor),
            limit=query.limit,
        )
        return Response(walk.body(page, token_body))

    @documented(
        "mint_token",
        tags=TOKENS,
        body=TokenMint,
        answers={201: schemas.MintedToken},
        errors=(403, 404),
    )
    def post(self, request: Request) -> Response:
        data = parse_body(TokenMint, request)
        token, secret = services.token_mint(
            caller=current(principal_of(request)),
            name=data.name,
            grants=data.grant_pairs(),
            expires_at=data.expires_at,
            request_id=request_id_of(request),
        )
        return Response(minted_body(token, secret), status=201)


class TokenDetailView(APIView):
    @documented(
        "get_token",
        tags=TOKENS,
        path=TokenPath,
        answers={200: schemas.TokenDescriptor},
        errors=(404,),
    )
    def get(self, request: Request, token_id: str) -> Response:
        path = parse_path(TokenPath, token_id=token_id)
        view = selectors.token_get(
            caller=current(principal_of(request)), token_id=path.token_id
        )
        return Response(token_body(view))

    @documented(
        "set_token_expiry",
        tags=TOKENS,
        path=TokenPath,
        body=TokenExpirySet,
        answers={200: schemas.TokenDescriptor},
        errors=(403, 404, 409),
    )
    def patch(self, request: Request, token_id: str) -> Response:
        path = parse_path(TokenPath, token_id=token_id)
        data = parse_body(TokenExpirySet, request)
        view = services.token_expiry_set(
            caller=current(principal_of(request)),
            token_id=path.token_id,
            expires_at=data.expires_at,
            request_id=request_id_of(request),
        )
        return Response(token_body(view))


class TokenRevokeView(APIView):
    @documented(
        "revoke_token",
        tags=TOKENS,
        path=TokenPath,
        answers={200: schemas.TokenDescriptor},
        errors=(403, 404),
    )
    def post(self, request: Request, token_id: str) -> Response:
        path = parse_path(TokenPath, token_id=token_id)
        view = services.token_revoke_by_id(
            caller=current(principal_of(request)),
            token_id=path.token_id,
            request_id=request_id_of(request),
        )
        return Response(token_body(view))


class TokenRotateView(APIView):
    @documented(
        "rotate_token",
        tags=TOKENS,
        path=TokenPath,
        body=TokenRotate,
        answers={201: schemas.MintedToken},
        errors=(403, 404, 409),
    )
    def post(self, request: Request, token_id: str) -> Response:
        path = parse_path(TokenPath, token_id=token_id)
        data = parse_body(TokenRotate, request)
        token, secret = services.token_rotate(
            caller=current(principal_of(request)),
            token_id=path.token_id,
            grace_seconds=data.grace_seconds,
            request_id=request_id_of(request),
        )
        return Response(minted_body(token, secret), status=201)


class TokenGrantCollectionView(APIView):
    @documented(
        "add_token_grant",
        tags=TOKENS,
        path=TokenPath,
        body=GrantInput,
        answers={200: schemas.TokenDescriptor},
        errors=(403, 404, 409),
    )
    def post(self, request: Request, token_id: str) -> Response:
        path = parse_path(TokenPath, token_id=token_id)
        data = parse_body(GrantInput, request)
        view = services.token_grant_set(
            caller=current(principal_of(request)),
            token_id=path.token_id,
            scope_id=data.scope,
            role=Role(data.role),
            request_id=request_id_of(request),
        )
        return Response(token_body(view))


class TokenGrantDetailView(APIView):
    @documented(
        "remove_token_grant",
        tags=TOKENS,
        path=TokenGrantPath,
        answers={200: schemas.TokenDescriptor},
        errors=(403, 404),
    )
    def delete(self, request: Request, token_id: str, scope: str) -> Response:
        path = parse_path(TokenGrantPath, token_id=token_id, scope=scope)
        view = services.token_grant_remove(
            caller=current(principal_of(request)),
            token_id=path.token_id,
            scope_id=path.scope,
            request_id=request_id_of(request),
        )
        return Response(token_body(view))
