"""The repair loop's pure half: a failed run's output read as a class, and that class's next fix."""

from evalkit.gather.repair import Diagnosis, LossClass, Tried, diagnose, distribution_of, next_fix

USAGE = """\
ERROR: usage: __main__.py [options] [file_or_dir] [file_or_dir] [...]
__main__.py: error: unrecognized arguments: --cov=semver --cov-report=term-missing --no-cov-on-fail
  inifile: /workspace/setup.cfg
  rootdir: /workspace
"""


def _plugin(option: str) -> str | None:
    return "pytest-cov" if option.startswith(("--cov", "--no-cov")) else None


def test_an_unknown_option_installs_its_plugin_then_drops_the_option():
    found = diagnose(USAGE)
    assert found is not None and found.loss is LossClass.UNKNOWN_OPTION
    first = next_fix(found, Tried(requirements=["pytest"]), _plugin)
    assert first is not None and first.add_requirements == ("pytest-cov",)
    second = next_fix(found, Tried(requirements=["pytest", "pytest_cov"]), _plugin)
    assert second is not None and second.drop_options == ("--cov", "--cov-report", "--no-cov-on-fail")
    dropped = Tried(requirements=["pytest-cov"], dropped_options=["--cov", "--cov-report", "--no-cov-on-fail"])
    assert next_fix(found, dropped, _plugin) is None


def test_an_option_no_plugin_is_known_for_is_dropped_at_once():
    found = diagnose("pytest: error: unrecognized arguments: --strict-data-files\n")
    fix = next_fix(found, Tried())
    assert fix is not None and fix.drop_options == ("--strict-data-files",) and not fix.add_requirements


def test_a_missing_third_party_module_installs_the_distribution_named_for_it():
    found = diagnose("E   ModuleNotFoundError: No module named 'yaml'\n")
    assert found == Diagnosis(LossClass.MISSING_MODULE, "yaml", "ModuleNotFoundError: No module named 'yaml'")
    fix = next_fix(found, Tried(requirements=["pytest"]))
    assert fix is not None and fix.add_requirements == ("PyYAML",)
    assert next_fix(found, Tried(requirements=["pyyaml"])) is None  # already there: nothing left to try


def test_the_projects_own_and_the_standard_librarys_modules_are_never_installed():
    project = "ModuleNotFoundError: No module named 'arrow.parser'\n"
    assert diagnose(project, local=lambda name: name == "arrow") is None
    assert diagnose("ModuleNotFoundError: No module named 'json.decoder'\n") is None
    assert diagnose("ModuleNotFoundError: No module named 'simplejson'\n").subject == "simplejson"


def test_distributions_named_otherwise_come_from_the_vendored_table():
    assert distribution_of("dateutil.parser") == "python-dateutil"
    assert distribution_of("PIL") == "Pillow"
    assert distribution_of("markdown_it") == "markdown-it"  # no row: the module's own name
    assert distribution_of("pytest_benchmark") == "pytest-benchmark"


def test_a_fixture_or_marker_only_a_plugin_defines_installs_that_plugin():
    fixture = diagnose("E       fixture 'mocker' not found\n>       available fixtures: cache, capsys\n")
    assert fixture.loss is LossClass.MISSING_PLUGIN and next_fix(fixture, Tried()).add_requirements == ("pytest-mock",)
    marker = diagnose("'asyncio' not found in `markers` configuration option\n")
    assert marker.subject == "pytest-asyncio"
    coroutine = diagnose("PytestUnhandledCoroutineWarning: async def functions are not natively supported\n")
    assert coroutine.subject == "pytest-asyncio"
    assert diagnose("E       fixture 'my_own_fixture' not found\n") is None


def test_an_interpreter_too_new_moves_to_an_older_base_while_there_is_one():
    found = diagnose("ImportError: cannot import name 'Mapping' from 'collections' (/usr/lib/python3.11/...)\n")
    assert found.loss is LossClass.PYTHON_TOO_NEW
    assert next_fix(found, Tried(older_bases_left=1)).older_python
    last = next_fix(found, Tried(older_bases_left=0))
    assert last is not None and last.hold_to_commit_date
    assert next_fix(found, Tried(older_bases_left=0, held_to_commit_date=True)) is None
    assert diagnose(
        "  File \"/opt/venv/lib/python3.11/site-packages/py/_vendored_packages/apipkg\"\nKeyError: '__spec__'\n"
    )


