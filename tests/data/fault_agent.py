"""A misbehaving agent for `--agent command:...` fault tests (standard library only: the sandbox
has no openai SDK). It asks the proxy which model it serves (`GET $OPENAI_BASE_URL/models`) and
misbehaves the way that model's name says:

    hang         sleeps forever, never calls the model
    flood        writes 250 MB to stdout and 50 MB to stderr, then solves the task and exits 0
    fork         leaves daemons behind (one writing into the shell's output, one into the
                 workspace once the agent is gone), solves the task and exits 0
    crash_early  exits 3 before any model call
    crash_late   calls the model once, then exits 4
    slow         sleeps 4 s, then solves the task and exits 0
    spam         calls the model once, then keeps sending it a new 1 MB conversation, whatever the
                 answer, until it is killed
    git_lock, git_gone, git_readonly
                 solves the task, then breaks the workspace's git (leaves index.lock, removes .git,
                 makes .git read-only) and exits 0
    anything else: calls the model once and exits 1 on an HTTP error (what a hostile endpoint gets)

"Solves" writes SOLUTION (set in the environment) to calc/__init__.py, the toy task's change.
"""

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

BASE = os.environ["OPENAI_BASE_URL"]
HEADERS = {"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "Content-Type": "application/json"}


def model_name():
    request = urllib.request.Request(BASE + "/models", headers=HEADERS)
    for attempt in range(3):  # what it does next is the fault under test, not this first call
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return json.load(reply)["data"][0]["id"]
        except OSError:  # a connection reset on the way (seen once under load), a timeout
            if attempt == 2:
                raise
            time.sleep(1)


def ask():
    body = json.dumps({"model": "any", "messages": [{"role": "user", "content": os.environ["EVALKIT_PROMPT"]}]})
    request = urllib.request.Request(BASE + "/chat/completions", data=body.encode(), headers=HEADERS)
    try:
        with urllib.request.urlopen(request, timeout=120) as reply:
            return json.load(reply)["choices"][0]["message"]
    except urllib.error.HTTPError as exc:
        print(f"model error {exc.code}: {exc.read().decode()[:300]}", file=sys.stderr)
        sys.exit(1)


def solve():
    with open("calc/__init__.py", "w") as f:
        f.write(os.environ["SOLUTION"])


def daemon(script, **streams):
    subprocess.Popen(["sh", "-c", script], start_new_session=True, **streams)  # setsid: not in our group


name = model_name()
if name == "hang":
    time.sleep(10**6)
elif name == "flood":
    chunk = "x" * 1023 + "\n"
    for _ in range(250 * 1024):
        sys.stdout.write(chunk)
    for _ in range(50 * 1024):
        sys.stderr.write(chunk)
    solve()
elif name == "fork":
    daemon("while :; do echo junk-from-a-daemon; sleep 0.002; done")  # keeps the shell's stdout
    daemon("sleep 1; while :; do date >> late.txt; sleep 0.01; done", stdout=subprocess.DEVNULL)
    daemon("sleep 1000", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    solve()
elif name == "crash_early":
    print("configuring", flush=True)
    print("fatal: no provider configured", file=sys.stderr)
    sys.exit(3)
elif name == "crash_late":
    print("reply:", ask().get("content"), flush=True)
    print("Traceback (most recent call last):\nKeyError: 'tool_calls'", file=sys.stderr)
    sys.exit(4)
elif name == "spam":
    ask()
    for n in range(10**6):
        junk = json.dumps({"model": "any", "messages": [{"role": "user", "content": f"{n}" + "x" * 2**20}]})
        with contextlib.suppress(OSError):  # HTTP errors, and a connection the relay dropped
            urllib.request.urlopen(urllib.request.Request(BASE + "/chat/completions", data=junk.encode(),
                                                          headers=HEADERS), timeout=30).read()
elif name.startswith("git_"):
    solve()
    breaking = {"git_lock": "touch .git/index.lock", "git_gone": "rm -rf .git", "git_readonly": "chmod -R a-w .git"}
    subprocess.run(["sh", "-c", breaking[name]], check=True)
elif name == "slow":
    time.sleep(4)
    solve()
else:
    print("reply:", ask().get("content"))
