"""`evalkit gather` on a repository with a known history (tests/shop_repo.py): exactly the expected
tasks and rejection reasons; the tasks validate, the oracle resolves them and null does not; a
repository with dependencies gets an image recipe that installs them."""

import json

import pytest
from conftest import run_evalkit
from shop_repo import EXPECTED_REJECTIONS, EXPECTED_TASK_SUBJECTS, FLAKY_TEST, build_shop_repo

from evalkit.gather.environment import Environment, detect_environment, write_recipe
from evalkit.sandbox.docker.images import resolve_image
from evalkit.tasks import load_suite

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def gathered(docker_engine, tmp_path_factory):
    root = tmp_path_factory.mktemp("gather")
    repo = build_shop_repo(root / "shop")
    out = root / "suite"
    # 8 runs before and after: a coin-flip test escapes detection with probability 2/2^8
    result = run_evalkit("gather", repo, "--out", out, "--min-lines", "20", "--runs", "8")
    assert result.returncode == 0, result.stderr[-3000:]
    return result, out


def test_exactly_the_expected_tasks_and_rejections(gathered):
    result, out = gathered
    report = json.loads((out / "gather-report.json").read_text())
    suite = load_suite(out)
    assert not suite.skipped
    subjects = [t.metadata["original_message"].splitlines()[0] for t in suite.tasks]
    assert sorted(subjects) == sorted(EXPECTED_TASK_SUBJECTS)
    assert report["scanned_commits"] == 6 and len(report["accepted"]) == 2
    rejected = {r["subject"]: (r["stage"], r["reason"]) for r in report["rejected"]}
    assert rejected.keys() == EXPECTED_REJECTIONS.keys()
    for subject, (stage, reason) in EXPECTED_REJECTIONS.items():
        assert rejected[subject][0] == stage and rejected[subject][1].startswith(reason), subject
    assert "4 commits left out" in result.stdout


def test_tasks_have_short_prompts_hidden_tests_and_no_flaky_test(gathered):
    _, out = gathered
    tasks = {t.metadata["original_message"].splitlines()[0]: t for t in load_suite(out).tasks}
    discounts = tasks["Add discount codes to the cart (#12)"]
    assert discounts.prompt.startswith("Add discount codes to the cart.") and "#12" not in discounts.prompt
    assert "Signed-off-by" not in discounts.prompt and "tests" not in discounts.prompt.lower()
    assert len(discounts.tests.fail_to_pass) == 4 and "tests/test_discounts.py" in discounts.test_patch
    assert "tests/test_cart.py::test_total" in discounts.tests.pass_to_pass  # a neighbouring module guards the cart
    assert "tests/" not in discounts.patch and "shop/discounts.py" in discounts.patch
    # the interface gives the new names the tests call, which the commit message does not
    assert "- `def Cart.apply_code(self, code)`" in discounts.prompt
    assert "`class UnknownCode(KeyError)`" in discounts.prompt
    assert "return" not in discounts.prompt and "underspecified" not in discounts.metadata
    shipping = tasks["feat(shipping): estimate shipping by weight"]
    assert shipping.prompt.startswith("Estimate shipping by weight.")
    assert FLAKY_TEST not in shipping.tests.fail_to_pass and FLAKY_TEST in shipping.metadata["flaky_tests"]
    assert all(t.source.base_commit for t in tasks.values())
    # authored in 2024-03: the era of pytest<9, in a recipe of its own (one for both tasks)
    assert {(t.image, t.metadata["era"]) for t in tasks.values()} == {(discounts.image, "pytest<9")}
    assert "/_env/shop-" in discounts.image  # load_suite resolves it


def test_gathered_tasks_validate_and_prove_themselves(gathered, tmp_path):
    _, out = gathered
    validated = run_evalkit("tasks", "validate", out, "--json")
    assert validated.returncode == 0, validated.stderr[-2000:]
    assert all(row["valid"] for row in json.loads(validated.stdout))
    ran = run_evalkit("run", "--suite", out, "--model", "oracle", "--model", "null", "--run-id", "g", "--out", tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "g" / "results.jsonl").read_text().splitlines()]
    assert {(r["model"], r["resolved"]) for r in rows} == {("oracle", True), ("null", False)}


