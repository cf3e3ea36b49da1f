"""mini-swe-agent on one task, non-interactively, as evalkit runs it in the sandbox.

Its own loop (DefaultAgent), its own tools (LocalEnvironment: each command in a new subshell in
the workspace) and its default tool-calling config (mini.yaml: one `bash` tool, finished by
`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`); the model is litellm's `openai/<model>` at
$OPENAI_BASE_URL with $OPENAI_API_KEY: evalkit's recording proxy. No cost tracking (litellm has no
price for evalkit's models; the proxy counts tokens), no step limit (the proxy enforces the
attempt's budgets), one try per request (the proxy's client retries the real endpoint).
Its trajectory is written to $MSWEA_TRAJECTORY, outside the workspace, and the exit status printed.
"""

import logging
import os
import sys
from pathlib import Path

# the packages sit beside this file (pip --target): on sys.path here, not on PYTHONPATH, so the
# commands the agent runs in the workspace see the task's Python as it is
sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))

import litellm  # noqa: E402
from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.config import get_config_from_spec  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.models.litellm_model import LitellmModel  # noqa: E402


class ProxiedModel(LitellmModel):
    # a 400 from the proxy is a spent budget or a refused request: asking again cannot help
    abort_exceptions = [*LitellmModel.abort_exceptions, litellm.exceptions.BadRequestError]


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    litellm.suppress_debug_info = True  # no "Provider List" banner when it finds no price
    config = get_config_from_spec("mini.yaml")
    model = ProxiedModel(
        **{**config["model"], "model_name": "openai/" + os.environ.get("EVALKIT_MODEL", "evalkit"),
           "cost_tracking": "ignore_errors"},
    )
    model.config.model_kwargs = {
        **model.config.model_kwargs, "api_base": os.environ["OPENAI_BASE_URL"], "api_key": os.environ["OPENAI_API_KEY"],
    }
    env = LocalEnvironment(
        cwd=os.getcwd(), env=config["environment"]["env"], timeout=int(os.environ.get("EVALKIT_COMMAND_TIMEOUT", "120"))
    )
    templates = {key: config["agent"][key] for key in ("system_template", "instance_template")}
    trajectory = os.environ.get("MSWEA_TRAJECTORY")
    agent = DefaultAgent(model, env, **templates, step_limit=0, cost_limit=0, output_path=trajectory or None)
    result = agent.run(task=os.environ["EVALKIT_PROMPT"])
    status = result.get("exit_status", "")
    print(f"mini-swe-agent exit status: {status}")
    return 0 if status == "Submitted" else 1


if __name__ == "__main__":
    code = main()
    # its trajectory is saved and its status printed: the interpreter's teardown of litellm's 2,700
    # modules (0.8-0.9 s of CPU per attempt, measured in the image) has nothing left to do for it
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
