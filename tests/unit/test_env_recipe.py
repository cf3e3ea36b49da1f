"""The environment recipe of a SWE-bench (repository, version): the right base, the spec's pins and
Debian packages, the caller's requirements, byte-identical output, and one line for what pip
cannot build."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.envs import EnvSpec, spec_for
from evalkit.errors import EvalkitError
from evalkit.sandbox.env_recipe import (
    CA_FILE,
    ENV_PATH,
    INSTALL_NAME,
    REQUIREMENTS_NAME,
    SOURCE_NAME,
    SYSTEM_PTH_NAME,
    render_recipe,
    write_recipe,
)
from evalkit.sandbox.python_bases import choose_base

CA = b"-----BEGIN CERTIFICATE-----\nhost CA\n-----END CERTIFICATE-----\n"
DJANGO_REQUIREMENTS = "-e .\n# test deps\nasgiref >= 3.2\nPillow >= 6.2.0\n\npylibmc; sys.platform != 'win32'\n"


def spec(repo: str, version: str) -> EnvSpec:
    found = spec_for(repo, version)
    assert found is not None
    return found


def render(repo: str, version: str, requirements: str | None = None):
    chosen = spec(repo, version)
    return render_recipe(chosen, choose_base(chosen.python), requirements, CA)


@pytest.mark.parametrize("version", ["3.2", "7.2"])
def test_sphinx_builds_on_bullseye_with_the_spec_pins(version: str) -> None:
    dockerfile = render("sphinx-doc/sphinx", version).dockerfile
    assert "ARG BASE_IMAGE=evalkit/base-bullseye:latest\nFROM ${BASE_IMAGE}\n" in dockerfile
    assert "RUN python -m pip install tox==4.16.0 tox-current-env==0.0.11 Jinja2==3.0.3\n" in dockerfile
    assert f"ENV PATH={ENV_PATH}/bin:$PATH" in dockerfile
    assert 'org.evalkit.env.version="' + version + '"' in dockerfile
    assert 'org.evalkit.env.approximate="false"' in dockerfile
    assert 'org.evalkit.env.swebench="swebench 4.1.0"' in dockerfile


def test_without_a_source_tree_the_repository_is_not_installed() -> None:
    recipe = render("sphinx-doc/sphinx", "3.2")
    assert "sed -i" not in recipe.dockerfile and "-e ." not in recipe.dockerfile
    assert INSTALL_NAME not in recipe.files and SOURCE_NAME not in recipe.files


def test_the_environment_commit_is_edited_installed_at_the_workspace_path_and_emptied() -> None:
    chosen = spec("sphinx-doc/sphinx", "3.2")
    recipe = render_recipe(chosen, choose_base(chosen.python), None, CA, source=b"tar bytes")
    assert recipe.files[SOURCE_NAME] == b"tar bytes"
    script = recipe.files[INSTALL_NAME].decode()
    steps = [line for line in script.splitlines() if not line.startswith("#")]
    edits = [steps.index(edit) for edit in chosen.repo_edits]
    assert steps.index("cd /workspace") < min(edits) and max(edits) < steps.index("python -m pip install -e .[test]")
    assert steps[-1] == "find /workspace -mindepth 1 -delete"
    install_at = recipe.dockerfile.index(f"RUN sh /etc/evalkit/{INSTALL_NAME}")
    assert recipe.dockerfile.index("RUN python -m pip install tox") < install_at < recipe.dockerfile.index("chown")


def test_django_eval_exports_become_env_and_its_locale_is_generated() -> None:
    dockerfile = render("django/django", "3.0", "asgiref\n").dockerfile
    assert "ENV LANG=en_US.UTF-8\n" in dockerfile and "ENV LANGUAGE=en_US:en\n" in dockerfile
    assert "locale-gen" in dockerfile and "install -y --no-install-recommends locales" in dockerfile


def test_apt_packages_only_when_the_spec_has_some() -> None:
    with_graphviz = render("sphinx-doc/sphinx", "7.2").dockerfile
    assert "install -y --no-install-recommends graphviz \\\n" in with_graphviz
    assert "Acquire::https::CAInfo=/etc/evalkit/ca-bundle.crt" in with_graphviz
    assert "apt-get" not in render("sphinx-doc/sphinx", "3.2").dockerfile


def test_pip_and_apt_reach_their_indexes_with_the_copied_ca_bundle() -> None:
    recipe = render("sphinx-doc/sphinx", "7.2")
    assert recipe.files[CA_FILE] == CA
    assert f"COPY {CA_FILE} /etc/evalkit/ca-bundle.crt" in recipe.dockerfile
    assert "ENV PIP_CERT=/etc/evalkit/ca-bundle.crt" in recipe.dockerfile
    assert "--mount" not in recipe.dockerfile  # a mount is outside the content hash


def test_django_installs_the_callers_requirements_as_swebench_keeps_them() -> None:
    recipe = render("django/django", "3.0", DJANGO_REQUIREMENTS)
    assert recipe.files[REQUIREMENTS_NAME] == b"asgiref >= 3.2\nPillow >= 6.2.0\npylibmc; sys.platform != 'win32'\n"
    assert f"RUN python -m pip install -r /etc/evalkit/{REQUIREMENTS_NAME}" in recipe.dockerfile
    # Django 3.0 wants Python 3.6: no Debian serves it, so the nearest newer (3.9) is marked
    assert "FROM ${BASE_IMAGE}" in recipe.dockerfile and "base-bullseye" in recipe.dockerfile
    assert 'org.evalkit.env.approximate="true"' in recipe.dockerfile
    assert "--no-install-recommends locales" in recipe.dockerfile  # its eval commands run locale-gen


def test_same_inputs_give_byte_identical_recipes(tmp_path: Path) -> None:
    first = write_recipe(render("django/django", "3.0", DJANGO_REQUIREMENTS), tmp_path / "a")
    second = write_recipe(render("django/django", "3.0", DJANGO_REQUIREMENTS), tmp_path / "b")
    names = sorted(p.name for p in first.iterdir())
    assert names == ["Dockerfile", CA_FILE, SYSTEM_PTH_NAME, REQUIREMENTS_NAME]
    assert names == sorted(p.name for p in second.iterdir())
    assert all((first / n).read_bytes() == (second / n).read_bytes() for n in names)


def test_write_recipe_removes_files_the_recipe_no_longer_has(tmp_path: Path) -> None:
    folder = write_recipe(render("django/django", "3.0", DJANGO_REQUIREMENTS), tmp_path / "env")
    write_recipe(render("sphinx-doc/sphinx", "7.2"), folder)
    assert sorted(p.name for p in folder.iterdir()) == ["Dockerfile", CA_FILE, SYSTEM_PTH_NAME]


@pytest.mark.parametrize(
    ("repo", "version", "why"),
    [
        ("matplotlib/matplotlib", "3.5", "conda environment.yml"),
        ("sympy/sympy", "1.1", "installed with conda"),
    ],
)
def test_conda_only_specs_are_refused_in_one_line(repo: str, version: str, why: str) -> None:
    with pytest.raises(EvalkitError) as raised:
        render(repo, version)
    message = str(raised.value)
    assert message.startswith(f"{repo} {version}: ") and why in message and "\n" not in message


def test_a_missing_requirements_file_names_where_it_was_looked_for() -> None:
    with pytest.raises(EvalkitError, match=r"^django/django 3\.0: needs tests/requirements/py3\.txt"):
        render("django/django", "3.0", None)


def test_a_requirements_include_must_be_inlined_by_the_caller() -> None:
    with pytest.raises(EvalkitError, match=r"include another file \(-r base\.txt\)"):
        render("django/django", "3.0", "-r base.txt\nasgiref\n")


def test_the_system_python_sees_the_environment_first() -> None:
    """tox-current-env runs `python` through a symlink from its own fake env, where the venv's
    pyvenv.cfg is not found: the base's own Python must then import the environment's packages."""
    recipe = render("sphinx-doc/sphinx", "5.0")
    pth = recipe.files[SYSTEM_PTH_NAME].decode()
    assert pth.startswith("import ") and pth.count("\n") == 1  # a .pth runs one-line imports only
    assert "site.addsitedir('/opt/env/lib/python3.9/site-packages')" in pth
    assert f'"$system_site/000-{SYSTEM_PTH_NAME}"' in recipe.dockerfile
