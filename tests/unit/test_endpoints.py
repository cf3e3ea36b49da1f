"""What `--model NAME` means: a config entry, a built-in policy, a replay, or an id at an endpoint
(the SDK's environment variables honoured); bad config is one line naming the file and field."""

import pytest

from evalkit.errors import EvalkitError
from evalkit.models.endpoint import Sampling, read_config, resolve_model


def test_config_entry_wins_and_cli_sampling_overrides_it(tmp_path):
    config = tmp_path / "evalkit.toml"
    config.write_text(
        '[models.local-qwen]\nmodel = "qwen2.5-coder"\nbase_url = "http://127.0.0.1:8080/v1"\n'
        'api_key_env = "QWEN_KEY"\ntemperature = 0.7\nseed = 1\n'
    )
    spec = resolve_model("local-qwen", read_config(config), sampling=Sampling(temperature=0.0), config_path=config)
    assert (spec.model, spec.base_url, spec.api_key_env) == ("qwen2.5-coder", "http://127.0.0.1:8080/v1", "QWEN_KEY")
    assert spec.sampling.request_kwargs() == {"temperature": 0.0, "seed": 1}


def test_plain_name_uses_the_sdks_variables(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.5:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    spec = resolve_model("gpt-x", {})
    assert spec.resolved_base_url() == "http://10.0.0.5:8000/v1" and spec.api_key() == "sk-test"
    assert "sk-test" not in str(spec.public())


def test_flag_base_url_beats_the_variable(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://elsewhere/v1")
    assert resolve_model("m", {}, base_url="http://here/v1").resolved_base_url() == "http://here/v1"


def test_missing_key_variable_is_one_clear_error(monkeypatch):
    monkeypatch.delenv("NOPE_KEY", raising=False)
    with pytest.raises(EvalkitError, match="environment variable NOPE_KEY is not set"):
        resolve_model("m", {}, api_key_env="NOPE_KEY").api_key()


def test_builtins_and_replay(tmp_path):
    assert resolve_model("oracle", {}).builtin == "oracle"
    assert resolve_model("null", {}).builtin == "null"
    recorded = tmp_path / "t.jsonl"
    recorded.write_text("")
    assert resolve_model(f"replay:{recorded}", {}).replay_path == recorded
    with pytest.raises(EvalkitError, match="no trajectory file"):
        resolve_model(f"replay:{tmp_path / 'missing.jsonl'}", {})


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[models.a\n", "not valid TOML"),
        ("models = 3\n", "must be a table"),
        ('[models.a]\ntemperature = "hot"\n', "[models.a] `temperature`: expected a number, got 'hot'"),
        ('[models.a]\nbase_urll = "x"\n', "[models.a] unknown key `base_urll` (did you mean `base_url`?); allowed:"),
        ('[models.a]\ntemprature = 1\n', "did you mean `temperature`?); allowed: model, base_url, api_key_env,"),
    ],
)
def test_bad_config_names_file_and_field(tmp_path, text, says):
    config = tmp_path / "evalkit.toml"
    config.write_text(text)
    with pytest.raises(EvalkitError) as caught:
        resolve_model("a", read_config(config), config_path=config)
    assert str(config) in str(caught.value) and says in str(caught.value)