def test_a_dependency_newer_than_the_code_holds_pypi_to_the_commits_date():
    found = diagnose("ImportError: cannot import name 'soft_unicode' from 'markupsafe' (/opt/venv/...)\n")
    assert found == Diagnosis(
        LossClass.DEPENDENCY_TOO_NEW, "markupsafe", "ImportError: cannot import name 'soft_unicode' from 'markupsafe'"
    )
    assert next_fix(found, Tried()).hold_to_commit_date
    assert next_fix(found, Tried(held_to_commit_date=True, older_bases_left=1)).older_python
    own = "ImportError: cannot import name 'parse_iso' from 'arrow.parser'\n"
    assert diagnose(own, local=lambda name: name == "arrow") is None  # the change's own import: not ours to fix


def test_a_build_without_a_compiler_gets_one_and_the_headers_package():
    found = diagnose("      src/_yaml.c:4:10: fatal error: yaml.h: No such file or directory\n")
    fix = next_fix(found, Tried())
    assert fix.loss is LossClass.NEEDS_BUILD and {"build-essential", "python3-dev", "libyaml-dev"} <= set(
        fix.apt_packages
    )
    assert next_fix(found, Tried(apt_packages=fix.apt_packages)) is None
    gcc = diagnose("error: command 'x86_64-linux-gnu-gcc' failed: No such file or directory\n")
    assert gcc.loss is LossClass.NEEDS_BUILD


def test_a_requirement_pypi_cannot_give_tries_an_older_python_then_is_left_out():
    found = diagnose("ERROR: No matching distribution found for pytest-pep8==1.0.6\n")
    assert found.loss is LossClass.NOT_INSTALLABLE and found.subject == "pytest-pep8"
    assert next_fix(found, Tried(requirements=["pytest-pep8"], older_bases_left=1)).older_python
    found = diagnose("ERROR: No matching distribution found for pytest-pep8\n")
    tried = Tried(requirements=["pytest-pep8"], older_bases_left=0)
    assert next_fix(found, tried).drop_requirements == ("pytest-pep8",)


def test_a_run_whose_tests_simply_fail_is_no_environment_failure():
    assert diagnose("E       assert 1 == 2\nFAILED tests/test_x.py::test_y - assert 1 == 2\n") is None
    assert diagnose("") is None


def test_each_fix_says_what_it_does_for_the_decision_record():
    fix = next_fix(diagnose(USAGE), Tried(), _plugin)
    assert fix.describe() == "unknown option: install pytest-cov"


def test_a_conftest_hook_a_later_pytest_removed_asks_for_the_previous_major():
    found = diagnose(
        "pluggy._manager.PluginValidationError: Plugin '/workspace/conftest.py' for hook 'pytest_collect_file'\n"
        "hookimpl definition: pytest_collect_file(path, parent)\n"
    )
    assert found.loss is LossClass.RUNNER_TOO_NEW
    fix = next_fix(found, Tried(older_runner="<9"))
    assert fix.runner_ceiling == "<9" and fix.describe() == "pytest too new: pytest<9"
    assert next_fix(found, Tried(older_runner="")) is None


def test_a_missing_submodule_of_an_installed_package_is_a_dependency_too_new():
    found = diagnose("E   ModuleNotFoundError: No module named 'marshmallow.compat'\n")
    assert found.loss is LossClass.DEPENDENCY_TOO_NEW and found.subject == "marshmallow.compat"
    assert next_fix(found, Tried()).hold_to_commit_date


def test_data_the_tree_lacks_is_named_and_has_no_fix():
    found = diagnose("FileNotFoundError: [Errno 2] No such file or directory: '/workspace/tests/toml-test/tests'\n")
    assert found.loss is LossClass.MISSING_DATA and next_fix(found, Tried()) is None
