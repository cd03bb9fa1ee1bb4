# Type stubs for the part of flask-smorest (0.47) the service uses.
#
# flask-smorest ships no type information (no py.typed, no stubs package), so
# without these every route decorator is untyped and mypy --strict refuses each
# view.  Signatures follow flask_smorest/{__init__,blueprint,arguments,response,
# spec/__init__}.py; keep them in step when the locked version changes.
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import flask
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow import Schema
from webargs.flaskparser import FlaskParser
from werkzeug.routing import BaseConverter

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])

_SchemaArg = type[Schema] | Schema
_ResponseSchema = type[Schema] | Schema | str | dict[str, Any] | None

class Blueprint(flask.Blueprint):
    ARGUMENTS_PARSER: ClassVar[FlaskParser]
    description: str

    def __init__(self, *args: Any, description: str = ..., **kwargs: Any) -> None: ...
    # the view (a function or a MethodView class) is registered and returned as is
    def route(
        self,
        rule: str,
        *,
        parameters: Sequence[str | dict[str, Any]] | None = None,
        tags: Sequence[str] | None = None,
        **options: Any,
    ) -> Callable[[_T], _T]: ...
    # the wrapper calls the view with the same arguments and returns its result
    @staticmethod
    def doc(**kwargs: Any) -> Callable[[_F], _F]: ...
    # the wrapper passes the parsed arguments to the view as one more argument
    def arguments(
        self,
        schema: _SchemaArg,
        *,
        location: str = "json",
        content_type: str | None = None,
        required: bool = True,
        description: str | None = None,
        example: Any = None,
        examples: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...
    # the wrapper serializes what the view returns into a flask Response
    def response(
        self,
        status_code: int | str,
        schema: _ResponseSchema = None,
        *,
        content_type: str | None = None,
        description: str | None = None,
        example: Any = None,
        examples: Mapping[str, Any] | None = None,
        headers: Mapping[str, Any] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...
    # documentation only: the wrapper calls the view and returns its result
    def alt_response(
        self,
        status_code: int | str,
        response: str | None = None,
        *,
        schema: _ResponseSchema = None,
        content_type: str | None = None,
        description: str | None = None,
        example: Any = None,
        examples: Mapping[str, Any] | None = None,
        headers: Mapping[str, Any] | None = None,
        success: bool = False,
    ) -> Callable[[_F], _F]: ...

class Api:
    DEFAULT_ERROR_RESPONSE_NAME: ClassVar[str]
    DEFAULT_REQUEST_BODY_CONTENT_TYPE: ClassVar[str]
    DEFAULT_RESPONSE_CONTENT_TYPE: str
    ERROR_SCHEMA: ClassVar[type[Schema]]
    # set by init_app (so at construction when an app is given, as here)
    spec: APISpec
    ma_plugin: MarshmallowPlugin

    def __init__(
        self,
        app: flask.Flask | None = None,
        *,
        spec_kwargs: Mapping[str, Any] | None = None,
        config_prefix: str = "",
    ) -> None: ...
    def init_app(
        self, app: flask.Flask, *, spec_kwargs: Mapping[str, Any] | None = None
    ) -> None: ...
    def register_blueprint(
        self,
        blp: Blueprint,
        *,
        parameters: Sequence[str | dict[str, Any]] | None = None,
        **options: Any,
    ) -> None: ...
    def register_converter(
        self,
        converter: type[BaseConverter],
        func: Callable[[BaseConverter], dict[str, Any]],
    ) -> None: ...
    def register_field(self, field: Any, *args: Any) -> None: ...
    def _register_responses(self) -> None: ...