def test_a_repository_with_dependencies_gets_a_recipe_that_installs_them(docker_engine, tmp_path):
    files = {"requirements-test.txt": "tomli-w==1.0.0\n", "pyproject.toml": '[project]\nname = "x"\n'}
    env = detect_environment(files.get, lambda path: path == "src")
    image = write_recipe(env, "deps-demo", tmp_path / "suite")
    recipe = (tmp_path / "suite" / "task" / image).resolve()
    assert not (recipe / "ca-bundle.crt").exists() and not list(recipe.glob("*.whl"))  # joined at build time
    tag = resolve_image(docker_engine, str(recipe))
    assert resolve_image(docker_engine, str(recipe)) == tag  # cached by content hash
    output = docker_engine.containers.run(
        tag, ["python3", "-c", "import tomli_w, pytest, sys; print(tomli_w.dumps({'a': 1}), sys.path[1])"],
        remove=True, user="1000", network_disabled=True,
    )  # fmt: skip
    assert output.decode().split() == ["a", "=", "1", "/workspace/src"]


def test_an_installable_project_gets_its_metadata_at_test_time(docker_engine, tmp_path):
    pyproject = (
        '[build-system]\nrequires = ["setuptools>=61", "setuptools-scm>=8"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "demo-pkg"\ndynamic = ["version"]\n[tool.setuptools_scm]\n'
    )
    env = detect_environment({"pyproject.toml": pyproject}.get, lambda path: False)
    recipe = (tmp_path / "suite" / "task" / write_recipe(env, "installable", tmp_path / "suite")).resolve()
    tag = resolve_image(docker_engine, str(recipe))
    project = (
        f"cd /workspace && printf '%s' '{pyproject}' > pyproject.toml && mkdir demo_pkg && "
        "echo 'import importlib.metadata as m; VERSION = m.version(\"demo-pkg\")' > demo_pkg/__init__.py"
    )
    check = "python -c 'import demo_pkg; print(demo_pkg.VERSION, demo_pkg.__file__)'"
    command = env.test_command.replace("python -m pytest", check)  # what runs before pytest, offline
    output = docker_engine.containers.run(
        tag, ["bash", "-c", f"{project} && {command}"], remove=True, user="1000", network_disabled=True
    )
    assert output.decode().split() == ["0.0.0", "/workspace/demo_pkg/__init__.py"]


def test_a_requirement_that_breaks_the_held_set_costs_only_itself(docker_engine, tmp_path):
    """One line PyPI cannot give (a pin of a release that never was) must not move every other
    dependency to today's releases: the rest stays held to the era's date, a requirement first
    released after it comes from today's PyPI, the bad one is left out, and pytest keeps its line."""
    from evalkit.gather.era import Era

    era = Era("test-2019", "<5", "2019-01-01T00:00:00Z", python="bullseye")
    env = Environment(requirements=["six", "tomli", "pytest-pep8==99.0"])
    recipe = (tmp_path / "suite" / "task" / write_recipe(env, "held", tmp_path / "suite", era=era)).resolve()
    tag = resolve_image(docker_engine, str(recipe))
    probe = "import six, tomli, pytest; print(six.__version__, pytest.__version__.split('.')[0])"
    said = docker_engine.containers.run(tag, ["python3", "-c", probe], remove=True, user="1000", network_disabled=True)
    six, pytest_major = said.decode().split()  # tomli imports: first released in 2021, from today's PyPI
    assert six == "1.12.0" and int(pytest_major) < 5  # six as of 2019-01-01 (today's is 1.17), pytest on its line
    shown = docker_engine.containers.run(
        tag, ["sh", "-c", "python3 -m pip show pytest-pep8 >/dev/null 2>&1 && echo there || echo absent"],
        remove=True, user="1000", network_disabled=True,
    )  # fmt: skip
    assert shown.decode().strip() == "absent"
