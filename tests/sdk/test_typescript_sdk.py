"""The TypeScript SDK, built from the committed spec as ``make sdk`` builds it
(openapi-typescript + openapi-fetch + typescript, pinned by
sdk/typescript/package-lock.json), used by a program that compiles with
``tsc --strict`` without casts, ``any`` or non-null assertions and plays round 1
of a game against a live service, in AUTH_MODE=open with seats' tokens and in
AUTH_MODE=apps with an app's key and its players' tokens (tests/sdk/play.ts); the README's and
docs/SDK.md's examples compile beside it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sdk.build import NODE_MODULES, typescript_client
from tests.sdk.conftest import AppsService, escapes, run

PROGRAM = Path(__file__).with_name("play.ts")
SDK_DOC = Path(__file__).resolve().parents[2] / "docs" / "SDK.md"
FORBIDDEN = {
    "an `as` cast": r"\bas\b",
    "any": r"\bany\b",
    "a non-null assertion": r"[\w)\]]!(?!=)",
}

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="Node.js and npm are not installed (.ci/run installs Debian's nodejs and npm)",
)

APP_TSCONFIG = {
    "compilerOptions": {
        "target": "ES2022",
        "module": "NodeNext",
        "moduleResolution": "NodeNext",
        "strict": True,
        "noEmitOnError": True,
        "outDir": "dist",
        "rootDir": "src",
        "types": ["node"],
    },
    "include": ["src"],
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A program using the built package as an integrator's app would: the
    package (and the tools' @types) under its node_modules, compiled strict,
    with the package README's example beside it."""
    root = tmp_path_factory.mktemp("ts")
    package = typescript_client(root / "three-thirteen-client")
    app = root / "app"
    (app / "src").mkdir(parents=True)
    (app / "node_modules").mkdir()
    (app / "node_modules" / "three-thirteen-client").symlink_to(package)
    (app / "node_modules" / "@types").symlink_to(NODE_MODULES / "@types")
    (app / "package.json").write_text(json.dumps({"type": "module", "private": True}))
    (app / "tsconfig.json").write_text(json.dumps(APP_TSCONFIG))
    shutil.copyfile(PROGRAM, app / "src" / "play.ts")
    readme = (package / "README.md").read_text()  # its example compiles too
    (app / "src" / "readme.ts").write_text(readme.split("```ts\n", 1)[1].split("```", 1)[0])
    examples = SDK_DOC.read_text().split("```ts\n")[1:]  # and docs/SDK.md's
    assert examples, "docs/SDK.md shows the TypeScript client following a game and retrying"
    for number, example in enumerate(examples):
        (app / "src" / f"sdk_doc_{number}.ts").write_text(example.split("```", 1)[0])
    run([str(NODE_MODULES / ".bin" / "tsc"), "-p", ".", "--strict"], app)
    return app


def test_the_program_has_no_casts_any_or_non_null_assertions() -> None:
    source = PROGRAM.read_text()
    assert escapes(source, "//", FORBIDDEN) == []
    assert "@ts-" not in source  # no @ts-ignore, @ts-expect-error, @ts-nocheck


def test_the_escape_check_finds_each_escape() -> None:
    found = [
        escapes(line, "//", FORBIDDEN)
        for line in ("const a = b as Move;", "let a: any;", "view.arrangement!.points")
    ]
    assert found == [["an `as` cast"], ["any"], ["a non-null assertion"]]
    assert escapes('if (a !== b) { log("as any!"); } // as any', "//", FORBIDDEN) == []


def test_the_typed_program_plays_round_one(app: Path, service_url: str) -> None:
    """AUTH_MODE=open: anyone creates the game, its seats' tokens play it."""
    assert "played round 1 of" in run(["node", "dist/play.js", service_url], app)


def test_the_typed_program_plays_round_one_in_apps_mode(
    app: Path, apps_service: AppsService
) -> None:
    """The app's key creates the game for two players, whose tokens play it."""
    command = ["node", "dist/play.js", apps_service.url, apps_service.app_key]
    assert "played round 1 of" in run(command, app)
