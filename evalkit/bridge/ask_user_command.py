"""`ask-user QUESTION`: the command through which an agent in a sandbox asks the attempt's simulated
user (installed at /usr/local/bin/ask-user only when the attempt has one).

It posts the question to the run's model proxy under the attempt's own token and prints the answer.
Standard library only, and no import of evalkit: it runs under any python3 the task image has.
The question is the arguments joined by spaces, or standard input when there are none. Exit 0 with
the answer on stdout; 1 with the reason on stderr when no answer came back.
"""

import json
import os
import sys
import urllib.error
import urllib.request

TIMEOUT_S = 300  # a model user may take its time; the attempt's own wall time still kills this


def main() -> int:
    question = " ".join(sys.argv[1:]).strip() or sys.stdin.read().strip()
    url, token = os.environ.get("EVALKIT_USER_URL"), os.environ.get("EVALKIT_USER_TOKEN")
    if not question:
        print('usage: ask-user "your question"', file=sys.stderr)
        return 1
    if not url or not token:
        print("ask-user: nobody to ask in this attempt (EVALKIT_USER_URL is not set)", file=sys.stderr)
        return 1
    request = urllib.request.Request(
        url,
        data=json.dumps({"question": question}).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as reply:
            print(json.loads(reply.read())["answer"])
            return 0
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read())["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = f"HTTP {exc.code}"
        print(f"ask-user: {message}", file=sys.stderr)
    except (OSError, ValueError, KeyError) as exc:
        print(f"ask-user: no answer ({exc})", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
