"""The repair loop: fix by class, run again, a bounded number of rounds, each round recorded; a
repaired environment is where the next candidate of the same recipe starts."""

from evalkit.gather.environment import Environment
from evalkit.gather.era import CURRENT, era_of
from evalkit.gather.repair_loop import EnvChoice, RepairBook, apply_fix, project_names, repaired_tests
from evalkit.gather.validate import CandidateTests

USAGE = "ERROR: usage: __main__.py [options]\n__main__.py: error: unrecognized arguments: --timeout=30\n"
NO_YAML = "ImportError while importing test module\nE   ModuleNotFoundError: No module named 'yaml'\n"
RAN = CandidateTests(fail_to_pass=["tests/test_a.py::test_new"], environment="ran")


def _failed(output: str) -> CandidateTests:
    return CandidateTests(reason="the tests did not run (no report)", environment="failed", output=output)


class Recipes:
    """Recipe writing as gather does it, counted: the image value names the requirements."""

    def __init__(self) -> None:
        self.written: list[tuple[str, ...]] = []

    def write(self, env: Environment, era) -> str:
        self.written.append(tuple(env.requirements))
        return "../_env/" + "+".join(env.requirements)


def _plugin(option: str) -> str | None:
    return "pytest-timeout" if option.startswith("--timeout") else None


def test_a_missing_plugin_is_installed_and_the_tests_run_again():
    outcomes = [_failed(USAGE), RAN]
    seen: list[EnvChoice] = []

    def run(choice: EnvChoice) -> CandidateTests:
        seen.append(choice)
        return outcomes[len(seen) - 1]

    recipes = Recipes()
    start = EnvChoice(Environment(requirements=["attrs"]), CURRENT, "../_env/attrs")
    done = repaired_tests(
        start, run, RepairBook(recipes.write), "2024-05-01T10:00:00+02:00", set().__contains__, _plugin
    )
    assert done.tests is RAN and done.loss == ""
    assert done.rounds == ["unknown option: install pytest-timeout → ran"]
    assert seen[1].env.requirements == ["attrs", "pytest-timeout"] and seen[1].image == "../_env/attrs+pytest-timeout"


def test_the_next_candidate_of_the_same_recipe_starts_repaired():
    recipes = Recipes()
    book = RepairBook(recipes.write)
    start = EnvChoice(Environment(requirements=["attrs"]), CURRENT, "../_env/attrs")
    outcomes = iter([_failed(NO_YAML), RAN])
    repaired_tests(start, lambda c: next(outcomes), book, "2024-05-01", set().__contains__, _plugin)
    images: list[str] = []
    later = repaired_tests(
        start, lambda c: images.append(c.image) or RAN, book, "2024-06-01", set().__contains__, _plugin
    )
    assert images == ["../_env/attrs+PyYAML"] and later.rounds == [] and len(recipes.written) == 1


def test_rounds_are_bounded_and_the_loss_is_named_by_class():
    def run(choice: EnvChoice) -> CandidateTests:  # every round finds another missing module
        return _failed(f"ModuleNotFoundError: No module named 'dep{len(choice.env.requirements)}'\n")

    start = EnvChoice(Environment(), CURRENT, "python")
    done = repaired_tests(start, run, RepairBook(Recipes().write), "2024-05-01", set().__contains__, _plugin, 3)
    assert len(done.rounds) == 3 and all(r.endswith("→ still not running") for r in done.rounds)
    assert done.loss == "missing module" and done.tests.reason


def test_a_failure_no_class_explains_is_lost_as_other_without_a_round():
    start = EnvChoice(Environment(), CURRENT, "python")
    done = repaired_tests(
        start,
        lambda c: _failed("Segmentation fault\n"),
        RepairBook(Recipes().write),
        "2024",
        set().__contains__,
        _plugin,
    )
    assert done.rounds == [] and done.loss == "other"


def test_tests_that_ran_and_failed_are_no_environment_loss():
    failing = CandidateTests(reason="no FAIL_TO_PASS test", environment="ran", output="E  assert 1 == 2\n")
    start = EnvChoice(Environment(), CURRENT, "python")
    done = repaired_tests(start, lambda c: failing, RepairBook(Recipes().write), "2024", set().__contains__, _plugin)
    assert done.rounds == [] and done.loss == ""


def test_the_projects_own_missing_module_is_not_installed():
    start = EnvChoice(Environment(), CURRENT, "python")
    own = _failed("ModuleNotFoundError: No module named 'calc.parser'\n")
    done = repaired_tests(start, lambda c: own, RepairBook(Recipes().write), "2024", {"calc"}.__contains__, _plugin)
    assert done.rounds == [] and done.loss == "other"


def test_an_older_python_and_a_date_hold_are_fixes_of_their_own():
    start = EnvChoice(Environment(requirements=["six"]), era_of("2023-03-01T00:00:00Z"), "../_env/six")
    from evalkit.gather.repair import Fix, LossClass

    env, era = apply_fix(start, Fix(LossClass.PYTHON_TOO_NEW, older_python=True), "2023-03-01T12:00:00+01:00")
    assert env.python_base.suite == "bullseye" and era == start.era  # bookworm's 3.11 → bullseye's 3.9
    env, era = apply_fix(
        start, Fix(LossClass.DEPENDENCY_TOO_NEW, hold_to_commit_date=True), "2023-03-01T12:00:00+01:00"
    )
    assert era.pypi_as_of == "2023-03-01T11:00:00Z" and era.name == start.era.name


def test_the_projects_names_come_from_its_tree_and_what_the_change_adds():
    names = project_names(["src/calc/__init__.py", "tests/helpers.py", "setup.py"], ["calc/extra.py"])
    assert {"src", "calc", "tests", "helpers", "setup", "extra"} <= names


def test_the_pytest_before_todays_is_the_previous_major():
    from evalkit.gather.repair_loop import older_runner

    assert older_runner(CURRENT) == "<9"
    assert older_runner(era_of("2025-01-01T00:00:00Z")) == "<8"
    assert older_runner(era_of("2012-01-01T00:00:00Z")) == ""


def test_a_pin_of_pytests_own_dependency_does_not_hold_pytest_back():
    """`py==1.4.12` (jmespath, 2013) made pip choose pytest 2.3, which evalkit's guard cannot load in."""
    from evalkit.gather.environment import recipe_files

    env = Environment(requirements=["nose==1.2.1", "py==1.4.12", "pluggy>=0.3,<0.4"])
    lines = recipe_files(env, "jmespath", era_of("2016-01-01T00:00:00Z"), "pip.whl")["requirements.txt"].splitlines()
    assert lines == ["nose==1.2.1", "py", "pluggy", "pytest<4"]
